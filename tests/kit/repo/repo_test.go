package repo

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPathFindsTheRoot(t *testing.T) {
	got := Path("tests/kit/repo/repo.go")
	if _, err := os.Stat(got); err != nil {
		t.Fatalf("Path gave %s: %v", got, err)
	}
	wd, _ := os.Getwd()
	if want, _ := filepath.Abs(filepath.Join(wd, "..", "..", "..")); filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(got)))) != want {
		t.Errorf("Path gave %s; want it under %s", got, want)
	}
}

func TestRootNeedsTheModulesGoMod(t *testing.T) {
	dir := t.TempDir()
	// A go.mod of another module does not count.
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/other\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if root, err := Root(); err == nil {
		t.Fatalf("Root = %s outside the repository; want an error", root)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module \"github.com/fillgate/fillgate\"\n\ngo 1.26\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if root, err := Root(); err != nil || root != dir {
		t.Fatalf("Root = %q, %v; want %s", root, err, dir)
	}
}
