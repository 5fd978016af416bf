package doctor

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Level is how a doctor check came out.
type Level string

// Levels. Only Fail makes the report's exit code non-zero.
const (
	OK   Level = "ok"
	Warn Level = "warn"
	Fail Level = "fail"
)

// Check is one line of a doctor report.
type Check struct {
	// Name is what was checked: "binary", "extension", a browser name,
	// "socket dir", "host", "keyring", "policy", "cdp".
	Name  string `json:"name"`
	Level Level  `json:"status"`
	// Detail says what was found.
	Detail string `json:"detail"`
	// Fix is the command or click that mends a warning or failure.
	Fix string `json:"fix,omitempty"`
}

// Report is every check Run ran, in order.
type Report struct {
	Checks []Check `json:"checks"`
}

func (d *Report) add(c Check) { d.Checks = append(d.Checks, c) }

// ExitCode is 0 when no check failed, 1 otherwise.
func (d *Report) ExitCode() int {
	for _, c := range d.Checks {
		if c.Level == Fail {
			return 1
		}
	}
	return 0
}

// JSON is the report as indented JSON.
func (d *Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode doctor report: %w", err)
	}
	return append(b, '\n'), nil
}

// Text is the report for people: one line per check, and under each
// warning or failure the fix.
func (d *Report) Text() string {
	var b strings.Builder
	fails, warns := 0, 0
	for _, c := range d.Checks {
		fmt.Fprintf(&b, "%-5s %-12s %s\n", c.Level, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(&b, "%-5s %-12s fix: %s\n", "", "", c.Fix)
		}
		switch c.Level {
		case Fail:
			fails++
		case Warn:
			warns++
		}
	}
	switch {
	case fails+warns == 0:
		b.WriteString("\nall ok\n")
	default:
		fmt.Fprintf(&b, "\n%d failed, %d warning(s)\n", fails, warns)
	}
	return b.String()
}
