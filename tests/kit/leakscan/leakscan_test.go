package leakscan

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// recorder captures failures so the scanner itself can be tested.
type recorder struct {
	testing.TB
	errs int
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(string, ...any)     { r.errs++ }
func (r *recorder) Fatalf(f string, a ...any) { r.TB.Fatalf(f, a...) }

func TestFindsEveryEncoding(t *testing.T) {
	s := NewSecret(t)
	for i, f := range forms(s) {
		data := append(append([]byte("before "), f...), " after"...)
		if !Contains(data, s) {
			t.Errorf("form %d not found", i)
		}
	}
	if Contains([]byte("nothing here"), s) {
		t.Error("false positive")
	}
}

func TestDirsReportsLeakingFile(t *testing.T) {
	s := NewSecret(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o700); err != nil {
		t.Fatal(err)
	}
	clean := filepath.Join(dir, "a", "clean")
	dirty := filepath.Join(dir, "a", "b", "dirty")
	if err := os.WriteFile(clean, []byte("ok"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dirty, []byte("x"+hex.EncodeToString(s)), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	if n := Dirs(r, s, dir); n != 2 {
		t.Errorf("read %d files, want 2", n)
	}
	if r.errs != 1 {
		t.Errorf("reported %d leaks, want 1", r.errs)
	}
}

func TestMaskedLength(t *testing.T) {
	s := []byte("abcdef")
	for _, c := range []struct {
		data string
		want bool
	}{
		{`textbox value="••••••"`, true},
		{`value="******" x`, true},
		{`value="•••••"`, false},   // shorter
		{`value="•••••••"`, false}, // longer
		{`a ••• b ••••••`, true},
		{`nothing`, false},
	} {
		if got := MaskedLength([]byte(c.data), s); got != c.want {
			t.Errorf("%q: %v, want %v", c.data, got, c.want)
		}
	}
	r := &recorder{TB: t}
	Agent(r, s, "a snapshot", []byte(`uid=1 textbox value="••••••"`))
	if r.errs != 1 {
		t.Errorf("Agent reported %d leaks, want 1", r.errs)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "page.yml"), []byte("- textbox: "+string(s)), 0o600); err != nil {
		t.Fatal(err)
	}
	r = &recorder{TB: t}
	if n := AgentDirs(r, s, dir, filepath.Join(dir, "missing")); n != 1 || r.errs != 1 {
		t.Errorf("AgentDirs read %d files and reported %d leaks, want 1 and 1", n, r.errs)
	}
}
