package nativemsg

import (
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"
)

var jsonStringCases = []string{
	"",
	"plain",
	`quote" and backslash\`,
	"tab\tnewline\ncr\r",
	"\x00\x01\x1f\x7f",
	"<script>&amp;</script>",
	"é ü ß 日本 🙂",
	"line\u2028para\u2029end",
	"\ufffd is a real replacement character",
	"/slash/",
}

func TestAppendJSONStringRoundTrips(t *testing.T) {
	for i, s := range jsonStringCases {
		v := []byte(s)
		n, err := JSONStringLen(v)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		out, err := AppendJSONString([]byte("x:"), v)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if len(out)-2 != n {
			t.Errorf("case %d: JSONStringLen disagrees with what was appended", i)
		}
		var back string
		if err := json.Unmarshal(out[2:], &back); err != nil {
			t.Fatalf("case %d: output is not a JSON string: %v", i, err)
		}
		if back != s {
			t.Errorf("case %d: value differed after a round trip", i)
		}
	}
}

func TestAppendJSONStringEscapesLineSeparators(t *testing.T) {
	out, err := AppendJSONString(nil, []byte("a\u2028b\u2029c"))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `"a\u2028b\u2029c"` {
		t.Fatalf("got %s", out)
	}
}

func TestAppendJSONStringRefusesInvalidUTF8(t *testing.T) {
	dst := []byte("prefix")
	for _, bad := range [][]byte{{0xff}, {'a', 0xc3}, {0xed, 0xa0, 0x80}} {
		if _, err := JSONStringLen(bad); !errors.Is(err, ErrNotUTF8) {
			t.Fatalf("JSONStringLen: got %v, want ErrNotUTF8", err)
		}
		out, err := AppendJSONString(dst, bad)
		if !errors.Is(err, ErrNotUTF8) {
			t.Fatalf("got %v, want ErrNotUTF8", err)
		}
		if string(out) != "prefix" {
			t.Fatal("dst changed on error")
		}
	}
}

func TestAppendJSONStringDoesNotReallocateWhenSized(t *testing.T) {
	v := []byte("secret-ish \"value\"\n")
	n, err := JSONStringLen(v)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 0, 3+n+1)
	dst = append(dst, `{"v`...)
	out, err := AppendJSONString(dst, v)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, '}')
	if &out[0] != &dst[0] {
		t.Fatal("a correctly sized buffer was reallocated")
	}

	// Too small: grown once, before any of v is copied into the old buffer.
	small := make([]byte, 1, 4)
	small[0] = '['
	grown, err := AppendJSONString(small, v)
	if err != nil {
		t.Fatal(err)
	}
	if &grown[0] == &small[0] {
		t.Fatal("expected a new buffer")
	}
	if !allZero(small[1:cap(small)]) {
		t.Fatal("part of the value was written into the abandoned buffer")
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStringCases {
		f.Add([]byte(s))
	}
	f.Add([]byte{0xff, 0xfe})
	f.Fuzz(func(t *testing.T, v []byte) {
		out, err := AppendJSONString(nil, v)
		if !utf8.Valid(v) {
			if !errors.Is(err, ErrNotUTF8) {
				t.Fatalf("invalid UTF-8 accepted: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("not a JSON string: %v", err)
		}
		if back != string(v) {
			t.Fatal("value differed after a round trip")
		}
		if n, _ := JSONStringLen(v); n != len(out) {
			t.Fatal("JSONStringLen disagrees")
		}
	})
}
