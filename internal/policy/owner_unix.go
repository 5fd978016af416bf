//go:build !windows

package policy

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkOwner refuses a policy file that other users may write to, or that
// belongs to someone other than this user or root.
func checkOwner(path string, fi fs.FileInfo) error {
	if fi.Mode().Perm()&0o002 != 0 {
		return fmt.Errorf("policy %s may be changed by any user; run: chmod o-w %s", path, path)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := int(st.Uid); uid != os.Getuid() && uid != 0 {
		return fmt.Errorf("policy %s belongs to uid %d, not to you (uid %d) or root", path, uid, os.Getuid())
	}
	return nil
}
