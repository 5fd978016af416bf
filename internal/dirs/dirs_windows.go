package dirs

import (
	"errors"
	"path/filepath"
)

func local(env Env) (string, error) {
	if d := env("LOCALAPPDATA"); d != "" {
		return filepath.Join(d, "fillgate"), nil
	}
	return "", errors.New("cannot tell the local app data directory: set LOCALAPPDATA")
}

func runtimeDir(env Env) (string, error) { return local(env) }

func stateDir(env Env) (string, error) {
	d, err := local(env)
	return filepath.Join(d, "state"), err
}

func configDir(env Env) (string, error) {
	if d := env("APPDATA"); d != "" {
		return filepath.Join(d, "fillgate"), nil
	}
	return local(env)
}

func dataDir(env Env) (string, error) { return local(env) }

// checkPrivate relies on %LOCALAPPDATA% being private to the user (its ACL
// is inherited); Go's MkdirAll modes do not apply on Windows.
func checkPrivate(dir string) error { return nil }
