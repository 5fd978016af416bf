package pinentry_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/fillgate/fillgate/internal/pinentry"
)

// FuzzReadResponse feeds arbitrary bytes to the client as pinentry's
// side of a session (greeting, a GETPIN, a CONFIRM): it must not panic
// or hang, must return a value only with a nil error and never more than
// MaxSecret bytes, and must leave nothing in its line buffer after a
// call but the lines it has not handled yet.
func FuzzReadResponse(f *testing.F) {
	for _, s := range []string{
		"OK Pleased to meet you\nD secret\nOK\nOK\n",
		"OK\nD a%25b%0Ac%0D\nD more\nOK\nERR 83886194 Not confirmed <Pinentry>\n",
		"OK\nS PROGRESS\n# comment\nERR 83886179 Operation cancelled <Pinentry>\nERR 83886142 Timeout\n",
		"OK\nINQUIRE QUALITY x\nERR 99 cancelled\nOK\n",
		"OK\nD %\nD %4\nD %zz\nOK\nD x\nOK\n",
		"OK\r\nD x\r\nOK\r\nOK\r\n",
		"ERR 1 no\n",
		"OK\nD " + strings.Repeat("x", 1200) + "\nOK\n",
		"OK\nDx\nOKAY\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, oneByte bool) {
		var r io.Reader = bytes.NewReader(data)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		c := pinentry.NewConn(r, io.Discard, nil)
		ctx := context.Background()
		if err := c.Greet(ctx); err != nil {
			if !pinentry.Clean(c) {
				t.Fatal("line buffer not zeroed after Greet")
			}
			return
		}
		pin, err := c.GetPIN(ctx, pinentry.Dialog{Title: "t"})
		if err != nil && pin != nil {
			t.Fatal("GetPIN returned a value with an error")
		}
		if err == nil && (pin == nil || len(pin) > pinentry.MaxSecret) {
			t.Fatal("GetPIN returned no value, or too long a value, with no error")
		}
		if !pinentry.Clean(c) {
			t.Fatal("line buffer not zeroed after GetPIN")
		}
		_ = c.Confirm(ctx, pinentry.Dialog{NotOK: "n"})
		if !pinentry.Clean(c) {
			t.Fatal("line buffer not zeroed after Confirm")
		}
	})
}

// FuzzEscape: escaping round-trips, and the escaped text has no byte
// that could end or split an Assuan line.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "%0A", "a\nOK\nBYE", " lead", "\x00\x7f\r", "“utf-8” 🔑", "%%25"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := pinentry.AppendEscaped(nil, s)
		for _, c := range e {
			if c < 0x20 || c == 0x7f {
				t.Fatalf("escaped %q holds a control byte", s)
			}
		}
		if len(e) > 0 && e[0] == ' ' {
			t.Fatalf("escaped %q starts with a space", s)
		}
		if got := pinentry.Unescape(e); string(got) != s {
			t.Fatalf("Unescape(Escape(%q)) = %q", s, got)
		}
	})
}
