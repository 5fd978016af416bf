package pinentry_test

import (
	"bytes"
	"testing"

	"github.com/fillgate/fillgate/internal/pinentry"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain text", "plain text"},
		{"100%", "100%25"},
		{"%0A", "%250A"},
		{"a\nb\r\nc", "a%0Ab%0D%0Ac"},
		{"tab\there", "tab%09here"},
		{"\x00\x1f\x7f", "%00%1F%7F"},
		{" leading space", "%20leading space"},
		{"inner space ", "inner space "},
		{"UTF-8 “quotes” é 🔑", "UTF-8 “quotes” é 🔑"},
		{"x\nOK\nBYE", "x%0AOK%0ABYE"},
	} {
		if got := pinentry.Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := string(pinentry.Unescape([]byte(pinentry.Escape(tc.in)))); got != tc.in {
			t.Errorf("Unescape(Escape(%q)) = %q", tc.in, got)
		}
	}
}

func TestUnescape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"abc", "abc"},
		{"%25", "%"},
		{"%0a%0D", "\n\r"},
		{"%", "%"},
		{"%4", "%4"},
		{"%zz", "%zz"},
		{"a%2", "a%2"},
		{"%%41", "%A"},
		{"%2541", "%41"},
	} {
		b := []byte(tc.in)
		got := pinentry.Unescape(b)
		if string(got) != tc.want {
			t.Errorf("Unescape(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if rest := b[len(got):]; !bytes.Equal(rest, make([]byte, len(rest))) {
			t.Errorf("Unescape(%q) left bytes after the result", tc.in)
		}
	}
}
