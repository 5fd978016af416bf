// Package agenttools runs the agents' own MCP tools for fillgate's tests:
// Playwright MCP and chrome-devtools-mcp (pinned in package.json, installed
// by tests/setup with `npm ci`, never with a browser download), and
// `fillgate mcp` itself, each driven by the official MCP TypeScript SDK
// client as an agent would drive it. The client runs in driver.mjs; this
// package starts it and speaks its JSON-lines protocol.
//
// Everything the driver prints (every tool result) is kept, so a test can
// scan it for a secret. The driver and the servers it starts die with the
// test: the driver runs in a process group of its own (with a parent-death
// signal on Linux) and kills its servers when its input ends.
package agenttools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/tests/kit/repo"
	"github.com/fillgate/fillgate/tests/kit/syncbuf"
)

// Dir is the directory of package.json, node_modules and driver.mjs.
func Dir() string { return repo.Path("tests/kit/agenttools") }

// Node finds the node binary. Tests fail, never skip, without one:
// tests/setup installs the packages and needs node itself.
func Node() (string, error) {
	p, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("no node on PATH (need Node 20.19+; Debian: apt-get install nodejs npm): %w", err)
	}
	return p, nil
}

// Installed reports whether tests/setup installed the pinned packages.
func Installed() error {
	for _, p := range []string{PlaywrightMCPScript, ChromeDevToolsMCPScript, "node_modules/@modelcontextprotocol/sdk/package.json"} {
		if _, err := os.Stat(filepath.Join(Dir(), p)); err != nil {
			return fmt.Errorf("the agent tools are not installed (run tests/setup, which runs npm ci in %s): %w", Dir(), err)
		}
	}
	return nil
}

// Driver is one running driver.mjs.
type Driver struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	done     chan struct{} // closed when the process has exited
	stopOnce sync.Once

	mu      sync.Mutex
	next    int
	pending map[int]chan reply
	onProg  map[int]func(Progress)
	out     bytes.Buffer   // everything the driver printed
	errs    []string       // the SDK clients' onerror messages
	dead    error          // set when the driver's output ended
	stderr  syncbuf.Buffer // what the driver (not its servers) wrote to stderr
}

// reply is one answer line of the driver.
type reply struct {
	OK     bool            `json:"ok"`
	Error  *CallError      `json:"error"`
	MS     *int64          `json:"ms"`
	Info   json.RawMessage `json:"info"`
	PID    int             `json:"pid"`
	Tools  []Tool          `json:"tools"`
	Result *Result         `json:"result"`
	CloseReport
}

// line is any line the driver prints.
type line struct {
	ID    *int   `json:"id"`
	Event string `json:"event"`
	// Event "progress".
	Call int `json:"call"`
	Progress
	// Event "error".
	Server  string `json:"server"`
	Message string `json:"message"`
}

// Progress is one progress notification the client got for a call.
type Progress struct {
	Progress float64  `json:"progress"`
	Total    *float64 `json:"total"`
	Message  *string  `json:"message"`
	// MS is when it arrived, in milliseconds after the call started.
	MS int64 `json:"ms"`
}

// Tool is one entry of tools/list.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  json.RawMessage `json:"annotations"`
	Meta         json.RawMessage `json:"_meta"`
}

// Result is a tools/call result as the SDK client returned it.
type Result struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	// MS is how long the call took, in milliseconds.
	MS int64 `json:"-"`
}

// Content is one content block of a result.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"` // base64, for images
	MimeType string `json:"mimeType"`
}

// Text joins the result's text blocks.
func (r *Result) Text() string {
	var b bytes.Buffer
	for _, c := range r.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// CallError is how a request failed in the client: a JSON-RPC error, the
// SDK's request timeout (Code -32001), or an abort.
type CallError struct {
	Name    string `json:"name"`
	Message string `json:"message"`
	Code    *int   `json:"code"`
	// MS is when the client gave up, in milliseconds after the call started.
	MS int64 `json:"-"`
}

func (e *CallError) Error() string {
	if e.Code != nil {
		return fmt.Sprintf("%s (code %d): %s", e.Name, *e.Code, e.Message)
	}
	return e.Name + ": " + e.Message
}

// CodeRequestTimeout is the SDK's error code for a request it gave up on.
const CodeRequestTimeout = -32001

// CloseReport is what the driver saw of one server's requests when it
// closed it.
type CloseReport struct {
	// Cancelled are the JSON-RPC ids the client cancelled (an abort or its
	// timeout).
	Cancelled []json.RawMessage `json:"cancelled"`
	// LateResponses are the cancelled ids the server answered anyway.
	LateResponses []json.RawMessage `json:"lateResponses"`
	// LateProgress are the cancelled ids the server still reported
	// progress for after the cancellation.
	LateProgress []json.RawMessage `json:"lateProgress"`
}

// Start runs the driver until the test ends. The driver's own
// environment is env (nil: a minimal one with PATH and HOME=t.TempDir()).
func Start(t testing.TB, env []string) *Driver {
	t.Helper()
	if err := Installed(); err != nil {
		t.Fatal(err)
	}
	node, err := Node()
	if err != nil {
		t.Fatal(err)
	}
	if env == nil {
		env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8"}
	}
	cmd := exec.Command(node, filepath.Join(Dir(), "driver.mjs"))
	cmd.Dir = Dir()
	cmd.Env = env
	d := &Driver{cmd: cmd, done: make(chan struct{}), pending: map[int]chan reply{}, onProg: map[int]func(Progress){}}
	cmd.Stderr = &d.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if d.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the agent-tools driver: %v", err)
	}
	go d.read(stdout)
	t.Cleanup(d.Stop)
	return d
}

