package dirs

import (
	"fmt"
	"os"
	"path/filepath"
)

// maxSocketDir keeps <dir>/hosts/<pid>.sock under macOS's 104-byte sun_path.
const maxSocketDir = 104 - len("/hosts/4294967295.sock") - 1

func runtimeDir(env Env) (string, error) {
	if d := env("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "fillgate"), nil
	}
	if d := env("TMPDIR"); d != "" {
		if p := filepath.Join(d, "fillgate"); len(p) <= maxSocketDir {
			return p, nil
		}
	}
	return filepath.Join("/tmp", fmt.Sprintf("fillgate-%d", os.Getuid())), nil
}

func stateDir(env Env) (string, error) {
	h, err := home(env)
	return filepath.Join(h, "Library", "Application Support", "fillgate", "state"), err
}

func configDir(env Env) (string, error) {
	h, err := home(env)
	return filepath.Join(h, "Library", "Application Support", "fillgate"), err
}

func dataDir(env Env) (string, error) {
	h, err := home(env)
	return filepath.Join(h, "Library", "Application Support", "fillgate"), err
}
