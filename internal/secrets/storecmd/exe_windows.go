package storecmd

import (
	"io/fs"
	"strings"
)

// exeSuffixes are the endings PATHEXT names (.exe, .cmd, …).
func exeSuffixes(get func(string) string) []string {
	exts := strings.Split(strings.ToLower(get("PATHEXT")), ";")
	if get("PATHEXT") == "" {
		exts = []string{".com", ".exe", ".bat", ".cmd"}
	}
	return exts
}

// executableMode: on Windows the ending decides.
func executableMode(fs.FileInfo) bool { return true }
