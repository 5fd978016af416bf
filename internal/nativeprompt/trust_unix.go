//go:build unix

package nativeprompt

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// executable reports whether a file's mode lets someone run it.
func executable(fi fs.FileInfo) bool {
	return fi.Mode()&0o111 != 0
}

// trusted reports (nil) whether only root can change the program: the
// file resolved and every directory above it, and above the link found
// in a search, are owned by root and writable by nobody else. A program
// the person's own account can replace, the agent running as that person
// could replace too (a fake that approves everything).
func trusted(link, resolved string) error {
	if err := rootOnly(resolved); err != nil {
		return err
	}
	for _, p := range []string{filepath.Dir(resolved), filepath.Dir(link)} {
		for {
			if err := rootOnly(p); err != nil {
				return err
			}
			parent := filepath.Dir(p)
			if parent == p {
				break
			}
			p = parent
		}
	}
	return nil
}

// rootOnly reports whether p is owned by root and not writable by its
// group or others.
func rootOnly(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return fmt.Errorf("%s: cannot tell its owner", p)
	case st.Uid != 0:
		return fmt.Errorf("%s is owned by uid %d, not root", p, st.Uid)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s is writable by others than root", p)
	}
	return nil
}

// findTrusted returns the first names[i] in dirs (in that order of
// preference: every dir for a name, then the next name) that resolves to
// an executable file whose resolved name usable accepts and that trusted
// holds for, or "".
func findTrusted(dirs, names []string, usable func(base string) bool, trusted func(link, resolved string) error) string {
	for _, n := range names {
		for _, d := range dirs {
			p := filepath.Join(d, n)
			resolved, err := filepath.EvalSymlinks(p)
			if err != nil || !usable(filepath.Base(resolved)) || isTerminal(filepath.Base(resolved)) {
				continue
			}
			fi, err := os.Stat(resolved)
			if err != nil || !fi.Mode().IsRegular() || !executable(fi) || trusted(p, resolved) != nil {
				continue
			}
			return resolved
		}
	}
	return ""
}
