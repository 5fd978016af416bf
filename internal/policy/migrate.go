package policy

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// Migrate converts a policy file in the old line format to TOML, line by
// line, so that comments and layout stay where the person put them: a
// `key = value` line gets a TOML value (a string, or a list for the list
// keys), a `[service HOST]` header becomes `[service."HOST"]`, and every
// comment and blank line is kept. The result says exactly what the old
// file said: Migrate checks that Parse reads it to the same policy as
// ParseLegacy read the old one. A file with problems is not converted; the
// error is ParseLegacy's. name is used in messages.
func Migrate(name string, old []byte) ([]byte, error) {
	want, err := ParseLegacy(name, old)
	if err != nil {
		return nil, err
	}
	old = bytes.TrimPrefix(old, []byte("\ufeff"))
	lines := bytes.Split(old, []byte("\n"))
	out := make([]string, len(lines))
	for i, raw := range lines {
		out[i] = migrateLine(string(raw))
	}
	// A carriage return ends a line only before a newline in TOML.
	converted := []byte(strings.TrimRight(strings.Join(out, "\n"), "\r"))
	got, err := Parse(name+" (converted)", converted)
	if err != nil || !reflect.DeepEqual(got, want) {
		return nil, fmt.Errorf("converting %s went wrong (please report this): the TOML does not say the same: %v", name, err)
	}
	return converted, nil
}

// migrateLine converts one line of a valid old-format file.
func migrateLine(raw string) string {
	line, cr := strings.CutSuffix(raw, "\r")
	content := stripComment(line)
	// TOML allows no control characters but tab in a comment; the old
	// format did.
	comment := strings.Map(func(r rune) rune {
		if r < ' ' && r != '\t' || r == 0x7f {
			return '\uFFFD'
		}
		return r
	}, line[len(content):])
	trimmed := strings.Trim(content, " \t")
	indent := content[:len(content)-len(strings.TrimLeft(content, " \t"))]
	var conv string
	switch {
	case trimmed == "" && cr:
		return content + comment + "\r"
	case trimmed == "":
		return content + comment
	case strings.HasPrefix(trimmed, "["):
		inner := strings.TrimSuffix(trimmed[1:], "]")
		conv = "[service." + tomlString(strings.Fields(inner)[1]) + "]"
	default:
		key, value, _ := strings.Cut(trimmed, "=")
		key, value = strings.Trim(key, " \t"), strings.Trim(value, " \t")
		conv = key + " = " + migrateValue(key, value)
	}
	if comment != "" {
		// The old format needs a space before a trailing comment, TOML
		// does not; keep the space the line had.
		gap := content[len(strings.TrimRight(content, " \t")):]
		conv += cmp.Or(gap, " ") + comment
	}
	if cr {
		conv += "\r"
	}
	return indent + conv
}

// migrateValue writes an old-format value of key as a TOML value.
func migrateValue(key, value string) string {
	switch key {
	case keyCDPAllowHosts, keyFrameAncestors, keyAgents, keyFields, keyAllowVia:
		var items []string
		for _, it := range strings.Split(value, ",") {
			items = append(items, strings.Trim(it, " \t"))
		}
		return tomlList(items)
	case keyRateLimit:
		n, w, _ := strings.Cut(value, "/")
		return tomlString(strings.Trim(n, " \t") + "/" + strings.Trim(w, " \t"))
	}
	return tomlString(value)
}

// MigrateResult says what MigrateFile did.
type MigrateResult struct {
	// Converted is false when the file was already TOML (or missing), and
	// nothing was written.
	Converted bool
	// Backup is where the old file now is.
	Backup string
}

// MigrateFile converts the policy file at path from the old line format to
// TOML in place. It first copies the old file to path.bak (path.bak.2, …
// when that exists), with the file's own permissions, then replaces the
// file atomically. A file that already parses as TOML, or a missing file,
// is left alone. A file with problems is not touched; the error lists
// them.
func MigrateFile(path string) (MigrateResult, error) {
	old, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return MigrateResult{}, nil
	}
	if err != nil {
		return MigrateResult{}, err
	}
	if _, err := Parse(path, old); err == nil || !errors.Is(err, ErrOldFormat) {
		if err != nil {
			return MigrateResult{}, fmt.Errorf("%s is not in the old line format, and not valid TOML either:\n%w", path, err)
		}
		return MigrateResult{}, nil
	}
	converted, err := Migrate(path, old)
	if err != nil {
		return MigrateResult{}, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return MigrateResult{}, fmt.Errorf("migrate policy: %w", err)
	}
	mode := fi.Mode().Perm() &^ 0o022
	backup, err := writeBackup(path, old, mode)
	if err != nil {
		return MigrateResult{}, err
	}
	header := fmt.Sprintf("# Converted from fillgate's old policy format by `fillgate policy migrate`;\n# the old file is %s. `fillgate policy example` documents every key.\n\n", filepath.Base(backup))
	if err := writeAtomic(path, append([]byte(header), converted...), mode); err != nil {
		return MigrateResult{}, err
	}
	return MigrateResult{Converted: true, Backup: backup}, nil
}

// writeBackup writes data to the first free name of path.bak, path.bak.2,
// … and returns it.
func writeBackup(path string, data []byte, mode fs.FileMode) (string, error) {
	for n := 1; n < 100; n++ {
		name := path + ".bak"
		if n > 1 {
			name += "." + strconv.Itoa(n)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("back up the policy file: %w", err)
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(name)
			return "", fmt.Errorf("back up the policy file: %w", err)
		}
		return name, nil
	}
	return "", fmt.Errorf("back up the policy file: %s.bak … %s.bak.99 all exist; remove some", path, path)
}

// writeAtomic replaces path with data through a temp file in its dir.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write the policy file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // fails harmlessly after the rename
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("write the policy file: %w", err)
	}
	return nil
}
