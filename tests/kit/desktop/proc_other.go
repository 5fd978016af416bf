//go:build unix && !linux

package desktop

import "syscall"

// sysProcAttr puts a program in a process group of its own.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
