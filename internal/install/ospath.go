package install

import (
	"path"
	"strings"
)

// osPath handles paths of the target OS, which need not be the OS the code
// runs on: tests compute macOS and Windows paths on Linux.
type osPath string

func (p osPath) windows() bool { return p == "windows" }

// join joins path elements with the target OS's separator.
func (p osPath) join(elem ...string) string {
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

// dir returns all but the last element of a path.
func (p osPath) dir(name string) string {
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

// isAbs reports whether a path is absolute on the target OS.
func (p osPath) isAbs(name string) bool {
	if !p.windows() {
		return path.IsAbs(name)
	}
	if strings.HasPrefix(name, `\\`) {
		return true
	}
	return len(name) >= 3 && name[1] == ':' && (name[2] == '\\' || name[2] == '/') &&
		(name[0]|0x20 >= 'a' && name[0]|0x20 <= 'z')
}

// sep is the path separator.
func (p osPath) sep() string {
	if p.windows() {
		return `\`
	}
	return "/"
}

// listSep is the separator of $PATH.
func (p osPath) listSep() string {
	if p.windows() {
		return ";"
	}
	return ":"
}
