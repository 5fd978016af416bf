//go:build !windows

package install

import (
	"io/fs"
	"syscall"
)

// owner returns the uid owning a file, when the filesystem tells.
func owner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
