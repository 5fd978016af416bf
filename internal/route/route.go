// Package route sends a fill to the one browser that shows its login
// field, when several browsers run a fillgate host: it asks the other
// hosts on the agent socket what their browser's active tab has focused
// (Ask), picks the host that runs the fill (Pick), and hands the fill to
// that host and relays its answer (Forward). PROTOCOL.md section 1,
// Routing, is the contract.
package route

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
)

// Peer is one host a fill may go to: its status and what its browser's
// active tab has focused.
type Peer struct {
	// Path is the host's own endpoint.
	Path string
	// Self marks the host doing the routing.
	Self   bool
	Status agentsock.HostStatus
	// Active is nil when the browser did not answer.
	Active *agentsock.ActiveTab
}

// Here reports whether the host that got req runs it without asking any
// other: none runs (others is empty) and the agent named no browser or
// profile. Its own checks then explain any refusal.
func Here(req fill.Checked, others []string) bool {
	r := req.Request()
	return len(others) == 0 && r.Browser == "" && r.Profile == ""
}

// Ask asks the hosts at paths, at once, for their status and their
// browser's active tab, within agentsock.PeekWait (and ctx). Hosts that do
// not answer are left out; the others keep their order.
func Ask(ctx context.Context, paths []string) []Peer {
	ctx, cancel := context.WithTimeout(ctx, agentsock.PeekWait)
	defer cancel()
	out := make([]Peer, len(paths))
	var wg sync.WaitGroup
	for i, path := range paths {
		wg.Go(func() {
			m, err := agentsock.Peek(ctx, path)
			if err != nil || m.Status == nil {
				return
			}
			out[i] = Peer{Path: path, Status: *m.Status, Active: m.Active}
		})
	}
	wg.Wait()
	return slices.DeleteFunc(out, func(p Peer) bool { return p.Path == "" })
}

// Pick decides which of peers (the routing host among them, first) runs
// req: "" for the routing host, else the endpoint of another. A peer is a
// candidate when its browser and profile are the ones the agent named, if
// any, and serves says its active tab shows a login field for req. When no
// host may take it, Pick returns the refusal for the agent instead.
func Pick(req fill.Checked, peers []Peer, serves func(agentsock.ActiveTab) bool) (target string, refused *fill.Result) {
	r := req.Request()
	if r.Browser != "" || r.Profile != "" {
		peers = slices.DeleteFunc(slices.Clone(peers), func(p Peer) bool { return !picked(p.Status, r.Browser, r.Profile) })
		if len(peers) == 0 {
			return "", refusal(r, fmt.Sprintf("no connected browser matches %s; `fillgate status` lists them", pickWords(r)))
		}
	}
	var match []Peer
	for _, p := range peers {
		if p.Active != nil && serves(*p.Active) {
			match = append(match, p)
		}
	}
	switch {
	case len(match) == 1:
		return match[0].target(), nil
	case len(match) > 1:
		names := make([]string, len(match))
		for i, p := range match {
			names[i] = p.describe()
		}
		return "", refusal(r, fmt.Sprintf("more than one connected browser has a focused %s field for %s: %s; "+
			"name one with --browser or --profile (`fillgate status` lists them)",
			r.Field, r.Service, strings.Join(names, "; ")))
	case len(peers) == 1:
		// One browser, and it shows no such field: its own checks say why.
		return peers[0].target(), nil
	}
	return "", refusal(r, fmt.Sprintf("no focused %s field for %s in any connected browser (%d checked): "+
		"open the login page, click into the field, and ask again", r.Field, r.Service, len(peers)))
}

func (p Peer) target() string {
	if p.Self {
		return ""
	}
	return p.Path
}

// describe names a candidate for a refusal: browser, profile and origin.
func (p Peer) describe() string {
	name := p.Status.BrowserName
	if name == "" {
		name = p.Status.Browser
	}
	return fmt.Sprintf("%s (profile %s, pid %d) at %s", name, p.Status.Profile, p.Status.PID, p.Active.Origin)
}

// picked reports whether a host is the browser and profile the agent
// named (either may be empty). A browser matches its name or family; a
// profile its full path or last element, case-insensitively.
func picked(st agentsock.HostStatus, browser, profile string) bool {
	if browser != "" && !strings.EqualFold(browser, st.BrowserName) && !strings.EqualFold(browser, st.Browser) {
		return false
	}
	if profile != "" && !strings.EqualFold(profile, st.Profile) &&
		!strings.EqualFold(profile, filepath.Base(st.Profile)) && !strings.EqualFold(profile, st.Extension.Instance) {
		return false
	}
	return true
}

func pickWords(req fill.Request) string {
	var w []string
	if req.Browser != "" {
		w = append(w, "--browser "+quoteShort(req.Browser))
	}
	if req.Profile != "" {
		w = append(w, "--profile "+quoteShort(req.Profile))
	}
	return strings.Join(w, " and ")
}

// quoteShort quotes an agent-chosen name for a message, cut short.
func quoteShort(s string) string {
	const max = 64
	if len(s) > max {
		return fmt.Sprintf("%q…", s[:max])
	}
	return fmt.Sprintf("%q", s)
}

func refusal(req fill.Request, detail string) *fill.Result {
	return &fill.Result{Status: fill.StatusRefused, Service: req.Service, Field: req.Field, Via: fill.ViaExtension, Detail: detail}
}

// Forward hands the fill req, as it came on the wire, to the host at path
// for agent and relays its messages to c until the result. The other host
// trusts the agent field only because this process runs fillgate
// (agentid.Forwarded). The agent's hang-up (ctx) closes that connection,
// which cancels the fill there.
func Forward(ctx context.Context, path string, req agentsock.Request, agent fill.Agent, c *agentsock.Conn) {
	fail := func(detail string) {
		res := fill.Result{Status: fill.StatusFailed, Service: req.Service, Via: fill.ViaExtension, Detail: detail}
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), fill.ErrAgentGone) {
			res.Status = fill.StatusCancelled
		}
		c.Result(res)
	}
	hc, err := agentsock.Dial(ctx, path)
	if err != nil {
		fail("the browser's fillgate host went away before it got the request; ask again")
		return
	}
	defer hc.Close()
	stop := context.AfterFunc(ctx, func() { hc.Close() })
	defer stop()

	req.Agent = &agent
	b, err := json.Marshal(req)
	if err != nil {
		fail(fmt.Sprintf("encoding the request: %v", err))
		return
	}
	if _, err := hc.Write(append(b, '\n')); err != nil {
		fail("the browser's fillgate host went away before it got the request; ask again")
		return
	}
	r := bufio.NewReader(hc)
	for {
		m, err := agentsock.Receive(r)
		switch {
		case errors.Is(err, agentsock.ErrNotJSON):
			fail("the browser's fillgate host sent something unreadable")
			return
		case err != nil:
			fail("the browser's fillgate host went away during the request; check the page, then ask again")
			return
		case m.Type == agentsock.TypeProgress:
			c.Progress(fill.Progress{Phase: m.Phase, Deadline: m.Deadline, Where: m.Where})
		case m.Type == agentsock.TypeResult && m.Result != nil:
			c.Answer(m)
			return
		case m.Type == agentsock.TypeError:
			fail(fmt.Sprintf("the browser's fillgate host refused the forwarded request (%s)", m.Error))
			return
		}
	}
}
