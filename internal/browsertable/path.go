package browsertable

import (
	"path"
	"strings"
)

// Path handles the paths of one OS, named by its column of the table
// ("linux", "darwin" or "windows"), which need not be the OS the code runs
// on: tests compute macOS and Windows paths on Linux.
type Path string

func (p Path) windows() bool { return p == "windows" }

// Join joins path elements with the target OS's separator.
func (p Path) Join(elem ...string) string {
	if !p.windows() {
		return path.Join(elem...)
	}
	var parts []string
	for _, e := range elem {
		if e = strings.ReplaceAll(e, "/", `\`); e != "" {
			parts = append(parts, e)
		}
	}
	j := strings.Join(parts, `\`)
	unc := strings.HasPrefix(j, `\\`)
	for strings.Contains(j, `\\`) {
		j = strings.ReplaceAll(j, `\\`, `\`)
	}
	if unc {
		j = `\` + j
	}
	return strings.TrimSuffix(j, `\`)
}

// Dir returns all but the last element of a path.
func (p Path) Dir(name string) string {
	if !p.windows() {
		return path.Dir(name)
	}
	i := strings.LastIndex(name, `\`)
	if i < 0 {
		return "."
	}
	if i == 2 && name[1] == ':' {
		return name[:3]
	}
	return name[:i]
}

// IsAbs reports whether a path is absolute on the target OS.
func (p Path) IsAbs(name string) bool {
	if !p.windows() {
		return path.IsAbs(name)
	}
	if strings.HasPrefix(name, `\\`) {
		return true
	}
	return len(name) >= 3 && name[1] == ':' && (name[2] == '\\' || name[2] == '/') &&
		(name[0]|0x20 >= 'a' && name[0]|0x20 <= 'z')
}

// Sep is the path separator.
func (p Path) Sep() string {
	if p.windows() {
		return `\`
	}
	return "/"
}

// ListSep is the separator of $PATH.
func (p Path) ListSep() string {
	if p.windows() {
		return ";"
	}
	return ":"
}
