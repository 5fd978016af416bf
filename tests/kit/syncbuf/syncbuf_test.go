package syncbuf

import (
	"sync"
	"testing"
)

func TestBuffer(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("ab"))
				_ = b.Bytes()
			}
		})
	}
	wg.Wait()
	if n := len(b.Bytes()); n != 800 {
		t.Fatalf("%d bytes written, want 800", n)
	}
	var l Buffer
	l.Logf("a %d", 1)
	l.Logf("b")
	if got := l.String(); got != "a 1\nb\n" {
		t.Fatalf("Logf wrote %q", got)
	}
	got := l.Bytes()
	got[0] = 'x'
	if l.String()[0] != 'a' {
		t.Fatal("Bytes is not a copy")
	}
}
