package request_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentid"
	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/fillstate"
	"github.com/fillgate/fillgate/internal/request"
)

// world is one test's surroundings: temp XDG dirs, a stand-in CDP endpoint
// that only counts the requests reaching it (and answers 404, so the CDP
// path fails right after connecting), and optionally a fake host on the
// agent socket that counts the fills it is asked for.
type world struct {
	t       *testing.T
	vars    map[string]string
	cdpHits atomic.Int64
	cdpURL  string
	fills   atomic.Int64 // fills the fake host was asked for
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{t: t, vars: map[string]string{}}
	for _, d := range []string{"home", "config", "state", "run", "data", "local"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	w.vars["HOME"] = filepath.Join(root, "home")
	w.vars["XDG_CONFIG_HOME"] = filepath.Join(root, "config")
	w.vars["XDG_STATE_HOME"] = filepath.Join(root, "state")
	w.vars["XDG_RUNTIME_DIR"] = filepath.Join(root, "run")
	w.vars["XDG_DATA_HOME"] = filepath.Join(root, "data")
	// Windows finds the agent pipes' directory here, not in XDG_RUNTIME_DIR.
	w.vars["LOCALAPPDATA"] = filepath.Join(root, "local")

	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.cdpHits.Add(1)
		http.NotFound(rw, r)
	}))
	t.Cleanup(srv.Close)
	w.cdpURL = srv.URL
	w.vars["FILLGATE_CDP_URL"] = srv.URL
	return w
}

// env is the world's environment for request.Options.
func (w *world) env(k string) string { return w.vars[k] }

// policy writes the policy file.
func (w *world) policy(text string) {
	w.t.Helper()
	path, err := dirs.PolicyFile(w.env)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// fakeHost stands in for a browser's host on the agent socket.
type fakeHost struct {
	w *world
	// block, if set, makes a fill wait for the request's end after closing
	// called.
	block  bool
	called chan struct{}
}

// serve is its agentsock.Handler: a status or a peek describes it (its
// browser shows nothing: a single host is never asked), a fill is ok.
func (h *fakeHost) serve(ctx context.Context, c *agentsock.Conn) {
	st := agentsock.HostStatus{Version: "test", PID: os.Getpid(), Extension: agentsock.ExtensionStatus{Connected: true}}
	switch c.Request().Op {
	case agentsock.OpStatus:
		c.Answer(agentsock.Message{Type: agentsock.TypeStatus, Status: &st})
	case agentsock.OpPeek:
		c.Answer(agentsock.Message{Type: agentsock.TypePeek, Status: &st})
	case agentsock.OpFill:
		h.w.fills.Add(1)
		if h.block {
			close(h.called)
			<-ctx.Done()
		}
		c.Result(fill.Result{Status: fill.StatusOK, Service: c.Fill().Service, Via: fill.ViaExtension, Detail: "answered by the fake host"})
	}
}

// host serves h on the world's agent socket until the test ends.
func (w *world) host(h *fakeHost) {
	w.t.Helper()
	h.w = w
	dir, err := dirs.Runtime(w.env)
	if err != nil {
		w.t.Fatal(err)
	}
	l, err := agentsock.Listen(dir)
	if err != nil {
		w.t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = agentsock.Serve(ctx, l, h.serve)
	}()
	w.t.Cleanup(func() {
		cancel()
		<-done
		_ = l.Close()
	})
}

// fill runs request.Fill for service with via and a test-sized deadline.
func (w *world) fill(service, via string) fill.Result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := request.Fill(ctx, fill.Request{Service: service, Field: fill.FieldPassword}, request.Options{
		Via: via, Client: "fillgate fill", Env: w.env,
		OpenURL: func(context.Context, string) error {
			w.t.Errorf("a prompt was opened")
			return nil
		},
	})
	if ctx.Err() != nil {
		w.t.Fatalf("request.Fill ran into the test's deadline")
	}
	return res
}

// contacts asserts how many fills reached the fake host and whether the
// CDP endpoint was contacted.
func (w *world) contacts(hostFills int64, cdp bool) {
	w.t.Helper()
	if got := w.fills.Load(); got != hostFills {
		w.t.Errorf("the agent socket's host was asked for %d fills, want %d", got, hostFills)
	}
	if got := w.cdpHits.Load(); (got > 0) != cdp {
		w.t.Errorf("the CDP endpoint got %d requests, want contacted=%v", got, cdp)
	}
}

func wantResult(t *testing.T, res fill.Result, status fill.Status, via string, detail ...string) {
	t.Helper()
	if res.Status != status || res.Via != via {
		t.Fatalf("result = %+v, want status %s via %q", res, status, via)
	}
	for _, d := range detail {
		if !strings.Contains(res.Detail, d) {
			t.Errorf("detail %q does not say %q", res.Detail, d)
		}
	}
}

func TestAutoAsksTheHostFirst(t *testing.T) {
	w := newWorld(t)
	w.host(&fakeHost{})
	res := w.fill("example.com", request.ViaAuto)
	wantResult(t, res, fill.StatusOK, fill.ViaExtension, "fake host")
	w.contacts(1, false)
}

