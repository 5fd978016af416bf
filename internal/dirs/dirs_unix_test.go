//go:build !windows

package dirs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsure(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "a", "fillgate")
	if err := Ensure(d); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %o", fi.Mode().Perm())
	}

	loose := filepath.Join(root, "loose")
	if err := os.Mkdir(loose, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(loose, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Ensure(loose); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		t.Errorf("loose dir: %v", err)
	}

	// A link planted where the directory should be is refused, even when
	// it points at a private directory.
	link := filepath.Join(root, "link")
	if err := os.Symlink(d, link); err != nil {
		t.Fatal(err)
	}
	if err := Ensure(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("symlink: %v", err)
	}
}

func TestDirsFollowXDG(t *testing.T) {
	env := func(k string) string {
		return map[string]string{"XDG_RUNTIME_DIR": "/run/user/7", "XDG_STATE_HOME": "/s", "XDG_CONFIG_HOME": "/c",
			"XDG_DATA_HOME": "/d", "HOME": "/home/u"}[k]
	}
	for _, c := range []struct {
		f    func(Env) (string, error)
		want string
	}{{Runtime, "/run/user/7/fillgate"}, {State, "/s/fillgate"}, {Config, "/c/fillgate"}, {Data, "/d/fillgate"}, {PolicyFile, "/c/fillgate/policy"}} {
		if got, err := c.f(env); err != nil || got != c.want {
			t.Errorf("got %q %v, want %q", got, err, c.want)
		}
	}
}
