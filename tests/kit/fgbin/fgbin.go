// Package fgbin builds the fillgate binary of this module for a test
// package that runs it as a user or a browser would.
package fgbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Main is a TestMain body: it builds fillgate into a temporary directory,
// sets *bin to its path, runs the tests and removes the directory. It
// returns the exit code; name prefixes its messages and the directory.
func Main(m *testing.M, name string, bin *string) int {
	dir, err := os.MkdirTemp("", "fillgate-"+name+"-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: temp dir: %v\n", name, err)
		return 1
	}
	defer os.RemoveAll(dir)
	*bin = filepath.Join(dir, "fillgate")
	// The package path works from any directory inside the module.
	build := exec.Command("go", "build", "-o", *bin, "github.com/fillgate/fillgate")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: build fillgate: %v\n", name, err)
		return 1
	}
	return m.Run()
}
