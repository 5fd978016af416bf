package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/policy"
)

type statusCmd struct {
	JSON   bool   `name:"json" help:"Print the hosts as one JSON array."`
	Socket string `help:"Ask the fillgate host on this socket (e.g. one forwarded with ssh -R) instead of the local ones." type:"path"`
}

func (statusCmd) Help() string {
	return `Lists every browser that runs fillgate's extension: the browser, its
profile, the host's pid, the extension's version, whether fills are paused,
for the active tab only, its origin and whether a login field is focused,
and where prompts for it open: in the browser, or, while a program can
drive the browser (remote debugging, an attached debugger, automation), in
a native dialog on your desktop; under the table it says what drives it.
Use the browser name or profile with fillgate fill --browser or --profile
when several browsers show the same login page. Exits 1 when no browser is
connected.`
}

func (c *statusCmd) Run(a *app) error {
	ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
	defer cancel()
	var hs []agentsock.HostStatus
	var err error
	if c.Socket != "" {
		hs, err = agentsock.StatusAt(ctx, c.Socket)
	} else {
		var dir string
		if dir, err = dirs.Runtime(a.env); err != nil {
			return err
		}
		hs, err = agentsock.Status(ctx, dir)
	}
	if errors.Is(err, agentsock.ErrNoHost) {
		hs, err = nil, nil
	}
	if err != nil {
		return err
	}
	if c.JSON {
		if hs == nil {
			hs = []agentsock.HostStatus{}
		}
		b, err := json.Marshal(hs)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "%s\n", b)
	} else if len(hs) == 0 {
		fmt.Fprintln(a.stdout, "no browser with the fillgate extension is connected; run `fillgate doctor` to see why")
	} else {
		local := ""
		if c.Socket == "" {
			local = localPrompt(a.env)
		}
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "BROWSER\tPROFILE\tPID\tEXTENSION\tPAUSED\tACTIVE TAB\tPROMPTS")
		var notes []string
		for _, h := range hs {
			ext := "not connected"
			if h.Extension.Connected {
				ext = h.Extension.Version
			}
			mode, where := promptMode(h, local), "-"
			if h.Extension.Connected {
				where = promptsWhere(h.Drive, mode)
				if n := driveNote(h, mode); n != "" {
					notes = append(notes, n)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%v\t%s\t%s\n", printable(dash(h.BrowserName)), printable(dash(h.Profile)),
				h.PID, printable(ext), h.Extension.Paused, activeWords(h.ActiveTab), where)
		}
		_ = tw.Flush()
		for _, n := range notes {
			fmt.Fprintf(a.stdout, "\n%s\n", n)
		}
		if stateDir, err := dirs.State(a.env); err == nil && c.Socket == "" {
			for _, r := range refusedConnections(stateDir, time.Now()) {
				fmt.Fprintf(a.stdout, "\nA second connection to the host was refused at %s\n", r)
			}
		}
	}
	if len(hs) == 0 {
		return exitCode(1)
	}
	return nil
}

// activeWords says what the active tab shows: its origin and whether a
// login field is focused there.
func activeWords(t *agentsock.ActiveTab) string {
	switch {
	case t == nil:
		return "(the browser did not answer)"
	case t.Origin == "":
		return "(no web page)"
	case t.LoginField() && t.Problem == "":
		return printable(t.Origin) + ", " + t.Field + " field focused"
	case t.LoginField():
		return printable(t.Origin) + ", " + t.Field + " field focused but not usable (" + printable(t.Problem) + ")"
	}
	return printable(t.Origin) + ", no login field focused"
}

// promptsWhere says, for the status table, where prompts for a browser
// open now: d is what its host says drives it (nil: the host does not
// say), mode the policy's prompt mode.
func promptsWhere(d *fill.Drive, mode string) string {
	driven := d != nil && d.Driven
	switch {
	case mode == policy.PromptNative:
		return "on your desktop"
	case mode == policy.PromptBrowser && driven:
		return "in the browser, which a program can drive"
	case mode == policy.PromptBrowser:
		return "in the browser"
	case d == nil:
		return "(the host does not say)"
	case driven:
		return "on your desktop (the browser can be driven)"
	}
	return "in the browser"
}

// driveNote is what `fillgate status` says under the table about a
// browser a program can drive: what drives it, and what that means for
// its prompts; "" when nothing drives it.
func driveNote(h agentsock.HostStatus, mode string) string {
	if h.Drive == nil || !h.Drive.Driven {
		return ""
	}
	reasons := make([]string, len(h.Drive.Reasons))
	for i, r := range h.Drive.Reasons {
		reasons[i] = printable(r)
	}
	what := "a program"
	if len(reasons) > 0 {
		what = strings.Join(reasons, "; ")
	}
	s := fmt.Sprintf("%s (pid %d) can be driven by a program: %s.\n  ", printable(dash(h.BrowserName)), h.PID, what)
	switch mode {
	case policy.PromptBrowser:
		return s + `Prompts for it still open in the browser (prompt = "browser" in your policy), where that program could read or answer them; set prompt = "auto" to have them open on your desktop instead.`
	case policy.PromptNative:
		return s + `Prompts for it open as a native dialog on your desktop, outside the browser (prompt = "native").`
	}
	return s + "Prompts for it open as a native dialog on your desktop, outside the browser, and logins for it happen in " +
		"fillgate's clean room (a headless browser only fillgate holds): the browser gets the session, never the password " +
		`(unless your policy says driven = "in-page" for a service).`
}
