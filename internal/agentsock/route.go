package agentsock

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
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/procinfo"
)

// peekWait bounds one host's answer to a peek while a fill is routed.
const peekWait = 2 * time.Second

// peer is one host a fill may go to: its status and what its browser's
// active tab has focused. self marks the host doing the routing.
type peer struct {
	path   string
	self   bool
	status HostStatus
	active *ActiveTab // nil when the browser did not answer
}

// route decides which host runs the fill req: "" for this one, else the
// socket path of another. When no host may take it, it returns the refusal
// for the agent instead. With no other host and no browser or profile
// named, it decides at once, without asking the browser: this host's own
// checks then explain any refusal.
func (s *server) route(ctx context.Context, req fill.Request) (string, *fill.Result) {
	others := s.otherHosts()
	if len(others) == 0 && req.Browser == "" && req.Profile == "" {
		return "", nil
	}
	peers := s.peers(ctx, others)
	if req.Browser != "" || req.Profile != "" {
		peers = slices.DeleteFunc(peers, func(p peer) bool { return !p.status.picked(req.Browser, req.Profile) })
		if len(peers) == 0 {
			return "", refusal(req, fmt.Sprintf("no connected browser matches %s; `fillgate status` lists them", pickWords(req)))
		}
	}
	var match []peer
	for _, p := range peers {
		if p.active != nil && s.h.Serves(req.Service, req.Field, *p.active) {
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
		return "", refusal(req, fmt.Sprintf("more than one connected browser has a focused %s field for %s: %s; "+
			"name one with --browser or --profile (`fillgate status` lists them)",
			fieldWord(req.Field), req.Service, strings.Join(names, "; ")))
	case len(peers) == 1:
		// One browser, and it shows no such field: its own checks say why.
		return peers[0].target(), nil
	}
	return "", refusal(req, fmt.Sprintf("no focused %s field for %s in any connected browser (%d checked): "+
		"open the login page, click into the field, and ask again", fieldWord(req.Field), req.Service, len(peers)))
}

func (p peer) target() string {
	if p.self {
		return ""
	}
	return p.path
}

// describe names a candidate for a refusal: browser, profile and origin.
func (p peer) describe() string {
	name := p.status.BrowserName
	if name == "" {
		name = p.status.Browser
	}
	return fmt.Sprintf("%s (profile %s, pid %d) at %s", name, p.status.Profile, p.status.PID, p.active.Origin)
}

// picked reports whether a host is the browser and profile the agent
// named (either may be empty). A browser matches its name or family; a
// profile its full path or last element, case-insensitively.
func (st HostStatus) picked(browser, profile string) bool {
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

func fieldWord(kind string) string {
	if kind == fill.FieldOTP {
		return "one-time-code"
	}
	return "password"
}

func refusal(req fill.Request, detail string) *fill.Result {
	return &fill.Result{Status: fill.StatusRefused, Service: req.Service, Field: req.Field, Via: fill.ViaExtension, Detail: detail}
}

// otherHosts lists the endpoints (hosts/<id>.sock) of hosts other than
// this one.
func (s *server) otherHosts() []string {
	return slices.DeleteFunc(hostEndpoints(s.l.dir), func(p string) bool { return p == s.l.hostPath })
}

// peers asks this host and every other one, at once, for their status and
// their browser's active tab. Hosts that do not answer are left out.
func (s *server) peers(ctx context.Context, others []string) []peer {
	ctx, cancel := context.WithTimeout(ctx, peekWait)
	defer cancel()
	out := make([]peer, len(others)+1)
	var wg sync.WaitGroup
	wg.Go(func() {
		p := peer{path: s.l.hostPath, self: true, status: s.status()}
		if t, err := s.h.Peek(ctx); err == nil {
			p.active = &t
		}
		out[0] = p
	})
	for i, path := range others {
		wg.Go(func() {
			m, err := call(ctx, path, Request{Op: OpPeek}, TypePeek)
			if err != nil || m.Status == nil {
				return
			}
			out[i+1] = peer{path: path, status: *m.Status, active: m.Active}
		})
	}
	wg.Wait()
	return slices.DeleteFunc(out, func(p peer) bool { return p.path == "" })
}

// call sends one request to the host at path and returns its answer of
// type want.
func call(ctx context.Context, path string, req Request, want string) (Message, error) {
	c, err := dialHost(ctx, path)
	if err != nil {
		return Message{}, err
	}
	defer c.Close()
	return roundTrip(ctx, c, req, want, nil)
}

// forward hands a routed fill to the host at path for agent and relays
// its messages to w until the result. The other host trusts the agent
// field only because this process runs fillgate.
func forward(ctx context.Context, path string, req Request, agent fill.Agent, w *replier) {
	fail := func(detail string) {
		res := fill.Result{Status: fill.StatusFailed, Service: req.Service, Via: fill.ViaExtension, Detail: detail}
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), fill.ErrAgentGone) {
			res.Status = fill.StatusCancelled
		}
		w.last(Message{Type: TypeResult, Result: &res})
	}
	c, err := dialHost(ctx, path)
	if err != nil {
		fail("the browser's fillgate host went away before it got the request; ask again")
		return
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()

	req.Agent = &agent
	b, err := json.Marshal(req)
	if err != nil {
		fail(fmt.Sprintf("encoding the request: %v", err))
		return
	}
	if _, err := c.Write(append(b, '\n')); err != nil {
		fail("the browser's fillgate host went away before it got the request; ask again")
		return
	}
	r := bufio.NewReader(c)
	for {
		line, err := readLine(r, maxMessage)
		if err != nil {
			fail("the browser's fillgate host went away during the request; check the page, then ask again")
			return
		}
		var m Message
		if json.Unmarshal(line, &m) != nil {
			fail("the browser's fillgate host sent something unreadable")
			return
		}
		switch {
		case m.Type == TypeProgress:
			w.progress(fill.Progress{Phase: m.Phase, Deadline: m.Deadline, Where: m.Where})
		case m.Type == TypeResult && m.Result != nil:
			w.last(m)
			return
		case m.Type == TypeError:
			fail(fmt.Sprintf("the browser's fillgate host refused the forwarded request (%s)", m.Error))
			return
		}
	}
}

// forwardedAgent returns the agent a forwarded fill names, when the peer
// that sent it runs this very executable (another fillgate host); else
// ok is false.
func (s *server) forwardedAgent(req Request, peerPID int) (fill.Agent, bool) {
	if req.Agent == nil || s.self == "" {
		return fill.Agent{}, false
	}
	p, err := procinfo.Get(peerPID)
	if err != nil || p.Exe == "" || !samePath(p.Exe, s.self) {
		return fill.Agent{}, false
	}
	a := *req.Agent
	a.Via = cleanClient(a.Via)
	return a, true
}