// Stop ends the driver's input (it closes its servers and exits) and
// kills its process group if it has not exited within ten seconds. It is
// safe to call more than once; the test's end calls it too.
func (d *Driver) Stop() {
	d.stopOnce.Do(func() {
		_ = d.stdin.Close()
		select {
		case <-d.done:
		case <-time.After(10 * time.Second):
		}
		killGroup(d.cmd) // whatever of its group is left
		<-d.done
	})
}

// read dispatches the driver's output lines until it ends.
func (d *Driver) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	for sc.Scan() {
		raw := sc.Bytes()
		d.mu.Lock()
		d.out.Write(raw)
		d.out.WriteByte('\n')
		d.mu.Unlock()
		var l line
		if err := json.Unmarshal(raw, &l); err != nil {
			continue
		}
		switch {
		case l.ID != nil:
			var rep reply
			if err := json.Unmarshal(raw, &rep); err != nil {
				rep = reply{Error: &CallError{Name: "DriverError", Message: "unreadable reply"}}
			}
			d.mu.Lock()
			ch := d.pending[*l.ID]
			delete(d.pending, *l.ID)
			delete(d.onProg, *l.ID)
			d.mu.Unlock()
			if ch != nil {
				ch <- rep
			}
		case l.Event == "progress":
			d.mu.Lock()
			f := d.onProg[l.Call]
			d.mu.Unlock()
			if f != nil {
				f(l.Progress)
			}
		case l.Event == "error":
			d.mu.Lock()
			d.errs = append(d.errs, l.Server+": "+l.Message)
			d.mu.Unlock()
		}
	}
	_ = d.cmd.Wait()
	d.mu.Lock()
	d.dead = errors.New("the agent-tools driver exited")
	for id, ch := range d.pending {
		ch <- reply{Error: &CallError{Name: "DriverError", Message: d.dead.Error()}}
		delete(d.pending, id)
	}
	d.mu.Unlock()
	close(d.done)
}

// Output is everything the driver printed so far: every tool result and
// error, for leak scans.
func (d *Driver) Output() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return bytes.Clone(d.out.Bytes())
}

// Stderr is what the driver itself wrote to stderr (its servers' stderr
// goes to the files their Specs name).
func (d *Driver) Stderr() []byte { return d.stderr.Bytes() }

// ClientErrors are the SDK clients' onerror messages so far (for example
// "Received a response for an unknown message ID").
func (d *Driver) ClientErrors() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.errs...)
}

// send writes one request and returns its id and the channel its reply
// arrives on.
func (d *Driver) send(req map[string]any, progress func(Progress)) (int, chan reply, error) {
	d.mu.Lock()
	if d.dead != nil {
		d.mu.Unlock()
		return 0, nil, d.dead
	}
	d.next++
	id := d.next
	ch := make(chan reply, 1)
	d.pending[id] = ch
	if progress != nil {
		d.onProg[id] = progress
	}
	d.mu.Unlock()
	req["id"] = id
	b, err := json.Marshal(req)
	if err != nil {
		return 0, nil, err
	}
	d.mu.Lock()
	_, err = d.stdin.Write(append(b, '\n'))
	d.mu.Unlock()
	if err != nil {
		return 0, nil, fmt.Errorf("write to the agent-tools driver: %w", err)
	}
	return id, ch, nil
}

// roundTrip sends req and waits for its reply.
func (d *Driver) roundTrip(ctx context.Context, req map[string]any) (reply, error) {
	_, ch, err := d.send(req, nil)
	if err != nil {
		return reply{}, err
	}
	select {
	case rep := <-ch:
		if !rep.OK {
			return rep, rep.Error
		}
		return rep, nil
	case <-ctx.Done():
		return reply{}, fmt.Errorf("agent-tools driver, %s: %w", req["op"], ctx.Err())
	}
}

