package nmhost

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/fillgate/fillgate/internal/agentid"
	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/policy"
	"github.com/fillgate/fillgate/internal/route"
)

// local is this host's own browser as the answers on the agent socket
// need it: the extension through the bridge (localHost, in host.go), or a
// stand-in in tests.
type local interface {
	// status describes this host under pol (nil: the policy file does
	// not load).
	status(pol *policy.Policy) agentsock.HostStatus
	// peek asks the browser what its active tab has focused.
	peek(ctx context.Context) (agentsock.ActiveTab, error)
	// fillHere runs the fill flow for req under pol, in this browser.
	fillHere(ctx context.Context, pol *policy.Policy, req fill.Checked, agent fill.Agent, progress func(fill.Progress)) fill.Result
	// refused records res, the refusal of a request the door (fill.Check)
	// refused, as the fill flow records an outcome.
	refused(pol *policy.Policy, agent fill.Agent, res fill.Result)
}

// server answers the requests on the agent socket: a status or a peek
// describes this host, and a fill goes through in one pass. Its agent is
// named (agentid), the policy file is loaded once, the request passes the
// door (fill.Check) once, and the checked request is routed (route) to
// the browser that shows its field: it runs here, or is forwarded to the
// host that runs it.
type server struct {
	l    *agentsock.Listener
	self string // this executable (agentid.Self)
	// policyPath is the policy file, and loadPolicy reads it: afresh
	// for each request, so an edited file applies at once.
	policyPath string
	loadPolicy func() (*policy.Policy, error)
	local      local
	audit      fill.Auditor
	log        *slog.Logger
}

// serve is the agentsock.Handler: it answers one request.
func (s *server) serve(ctx context.Context, c *agentsock.Conn) {
	switch c.Request().Op {
	case agentsock.OpStatus:
		s.status(ctx, c)
	case agentsock.OpPeek:
		s.peek(ctx, c)
	case agentsock.OpFill:
		s.answerFill(ctx, c)
	}
}

// policyOrNil is the policy for a status or a peek: nil when the file
// does not load (the status then names no prompt mode).
func (s *server) policyOrNil() *policy.Policy {
	pol, err := s.loadPolicy()
	if err != nil {
		return nil
	}
	return pol
}

// hostStatus is this host's status under pol, with its own endpoint.
func (s *server) hostStatus(pol *policy.Policy) agentsock.HostStatus {
	st := s.local.status(pol)
	if st.Socket == "" {
		st.Socket = s.l.Path()
	}
	return st
}

// status answers a status request: this host's, and, when the request
// asks for all, every live host's (this one first) with its browser's
// active tab.
func (s *server) status(ctx context.Context, c *agentsock.Conn) {
	pol := s.policyOrNil()
	if !c.Request().All {
		st := s.hostStatus(pol)
		c.Answer(agentsock.Message{Type: agentsock.TypeStatus, Status: &st})
		return
	}
	peers := s.peers(ctx, pol, s.l.Others())
	hosts := make([]agentsock.HostStatus, len(peers))
	for i, p := range peers {
		hosts[i] = p.Status
		hosts[i].ActiveTab = p.Active
	}
	st := peers[0].Status
	c.Answer(agentsock.Message{Type: agentsock.TypeStatus, Status: &st, Hosts: hosts})
}

// peek answers a peek: this host's status and what its browser's active
// tab has focused (nothing when the browser does not answer).
func (s *server) peek(ctx context.Context, c *agentsock.Conn) {
	st := s.hostStatus(s.policyOrNil())
	m := agentsock.Message{Type: agentsock.TypePeek, Status: &st}
	if t, err := s.local.peek(ctx); err == nil {
		m.Active = &t
	}
	c.Answer(m)
}

// peers asks this host and the others, at once and within
// agentsock.PeekWait, for their status and their browser's active tab:
// this one first, then those of others that answer.
func (s *server) peers(ctx context.Context, pol *policy.Policy, others []string) []route.Peer {
	ctx, cancel := context.WithTimeout(ctx, agentsock.PeekWait)
	defer cancel()
	self := route.Peer{Path: s.l.Path(), Self: true}
	var wg sync.WaitGroup
	wg.Go(func() {
		self.Status = s.hostStatus(pol)
		if t, err := s.local.peek(ctx); err == nil {
			self.Active = &t
		}
	})
	rest := route.Ask(ctx, others)
	wg.Wait()
	return append([]route.Peer{self}, rest...)
}

// answerFill answers a fill in one pass: the agent, the policy loaded once, the
// door, the route, then the fill flow here or the host the route names.
func (s *server) answerFill(ctx context.Context, c *agentsock.Conn) {
	wire, req := c.Request(), c.Fill()
	agent, forwarded := agentid.Forwarded(wire.Agent, c.PeerPID(), s.self)
	if !forwarded {
		agent = agentid.Find(c.PeerPID(), s.self)
		agent.Via = agentid.Client(wire.Client)
	}

	// A policy file that does not load refuses every request.
	pol, err := s.loadPolicy()
	if err != nil {
		s.log.Error("policy", "err", err)
		res := policy.Refusal(s.policyPath, req.Service, fill.ViaExtension)
		_ = s.audit.Record(fill.AuditEntry{Time: time.Now(), Agent: agent, Service: req.Service, Via: res.Via, Status: res.Status, Detail: res.Detail})
		c.Result(res)
		return
	}
	checked, err := fill.Check(req, policy.NormalizeService)
	if err != nil {
		res := fill.Result{Status: fill.StatusRefused, Service: req.Service, Field: req.Field, Via: fill.ViaExtension, Detail: err.Error()}
		s.local.refused(pol, agent, res)
		c.Result(res)
		return
	}

	// A fill another host routed here runs here, whatever this browser
	// shows; any other is routed.
	if !forwarded {
		if others := s.l.Others(); !route.Here(checked, others) {
			target, refused := route.Pick(checked, s.peers(ctx, pol, others), serves(pol, checked))
			switch {
			case refused != nil:
				s.routeRefused(agent, *refused)
				c.Result(*refused)
				return
			case target != "":
				route.Forward(ctx, target, wire, agent, c)
				return
			}
		}
	}
	c.Result(s.local.fillHere(ctx, pol, checked, agent, c.Progress))
}

// serves reports whether an active tab shows a usable login field of the
// kind req asks for, on an origin of its service, as pol reads the
// service.
func serves(pol *policy.Policy, req fill.Checked) func(agentsock.ActiveTab) bool {
	r := req.Request()
	return func(t agentsock.ActiveTab) bool {
		return t.Problem == "" && pol.Serves(r.Service, r.Field, t.Origin, t.Field)
	}
}

// routeRefused records a fill the route refused before any browser ran
// it.
func (s *server) routeRefused(agent fill.Agent, res fill.Result) {
	err := s.audit.Record(fill.AuditEntry{Time: time.Now(), Agent: agent, Service: res.Service,
		Field: res.Field, Via: res.Via, Status: res.Status, Detail: res.Detail})
	if err != nil {
		s.log.Error("audit log", "err", err)
	}
	s.log.Info("fill refused by the router", "agent", agent.String(), "service", res.Service, "detail", res.Detail)
}
