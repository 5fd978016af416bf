//go:build !windows

package drivable

import "github.com/fillgate/fillgate/internal/procinfo"

// osArgs reads process pid's command line, argv[0] first.
func osArgs(pid int) ([]string, error) { return procinfo.Args(pid) }
