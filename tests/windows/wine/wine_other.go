//go:build !windows

package wine

// Running is false off Windows: Wine runs Windows programs only.
func Running() bool { return false }
