package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/internal/policy"
)

type policyCmd struct {
	Check   policyCheckCmd   `cmd:"" help:"Validate a policy file; errors name the line and column."`
	Show    policyShowCmd    `cmd:"" help:"Print the effective policy: every setting, defaults included."`
	Example policyExampleCmd `cmd:"" help:"Print an example policy file documenting every key."`
}

// policyPath is file, or the policy file fillgate reads.
func policyPath(a *app, file string) (string, error) {
	if file != "" {
		return file, nil
	}
	return dirs.PolicyFile(a.env)
}

type policyCheckCmd struct {
	File string `arg:"" optional:"" help:"The file to check. Default: the policy file fillgate reads." type:"path"`
}

func (c *policyCheckCmd) Run(a *app) error {
	path, err := policyPath(a, c.File)
	if err != nil {
		return err
	}
	report, ok := policy.Check(path)
	fmt.Fprint(a.stdout, report)
	if !ok {
		return exitCode(1)
	}
	return nil
}

type policyShowCmd struct {
	File string `arg:"" optional:"" help:"The file to show. Default: the policy file fillgate reads." type:"path"`
}

func (c *policyShowCmd) Run(a *app) error {
	path, err := policyPath(a, c.File)
	if err != nil {
		return err
	}
	p, err := policy.Load(path)
	if err != nil {
		fmt.Fprintf(a.stderr, "%v\n", err)
		return exitCode(1)
	}
	_, err = a.stdout.Write(p.Format())
	return err
}

type policyExampleCmd struct{}

func (policyExampleCmd) Run(a *app) error {
	_, err := a.stdout.Write(policy.Example())
	return err
}

type auditCmd struct {
	N    int  `short:"n" default:"20" help:"How many of the latest requests to show."`
	JSON bool `name:"json" help:"One JSON object per line."`
}

func (c *auditCmd) Run(a *app) error {
	dir, err := dirs.State(a.env)
	if err != nil {
		return err
	}
	entries, err := audit.Open(dir).Recent(c.N)
	if err != nil {
		return err
	}
	if c.JSON {
		for _, e := range entries {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s\n", b)
		}
		return nil
	}
	if len(entries) == 0 {
		fmt.Fprintln(a.stdout, "no requests yet")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tAGENT\tSERVICE\tORIGIN\tFIELD\tVIA\tSTATUS\tDETAIL")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Time.Local().Format(time.DateTime), printable(e.Agent.String()),
			printable(e.Service), printable(dash(e.Origin)), printable(dash(e.Field)), printable(dash(e.Via)),
			printable(string(e.Status)), printable(e.Detail))
	}
	return tw.Flush()
}

// printable replaces control and format characters (terminal escapes,
// bidi overrides) with U+FFFD: process names in the audit log come from the
// agent and must not drive the terminal.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type versionCmd struct{}

// Run prints the version, and the commit and its date when known: stamped
// into release builds, recorded by the Go toolchain in a checkout's build.
func (versionCmd) Run(a *app) error {
	fmt.Fprintf(a.stdout, "fillgate %s\n", manifest.Build())
	return nil
}
