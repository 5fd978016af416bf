// Package repo finds files of this repository from a test, whatever the
// test's working directory inside it, and whether or not the binary was
// built with -trimpath (tests/run builds with it, so that a fresh clone
// at a new path reuses the build cache; runtime.Caller then gives module
// paths, not directories).
package repo

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// module is the path go.mod names at the repository's root.
const module = "github.com/fillgate/fillgate"

// Root returns the repository's root: the nearest directory, from the
// working directory up, whose go.mod declares this module.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("repo: working directory: %w", err)
	}
	for {
		if declares(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("repo: no go.mod of " + module + " above the working directory (run the tests from inside the repository)")
		}
		dir = up
	}
}

// Path returns the repository file or directory at the slash-separated
// path rel, and panics (naming the cause) when the root cannot be found:
// callers are tests and test kits, which cannot go on without it.
func Path(rel string) string {
	root, err := Root()
	if err != nil {
		panic(err)
	}
	return filepath.Join(root, filepath.FromSlash(rel))
}

// declares reports whether the go.mod file at path declares module.
func declares(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); strings.HasPrefix(line, "module ") {
			return strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "module ")), `"`) == module
		}
	}
	return false
}
