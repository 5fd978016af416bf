package policy

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// MaxFileSize is the largest policy file Load reads.
const MaxFileSize = 1 << 20

//go:embed example.toml
var example []byte

// Example returns the text of example.toml, which documents every key. It
// parses to the default policy plus two illustrative rules.
func Example() []byte {
	return append([]byte(nil), example...)
}

// Load reads and parses the policy file at path. A missing file is not an
// error: it returns Default(). A file other users may write to is refused,
// since the policy decides where secrets may go.
func Load(path string) (*Policy, error) {
	data, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// readFile reads a policy file after checking who may change it.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read policy %s: not a regular file", path)
	}
	if err := checkOwner(path, fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("read policy %s: larger than %d bytes", path, MaxFileSize)
	}
	return data, nil
}

// Check reads the policy file at path and reports on it for
// `fillgate policy check`: on success "ok" and the effective settings in
// the file's own syntax; otherwise every problem, one per line. ok is
// false when the file cannot be read or has problems.
func Check(path string) (report string, ok bool) {
	var b strings.Builder
	data, err := readFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(&b, "%s: no policy file; the defaults apply.\n", path)
		writeSettings(&b, Default())
		return b.String(), true
	case err != nil:
		fmt.Fprintf(&b, "%v\n", err)
		return b.String(), false
	}
	p, err := Parse(path, data)
	if err != nil {
		var pe *ParseError
		switch {
		case errors.Is(err, ErrOldFormat):
			fmt.Fprintf(&b, "%s: in the old line format:\n", path)
		case errors.As(err, &pe):
			fmt.Fprintf(&b, "%s: %d %s:\n", path, len(pe.Problems), plural(len(pe.Problems), "problem", "problems"))
		}
		fmt.Fprintf(&b, "%v\n", err)
		return b.String(), false
	}
	fmt.Fprintf(&b, "%s: ok\n", path)
	writeSettings(&b, p)
	return b.String(), true
}

// writeSettings writes the effective settings, indented.
func writeSettings(b *strings.Builder, p *Policy) {
	b.WriteString("Effective settings:\n")
	for _, l := range strings.Split(strings.TrimSuffix(string(p.Format()), "\n"), "\n") {
		if l == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString("  " + l + "\n")
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