func TestAutoFallsBackToCDPWithoutAHost(t *testing.T) {
	w := newWorld(t)
	res := w.fill("example.com", "")
	wantResult(t, res, fill.StatusFailed, fill.ViaCDP,
		"no browser with the fillgate extension is running",
		"(from FILLGATE_CDP_URL)", "to fix")
	w.contacts(0, true)
}

func TestPolicyVia(t *testing.T) {
	t.Run("extension: no CDP fallback", func(t *testing.T) {
		w := newWorld(t)
		w.policy("via = \"extension\"\n")
		res := w.fill("example.com", "")
		wantResult(t, res, fill.StatusFailed, fill.ViaExtension, "no host answered", "fillgate doctor")
		w.contacts(0, false)
	})
	t.Run("cdp: the host is not asked", func(t *testing.T) {
		w := newWorld(t)
		w.host(&fakeHost{})
		w.policy("via = \"cdp\"\n")
		res := w.fill("example.com", request.ViaAuto)
		wantResult(t, res, fill.StatusFailed, fill.ViaCDP, "(from FILLGATE_CDP_URL)")
		if strings.Contains(res.Detail, "extension is running") {
			t.Errorf("the policy chose CDP, yet the detail speaks of a fallback: %q", res.Detail)
		}
		w.contacts(0, true)
	})
}

func TestViaFlagBeatsThePolicy(t *testing.T) {
	t.Run("cdp over a policy of extension", func(t *testing.T) {
		w := newWorld(t)
		w.host(&fakeHost{})
		w.policy("via = \"extension\"\n")
		res := w.fill("example.com", request.ViaCDP)
		wantResult(t, res, fill.StatusFailed, fill.ViaCDP)
		w.contacts(0, true)
	})
	t.Run("extension over a policy of cdp", func(t *testing.T) {
		w := newWorld(t)
		w.host(&fakeHost{})
		w.policy("via = \"cdp\"\n")
		res := w.fill("example.com", request.ViaExtension)
		wantResult(t, res, fill.StatusOK, fill.ViaExtension, "fake host")
		w.contacts(1, false)
	})
	t.Run("extension without a host", func(t *testing.T) {
		w := newWorld(t)
		res := w.fill("example.com", request.ViaExtension)
		wantResult(t, res, fill.StatusFailed, fill.ViaExtension, "no host answered")
		w.contacts(0, false)
	})
}

func TestUnknownViaIsRefused(t *testing.T) {
	w := newWorld(t)
	w.host(&fakeHost{})
	res := w.fill("example.com", "carrier-pigeon")
	wantResult(t, res, fill.StatusRefused, "", "unknown --via", "auto, extension or cdp")
	w.contacts(0, false)
}

func TestInvalidPolicyIsRefused(t *testing.T) {
	for name, write := range map[string]func(w *world){
		"syntax": func(w *world) { w.policy("via = \"sometimes\"\nno equals sign here\n") },
		"non-loopback cdp_url": func(w *world) {
			w.policy("cdp_url = \"http://10.255.255.1:9222\"\n")
		},
		"writable by anyone": func(w *world) {
			w.policy("via = \"auto\"\n")
			path, _ := dirs.PolicyFile(w.env)
			if err := os.Chmod(path, 0o666); err != nil {
				w.t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			if name == "writable by anyone" && runtime.GOOS == "windows" {
				t.Skip("file modes are Unix: on Windows the policy file has the ACL of the user's profile, and fillgate checks none (internal/policy/owner_windows.go)")
			}
			w := newWorld(t)
			w.host(&fakeHost{})
			write(w)
			res := w.fill("example.com", "")
			wantResult(t, res, fill.StatusRefused, "", "is not valid", "fillgate policy check")
			w.contacts(0, false)
		})
	}
}

func TestBadServiceIsRefusedBeforeAnyConnection(t *testing.T) {
	for _, svc := range []string{"", "com", "co.uk", "https://example.com", "example.com/login", "*.example.com", "user@example.com"} {
		t.Run(svc, func(t *testing.T) {
			w := newWorld(t)
			w.host(&fakeHost{})
			res := w.fill(svc, request.ViaCDP)
			wantResult(t, res, fill.StatusRefused, "", "service")
			w.contacts(0, false)
			// With no host, a request for the extension's path is still
			// refused for what it asks, not failed for the missing host.
			w = newWorld(t)
			res = w.fill(svc, request.ViaExtension)
			wantResult(t, res, fill.StatusRefused, "", "service")
		})
	}
}

// TestMalformedRequestIsRefusedByTheHost: a request the host cannot
// take for what it asks is refused, as the client's own door refuses it
// when no host answers, never failed.
func TestMalformedRequestIsRefusedByTheHost(t *testing.T) {
	w := newWorld(t)
	w.host(&fakeHost{})
	res := w.fill("", "")
	wantResult(t, res, fill.StatusRefused, fill.ViaExtension, "service is missing")
	dir, err := dirs.Runtime(w.env)
	if err != nil {
		t.Fatal(err)
	}
	res = request.Fill(context.Background(), fill.Request{Field: "carrier-pigeon", Service: "example.com"},
		request.Options{Client: "fillgate fill", Env: w.env, Socket: agentsock.SocketPath(dir)})
	wantResult(t, res, fill.StatusRefused, fill.ViaExtension, "unknown field")
	w.contacts(0, false)
}

