//go:build !windows

package dirs

import (
	"fmt"
	"os"
	"syscall"
)

func checkPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link; fillgate needs a real directory there: remove the link", dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory: remove it", dir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is owned by uid %d, not by you (uid %d): remove it", dir, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s has mode %04o; it must be 0700: run chmod 700 %s", dir, fi.Mode().Perm(), dir)
	}
	return nil
}
