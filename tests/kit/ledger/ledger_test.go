package ledger

import (
	"fmt"
	"strings"
	"testing"
)

func TestWithheldAndTail(t *testing.T) {
	var l Ledger
	s := l.Secret(t)
	masked := []byte(`{"value":"` + strings.Repeat("•", len(s)) + `"}`)
	for _, b := range [][]byte{append([]byte("said "), s...), masked} {
		if got := l.Withheld(b); got != withheld {
			t.Errorf("Withheld of what holds a secret = %.20q…; want the placeholder", got)
		}
		if got := l.Tail(b); got != withheld {
			t.Errorf("Tail of what holds a secret = %.20q…; want the placeholder", got)
		}
	}
	if got := l.Withheld([]byte("plain")); got != `"plain"` {
		t.Errorf("Withheld(plain) = %s", got)
	}
	if got := l.Tail([]byte(strings.Repeat("x", 7000))); len(got) != 6000 {
		t.Errorf("Tail kept %d bytes; want 6000", len(got))
	}
}

func TestCode(t *testing.T) {
	var l Ledger
	c := l.Code(t)
	if len(c) != 6 || strings.Trim(string(c), "0123456789") != "" {
		t.Errorf("Code is not six digits")
	}
	if got := l.Secrets(); len(got) != 1 {
		t.Errorf("the ledger keeps %d secrets; want the code", len(got))
	}
}

// recorder is a testing.TB that records errors instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestScanFindsWhatWasKept(t *testing.T) {
	var l Ledger
	s := l.Secret(t)
	l.Keep(append([]byte("out: "), s...))
	rec := &recorder{TB: t}
	l.Scan(rec, t.TempDir(), map[string][]byte{"the browser's output": []byte("nothing")})
	var kept, few bool
	for _, e := range rec.errs {
		kept = kept || strings.Contains(e, "fillgate's output")
		few = few || strings.Contains(e, "read only 0 files")
	}
	if !kept || !few {
		t.Errorf("the scan said %d things, not the kept output's secret and the empty root", len(rec.errs))
	}
	for _, b := range s {
		if b != 0 {
			t.Fatal("the scan left the secret in memory")
		}
	}
}
