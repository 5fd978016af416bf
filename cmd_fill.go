package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/request"
)

type fillCmd struct {
	Service string        `required:"" help:"The site the secret is for, e.g. github.com, or with a port, nas.lan:8443. The page's host must be it or a subdomain of it, on that port (none named: the default port)."`
	Field   string        `default:"password" enum:"password,otp,one-time-code,passkey" help:"The kind of field: password or otp (one-time code); or passkey: arm the tab for the page's one passkey sign-in (navigator.credentials.get()), answered with the agents' own passkey, then click the site's passkey button while this waits (or, with --no-wait, once it returns)."`
	NoWait  bool          `name:"no-wait" help:"With --field passkey: return (status armed, exit 0) as soon as the tab is armed, instead of waiting for the page's call; then click the site's passkey button within the time it names. For agents that cannot click while a command runs."`
	Then    string        `default:"submit" enum:"submit,none" help:"After the insert: submit (submit the form as a person would and leave nothing in the page) or none (leave a value the person types in the field, unsubmitted: the page and any tool reading it can see it; a saved value is always submitted)."`
	JSON    bool          `name:"json" help:"Print the result as one JSON object."`
	Timeout time.Duration `help:"Give the human at most this long (e.g. 30s). It can shorten the policy's budget (90s by default), never lengthen it."`
	Via     string        `default:"auto" enum:"auto,extension,cdp" help:"How to reach the browser: auto (the extension when a browser runs it, else CDP), extension or cdp."`
	Tab     string        `help:"Pin the tab: the extension's numeric tab id, or a CDP target id."`
	Frame   *int64        `help:"Pin the frame (the extension's frame id)."`
	Browser string        `help:"With several browsers connected, use this one (its name, as fillgate status shows it: chromium, chrome, brave, edge, firefox…)."`
	Profile string        `help:"With several browsers or profiles connected, use this profile (its directory, the directory's last element, or the extension instance id fillgate status shows)."`
	Socket  string        `help:"Ask the fillgate host on this socket (e.g. one forwarded from your desktop with ssh -R) instead of the local one." type:"path"`
}

func (fillCmd) Help() string {
	return `The human types the secret (or approves a saved one) in a fillgate dialog
on their desktop, or a one-shot page on 127.0.0.1, that names you, the
service, the exact origin and the kind of field; fillgate checks the page, the
focused field and where its form sends the value again, inserts it, submits
the form as a person would and makes sure the value is no longer in the page
when it returns (--then none leaves a value the human typed in the field,
unsubmitted). You get a status, never the value.

Exit codes (stable; branch on them):
  0  ok           the value was inserted (and the form submitted, unless --then none);
                  with --field passkey: the page's passkey call was answered
  0  armed        with --no-wait only: the tab waits for the page's passkey call;
                  click the site's passkey button now
  2  usage        the command line is wrong
  3  refused      a check or the policy said no; nothing was asked or typed
  4  cancelled    the human cancelled (or closed the prompt)
  5  no_response  nobody answered in time; do not ask again at once: see "fallback"
  6  failed       something broke; "detail" says how to fix it

With --json the result is {"status","service","origin","field","via","submitted",
"navigated","detail","fallback"}; submitted and navigated appear when a value
was inserted.`
}

func (c *fillCmd) Run(a *app) error {
	field, err := fill.NormalizeField(c.Field)
	if err != nil {
		return usageError{err}
	}
	if c.Timeout < 0 {
		return usageError{fmt.Errorf("--timeout must not be negative")}
	}
	then, err := fill.NormalizeThen(c.Then)
	if err != nil {
		return usageError{err}
	}
	if c.NoWait && field != fill.FieldPasskey {
		return usageError{fmt.Errorf("--no-wait is for --field passkey only")}
	}
	req := fill.Request{Service: c.Service, Field: field, Then: then, Timeout: c.Timeout, Frame: c.Frame, Browser: c.Browser, Profile: c.Profile, NoWait: c.NoWait}
	var cdpTab string
	req.Tab, cdpTab = splitTab(c.Tab)
	return a.runRequest(req, request.Options{Via: c.Via, Client: "fillgate fill", Tab: cdpTab, Socket: c.Socket}, c.JSON)
}

// runRequest runs one request (request.Fill) with progress on stderr,
// prints its result and ends with the status's exit code.
func (a *app) runRequest(req fill.Request, o request.Options, asJSON bool) error {
	live := newLiveLine(a.stderr)
	o.Env, o.OnProgress = a.env, live.progress
	res := request.Fill(a.ctx, req, o)
	live.stop()
	if err := printResult(a.stdout, res, asJSON); err != nil {
		return err
	}
	if code := res.Status.ExitCode(); code != 0 {
		return exitCode(code)
	}
	return nil
}

// splitTab reads a --tab value: a number is the extension's tab id, any
// other text a CDP target id.
func splitTab(tab string) (*int64, string) {
	if tab == "" {
		return nil, ""
	}
	if n, err := strconv.ParseInt(tab, 10, 64); err == nil {
		return &n, ""
	}
	return nil, tab
}

// printResult writes res as JSON or as one readable line.
func printResult(w io.Writer, res fill.Result, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	line := fmt.Sprintf("%s: %s", res.Status, res.Detail)
	if res.Origin != "" {
		line += fmt.Sprintf(" [%s", res.Origin)
		if res.Via != "" {
			line += " via " + res.Via
		}
		line += "]"
	}
	if res.Fallback != "" {
		line += "; fallback: " + res.Fallback
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// liveLine shows, on a terminal, how long the human has left:
// "waiting for you in the browser… 71 s". Elsewhere it is silent.
type liveLine struct {
	w        io.Writer
	mu       sync.Mutex
	deadline time.Time
	where    string // fill.WhereBrowser or fill.WhereDesktop
	shown    bool
	done     chan struct{}
	wg       sync.WaitGroup
}

func newLiveLine(w io.Writer) *liveLine {
	l := &liveLine{w: w, done: make(chan struct{})}
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		l.w = nil
		return l
	}
	l.wg.Go(l.loop)
	return l
}

func (l *liveLine) progress(p fill.Progress) {
	if l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if p.Phase == fill.PhaseWaiting {
		l.deadline, l.where = p.Deadline, p.Where
	} else {
		l.deadline = time.Time{}
	}
	l.draw()
}

func (l *liveLine) loop() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
			l.mu.Lock()
			l.draw()
			l.mu.Unlock()
		}
	}
}

// draw must be called with l.mu held.
func (l *liveLine) draw() {
	if l.deadline.IsZero() {
		if l.shown {
			fmt.Fprint(l.w, "\r\033[K")
			l.shown = false
		}
		return
	}
	left := max(time.Until(l.deadline).Round(time.Second), 0)
	where := "in the browser"
	if l.where == fill.WhereDesktop {
		where = "in a fillgate dialog on your desktop"
	}
	fmt.Fprintf(l.w, "\rwaiting for you %s… %d s\033[K", where, int(left/time.Second))
	l.shown = true
}

func (l *liveLine) stop() {
	if l.w == nil {
		return
	}
	close(l.done)
	l.wg.Wait()
	l.mu.Lock()
	l.deadline = time.Time{}
	l.draw()
	l.mu.Unlock()
}
