package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/fillgate/fillgate/host/agentsock"
	"github.com/fillgate/fillgate/host/dirs"
)

type statusCmd struct {
	JSON   bool   `name:"json" help:"Print the hosts as one JSON array."`
	Socket string `help:"Ask the fillgate host on this socket (e.g. one forwarded with ssh -R) instead of the local ones." type:"path"`
}

func (statusCmd) Help() string {
	return `Lists every browser that runs fillgate's extension: the browser, its
profile, the host's pid, the extension's version, whether fills are paused,
and for the active tab only, its origin and whether a login field is
focused. Use the browser name or profile with fillgate fill --browser or
--profile when several browsers show the same login page. Exits 1 when no
browser is connected.`
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
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "BROWSER\tPROFILE\tPID\tEXTENSION\tPAUSED\tACTIVE TAB")
		for _, h := range hs {
			ext := "not connected"
			if h.Extension.Connected {
				ext = h.Extension.Version
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%v\t%s\n", printable(dash(h.BrowserName)), printable(dash(h.Profile)),
				h.PID, printable(ext), h.Extension.Paused, activeWords(h.ActiveTab))
		}
		_ = tw.Flush()
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
