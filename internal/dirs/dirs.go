// Package dirs says where fillgate keeps things on this OS: the runtime dir
// for the agent socket, the state dir for the audit log and cool-downs, the
// config dir for the policy file, and the data dir for the unpacked
// extension. Every function reads the environment it is given, so tests can
// point everything at temp dirs without touching process state.
package dirs

import (
	"errors"
	"os"
	"path/filepath"
)

// Env looks up an environment variable; os.Getenv fits.
type Env func(string) string

// Runtime is the directory holding the agent sockets.
func Runtime(env Env) (string, error) { return runtimeDir(env) }

// State is the directory holding the audit log, the host log and the
// cross-process state of the CDP path.
func State(env Env) (string, error) {
	if d := env("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "fillgate"), nil
	}
	return stateDir(env)
}

// Config is the directory holding the policy file.
func Config(env Env) (string, error) {
	if d := env("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "fillgate"), nil
	}
	return configDir(env)
}

// Data is the directory holding the unpacked extension.
func Data(env Env) (string, error) {
	if d := env("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "fillgate"), nil
	}
	return dataDir(env)
}

// PolicyFile is the default policy file path.
func PolicyFile(env Env) (string, error) {
	d, err := Config(env)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "policy"), nil
}

func home(env Env) (string, error) {
	h := env("HOME")
	if h == "" {
		h = env("USERPROFILE")
	}
	if h == "" {
		return "", errors.New("cannot tell the home directory: set HOME")
	}
	return h, nil
}

// Ensure creates dir (and parents) with mode 0700 and checks that the final
// directory is not open to other users.
func Ensure(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return checkPrivate(dir)
}