// Spec says how to start one MCP server.
type Spec struct {
	Command string
	Args    []string
	// Env is the server's environment; the SDK adds HOME, LOGNAME, PATH,
	// SHELL, TERM and USER from the driver's own where Env lacks them.
	Env map[string]string
	Dir string
	// Stderr is a file the server's stderr is appended to ("" drops it).
	Stderr string
}

// Server is one MCP server, connected through the SDK client.
type Server struct {
	d    *Driver
	name string
	// Info is the server's implementation info from initialize.
	Info json.RawMessage
	// PID is the server process's.
	PID int
}

// Connect starts the server of spec under name and runs the MCP
// initialisation. The server is closed with the driver at the latest.
func (d *Driver) Connect(ctx context.Context, name string, spec Spec) (*Server, error) {
	rep, err := d.roundTrip(ctx, map[string]any{
		"op": "start", "server": name, "command": spec.Command, "args": spec.Args,
		"env": spec.Env, "cwd": spec.Dir, "stderr": spec.Stderr,
	})
	if err != nil {
		return nil, fmt.Errorf("start MCP server %s: %w", name, err)
	}
	return &Server{d: d, name: name, Info: rep.Info, PID: rep.PID}, nil
}

// ListTools is tools/list.
func (s *Server) ListTools(ctx context.Context) ([]Tool, error) {
	rep, err := s.d.roundTrip(ctx, map[string]any{"op": "list", "server": s.name})
	if err != nil {
		return nil, fmt.Errorf("%s: tools/list: %w", s.name, err)
	}
	return rep.Tools, nil
}

// CallOptions are the SDK's RequestOptions a test may set.
type CallOptions struct {
	// Timeout is the SDK's request timeout; 0 leaves its default (60 s).
	Timeout time.Duration
	// ResetTimeoutOnProgress restarts the timeout on every progress
	// notification.
	ResetTimeoutOnProgress bool
	// OnProgress, if set, asks for progress (the SDK then sends a progress
	// token) and hears each notification.
	OnProgress func(Progress)
}

// Call is one running tools/call.
type Call struct {
	s    *Server
	id   int
	done chan struct{}
	res  *Result
	err  error
}

// Start starts tools/call of tool with args. Wait for it with Wait.
func (s *Server) Start(tool string, args any, o CallOptions) (*Call, error) {
	req := map[string]any{"op": "call", "server": s.name, "tool": tool, "arguments": args}
	if o.Timeout > 0 {
		req["timeout"] = o.Timeout.Milliseconds()
	}
	if o.ResetTimeoutOnProgress {
		req["resetTimeoutOnProgress"] = true
	}
	if o.OnProgress != nil {
		req["progress"] = true
	}
	id, ch, err := s.d.send(req, o.OnProgress)
	if err != nil {
		return nil, err
	}
	c := &Call{s: s, id: id, done: make(chan struct{})}
	go func() {
		rep := <-ch
		var ms int64
		if rep.MS != nil {
			ms = *rep.MS
		}
		switch {
		case rep.OK && rep.Result != nil:
			rep.Result.MS = ms
			c.res = rep.Result
		case rep.Error != nil:
			rep.Error.MS = ms
			c.err = rep.Error
		default:
			c.err = &CallError{Name: "DriverError", Message: "a reply with neither result nor error"}
		}
		close(c.done)
	}()
	return c, nil
}

// Done is closed when the call has its result or error.
func (c *Call) Done() <-chan struct{} { return c.done }

// Wait waits for the call's result. A failed request is a *CallError.
func (c *Call) Wait(ctx context.Context) (*Result, error) {
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: tools/call did not finish: %w", c.s.name, ctx.Err())
	}
}

// Cancel aborts the call through its AbortSignal, as a client whose user
// pressed stop would: the SDK sends notifications/cancelled.
func (c *Call) Cancel(ctx context.Context) error {
	_, err := c.s.d.roundTrip(ctx, map[string]any{"op": "cancel", "call": c.id})
	return err
}

// Call runs tools/call of tool with args and waits for it.
func (s *Server) Call(ctx context.Context, tool string, args any, o CallOptions) (*Result, error) {
	c, err := s.Start(tool, args, o)
	if err != nil {
		return nil, err
	}
	return c.Wait(ctx)
}

// Close closes the client, which ends the server's input and waits for it
// to exit, and reports what the server did with cancelled requests.
func (s *Server) Close(ctx context.Context) (CloseReport, error) {
	rep, err := s.d.roundTrip(ctx, map[string]any{"op": "close", "server": s.name})
	if err != nil {
		return CloseReport{}, fmt.Errorf("close MCP server %s: %w", s.name, err)
	}
	return rep.CloseReport, nil
}
