//go:build !windows

package policy

// sameExe reports whether the agent executable exe is the path a rule
// names. Paths compare exactly: rule paths are clean and absolute, and the
// agent socket reports the kernel's path of the executable.
func sameExe(rule, exe string) bool {
	return exe != "" && rule == exe
}
