package drivable

import (
	"os"
	"strconv"
)

// processDir is process pid's working directory, or "" when it cannot be
// read.
func processDir(pid int) string {
	d, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	if err != nil {
		return ""
	}
	return d
}
