package policy

import (
	"errors"
	"fmt"
	"strings"
)

// ErrOldFormat is what a *ParseError for a policy file in the old line
// format of fillgate 0.1.0 wraps: fillgate no longer reads it, and the
// person rewrites it in TOML.
var ErrOldFormat = errors.New("a policy file in the old line format")

// Problem is one problem in a policy file.
type Problem struct {
	File    string // the name given to Parse
	Line    int    // 1-based line number
	Column  int    // 1-based column, 0 when the problem is about the whole line
	Message string // what is wrong and what would be valid
}

// String renders the problem as "file:line:column: message" (or
// "file:line: message" without a column).
func (p Problem) String() string {
	if p.Column > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Column, p.Message)
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
}

// ParseError is every problem Parse found, in file order.
type ParseError struct {
	Problems []Problem
	// oldFormat is set when the file is in the old line format.
	oldFormat bool
}

// Error lists the problems, one "file:line:column: message" per line.
func (e *ParseError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns ErrOldFormat for a file in the old line format.
func (e *ParseError) Unwrap() error {
	if e.oldFormat {
		return ErrOldFormat
	}
	return nil
}
