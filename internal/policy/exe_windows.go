package policy

import (
	"path/filepath"
	"strings"
)

// sameExe reports whether the agent executable exe is the path a rule
// names. Windows paths compare without regard to case or separator style.
func sameExe(rule, exe string) bool {
	return exe != "" && strings.EqualFold(rule, filepath.Clean(exe))
}
