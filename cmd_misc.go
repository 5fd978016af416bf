package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/fillgate/fillgate/host/audit"
	"github.com/fillgate/fillgate/host/dirs"
	"github.com/fillgate/fillgate/host/keychain"
	"github.com/fillgate/fillgate/policy"
)

type policyCmd struct {
	Check   policyCheckCmd   `cmd:"" help:"Validate a policy file; errors name the line."`
	Example policyExampleCmd `cmd:"" help:"Print an example policy file documenting every key."`
}

type policyCheckCmd struct {
	File string `arg:"" optional:"" help:"The file to check. Default: the policy file fillgate reads." type:"path"`
}

func (c *policyCheckCmd) Run(a *app) error {
	path := c.File
	if path == "" {
		p, err := dirs.PolicyFile(a.env)
		if err != nil {
			return err
		}
		path = p
	}
	report, ok := policy.Check(path)
	fmt.Fprint(a.stdout, report)
	if !ok {
		return exitCode(1)
	}
	return nil
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

type forgetCmd struct {
	Service string `required:"" help:"The service whose remembered secret to remove."`
}

func (c *forgetCmd) Run(a *app) error {
	svc, err := policy.NormalizeService(c.Service)
	if err != nil {
		return usageError{err}
	}
	removed, err := keychain.Forget(svc)
	if err != nil {
		return err
	}
	if removed {
		fmt.Fprintf(a.stdout, "removed the remembered secret for %s\n", svc)
	} else {
		fmt.Fprintf(a.stdout, "nothing remembered for %s\n", svc)
	}
	return nil
}
