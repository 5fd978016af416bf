//go:build !windows && !darwin

package dirs

import (
	"fmt"
	"os"
	"path/filepath"
)

func runtimeDir(env Env) (string, error) {
	if d := env("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "fillgate"), nil
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("fillgate-%d", os.Getuid())), nil
}

func stateDir(env Env) (string, error) {
	h, err := home(env)
	return filepath.Join(h, ".local", "state", "fillgate"), err
}

func configDir(env Env) (string, error) {
	h, err := home(env)
	return filepath.Join(h, ".config", "fillgate"), err
}

func dataDir(env Env) (string, error) {
	h, err := home(env)
	return filepath.Join(h, ".local", "share", "fillgate"), err
}
