package policy

import (
	"path/filepath"
	"runtime"
	"strings"
)

// The policy tests and examples are written with Unix paths. On Windows
// (tests/windows runs these tests under Wine) a path that starts with "/"
// is not absolute, so osText and osPath give each one the drive Windows
// needs: /usr/bin/x is written C:/usr/bin/x in a policy file and read
// back as C:\usr\bin\x. Elsewhere both return what they are given.

// windowsDrive rewrites the Unix paths the tests use, wherever a policy
// text (TOML or the old format) or an expected message holds one.
var windowsDrive = strings.NewReplacer(
	`"/usr/`, `"C:/usr/`, `"/home/`, `"C:/home/`, `"/opt/`, `"C:/opt/`, `"/bin/`, `"C:/bin/`, `"/p.kdbx"`, `"C:/p.kdbx"`,
	`= /usr/`, `= C:/usr/`, `= /bin/`, `= C:/bin/`, `, /opt/`, `, C:/opt/`, `, /bin/`, `, C:/bin/`,
)

// osText is a policy text (or a message about one) with its Unix paths
// made absolute on this OS.
func osText(s string) string {
	if runtime.GOOS != "windows" {
		return s
	}
	return windowsDrive.Replace(s)
}

// osPath is the Unix path p as the policy reads it back on this OS:
// absolute and clean.
func osPath(p string) string {
	if runtime.GOOS != "windows" {
		return p
	}
	return filepath.Clean("C:" + p)
}

// osRaw is the Unix path p as written in osText, for a value the policy
// keeps as written (the pinentry program).
func osRaw(p string) string {
	if runtime.GOOS != "windows" {
		return p
	}
	return "C:" + p
}
