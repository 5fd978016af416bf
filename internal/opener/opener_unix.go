//go:build !windows

package opener

import (
	"errors"
	"os"
)

// runnable reports whether fi may be run as the opener: executable, and
// changeable by its owner only.
func runnable(fi os.FileInfo) (bool, error) {
	if fi.Mode().Perm()&0o111 == 0 {
		return false, nil
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return false, errors.New("writable by other users; fillgate will not run it")
	}
	return true, nil
}
