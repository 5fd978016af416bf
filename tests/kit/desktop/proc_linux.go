package desktop

import "syscall"

// sysProcAttr puts a program in a process group of its own that the
// kernel kills when the test process dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