// TestTheHostIsTheDoor: the agent's client checks nothing a host checks.
// The request reaches the host as the agent wrote it (the host's door,
// fill.Check, normalises it); only a request no host takes is checked
// here, for the CDP path.
func TestTheHostIsTheDoor(t *testing.T) {
	w := newWorld(t)
	w.host(&fakeHost{})
	if res := w.fill("GitHub.COM", ""); res.Service != "GitHub.COM" {
		t.Errorf("the host got service %q, want GitHub.COM as the agent wrote it", res.Service)
	}
	w = newWorld(t)
	if res := w.fill("GitHub.COM", request.ViaCDP); res.Service != "github.com" {
		t.Errorf("the CDP path's service = %q, want the canonical github.com", res.Service)
	}
}

func TestNonLoopbackEndpointIsRefusedWithoutDialling(t *testing.T) {
	for _, v := range []string{"FILLGATE_CDP_URL", "BROWSER_CDP_URL"} {
		t.Run(v, func(t *testing.T) {
			w := newWorld(t)
			delete(w.vars, "FILLGATE_CDP_URL")
			// A non-routable address: a dial would hang until the test's
			// deadline, so a prompt refusal shows none was made.
			w.vars[v] = "http://10.255.255.1:9222"
			res := w.fill("example.com", request.ViaCDP)
			wantResult(t, res, fill.StatusRefused, fill.ViaCDP, "not loopback", "(from "+v+")")
		})
	}
}

func TestHostThatTookTheRequestIsNotBypassed(t *testing.T) {
	w := newWorld(t)
	h := &fakeHost{block: true, called: make(chan struct{})}
	w.host(h)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-h.called
		cancel()
	}()
	res := request.Fill(ctx, fill.Request{Service: "example.com"}, request.Options{Env: w.env, Client: "fillgate fill"})
	// The agent gave up while the host had the request: the result says
	// so, and the request is not sent again over CDP.
	wantResult(t, res, fill.StatusFailed, fill.ViaExtension, "did not finish")
	w.contacts(1, false)
}

// TestCooldownComesBeforeConnecting: after a no_response, the same agent's
// next request on the CDP path is refused with the fallback at once, even
// with the browser gone, and nothing is dialled.
func TestCooldownComesBeforeConnecting(t *testing.T) {
	w := newWorld(t)
	stateDir, err := dirs.State(w.env)
	if err != nil {
		t.Fatal(err)
	}
	st, err := fillstate.Open(filepath.Join(stateDir, "cdp"))
	if err != nil {
		t.Fatal(err)
	}
	me := agentid.Of(os.Getpid())
	if err := st.NoteNoResponse(me.Key(), "github.com", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	res := w.fill("github.com", request.ViaCDP)
	wantResult(t, res, fill.StatusRefused, fill.ViaCDP, "will not ask again")
	if res.Fallback == "" {
		t.Error("no fallback after a cool-down refusal")
	}
	w.contacts(0, false)
	// And the refusal is in the audit log.
	entries, err := audit.Open(stateDir).Recent(1)
	if err != nil || len(entries) != 1 || entries[0].Status != fill.StatusRefused {
		t.Errorf("audit: %+v %v", entries, err)
	}
}

// TestUnreachableBrowserIsAudited: a CDP endpoint that cannot be used is an
// outcome like any other, in the audit log.
func TestUnreachableBrowserIsAudited(t *testing.T) {
	w := newWorld(t)
	res := w.fill("github.com", request.ViaCDP)
	wantResult(t, res, fill.StatusFailed, fill.ViaCDP, "CDP endpoint", "to fix")
	stateDir, _ := dirs.State(w.env)
	entries, err := audit.Open(stateDir).Recent(1)
	if err != nil || len(entries) != 1 || entries[0].Status != fill.StatusFailed || entries[0].Via != fill.ViaCDP {
		t.Errorf("audit: %+v %v", entries, err)
	}
}

func TestSocketAsksOnlyThatSocket(t *testing.T) {
	w := newWorld(t)
	w.host(&fakeHost{})
	dir, err := dirs.Runtime(w.env)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(socket, via string) fill.Result {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return request.Fill(ctx, fill.Request{Service: "example.com", Field: fill.FieldPassword},
			request.Options{Via: via, Client: "fillgate fill", Env: w.env, Socket: socket})
	}
	wantResult(t, ask(agentsock.SocketPath(dir), ""), fill.StatusOK, fill.ViaExtension, "fake host")
	// A socket nobody serves fails at once, with no CDP fallback.
	wantResult(t, ask(filepath.Join(t.TempDir(), "forwarded.sock"), ""), fill.StatusFailed, fill.ViaExtension,
		"no fillgate host answered on", "ssh -R")
	wantResult(t, ask(agentsock.SocketPath(dir), request.ViaCDP), fill.StatusRefused, "", "--socket")
	w.contacts(1, false)
}
