package secrets

import (
	"errors"
	"fmt"
	"testing"
)

func TestLines(t *testing.T) {
	for in, want := range map[string]string{"pw": "pw", "pw\n": "pw", "pw\r\nuser: a\n": "pw", "\nx": "", "": ""} {
		b := []byte(in)
		if got := FirstLine(b); string(got) != want {
			t.Errorf("FirstLine(%q) = %q; want %q", in, got, want)
		}
		for i := len(want); i < len(b); i++ {
			if b[i] != 0 {
				t.Errorf("FirstLine(%q) left the rest in memory", in)
				break
			}
		}
	}
	for in, want := range map[string]string{"123456\n": "123456", "pw\r\n": "pw", "pw": "pw", "a\n\n": "a\n", "": ""} {
		if got := TrimNewline([]byte(in)); string(got) != want {
			t.Errorf("TrimNewline(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestErrorKinds(t *testing.T) {
	e := &Error{Source: "bw", Kind: KindLocked, Detail: "the vault is locked", Fix: "run `bw unlock`"}
	wrapped := fmt.Errorf("fill: %w", e)
	if !errors.Is(wrapped, ErrLocked) || errors.Is(wrapped, ErrNotFound) {
		t.Fatal("errors.Is does not match on the kind")
	}
	if e.Error() != "bw: the vault is locked; run `bw unlock`" || e.FixHint() != "run `bw unlock`" {
		t.Fatalf("Error = %q", e.Error())
	}
}
