package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/browserproc"
	"github.com/fillgate/fillgate/tests/windows/wine"

	"github.com/coder/websocket"
)

// FirefoxOptions configures StartFirefox.
type FirefoxOptions struct {
	// Profile is the profile directory; empty means a new temp dir.
	Profile string
	// Env is the browser's whole environment (native hosts inherit it);
	// nil means BaseEnv of a temp dir.
	Env []string
	// AllowSystemAccess lets the BiDi session reach privileged pages (an
	// extension's moz-extension:// pages, for one), which Firefox refuses
	// otherwise (--remote-allow-system-access).
	AllowSystemAccess bool
	// Prefs are more user.js lines, after the ones that keep the profile
	// quiet (such as `user_pref("fission.autostart", false);`).
	Prefs string
}

// Firefox is a running headless Firefox (Debian's firefox-esr), driven
// over WebDriver BiDi. One goroutine reads the connection: it hands each
// command's response to its caller and each event to the listeners, so
// commands may run concurrently.
type Firefox struct {
	*browserproc.Proc // Cmd is the browser process
	Profile           string

	mu     sync.Mutex // guards output and urls
	output strings.Builder
	urls   chan string // gets the BiDi address once it is printed

	conn      *websocket.Conn
	calls     sync.Mutex // guards nextID, pending, listeners and readErr
	nextID    int
	pending   map[int]chan bidiMessage
	listeners []func(Event)
	readErr   error         // why the reader stopped, once it has
	readDone  chan struct{} // closed when the reader stops
}

// Event is a WebDriver BiDi event: its method (such as
// "browsingContext.contextCreated") and its params.
type Event struct {
	Method string
	Params json.RawMessage
}

// bidiMessage is one message from the browser: a command's response or
// an event.
type bidiMessage struct {
	ID      int             `json:"id"`
	Type    string          `json:"type"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
	Result  json.RawMessage `json:"result"`
}

// FirefoxBinary finds Firefox ESR (or FILLGATE_FIREFOX). Tests fail, never
// skip, without one: .ci/run installs it.
func FirefoxBinary() (string, error) {
	if p := os.Getenv("FILLGATE_FIREFOX"); p != "" {
		return p, nil
	}
	for _, name := range []string{"firefox-esr", "firefox"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Firefox found: run apt-get install -y firefox-esr (or set FILLGATE_FIREFOX)")
}

// quietPrefs keep a test profile from reaching anything but loopback: no
// updates, telemetry, safe-browsing lists, remote settings or probes.
const quietPrefs = `user_pref("app.update.disabledForTesting", true);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("browser.newtabpage.enabled", false);
user_pref("browser.region.network.url", "");
user_pref("browser.safebrowsing.malware.enabled", false);
user_pref("browser.safebrowsing.phishing.enabled", false);
user_pref("browser.safebrowsing.downloads.enabled", false);
user_pref("browser.safebrowsing.blockedURIs.enabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("datareporting.healthreport.uploadEnabled", false);
user_pref("toolkit.telemetry.enabled", false);
user_pref("toolkit.telemetry.server", "");
user_pref("extensions.update.enabled", false);
user_pref("extensions.blocklist.enabled", false);
user_pref("extensions.getAddons.cache.enabled", false);
user_pref("media.gmp-manager.url", "");
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
user_pref("network.dns.disablePrefetch", true);
user_pref("network.prefetch-next", false);
user_pref("services.settings.server", "http://127.0.0.1:9/");
`

var bidiURL = regexp.MustCompile(`WebDriver BiDi listening on (ws://127\.0\.0\.1:\d+)`)

// StartFirefox launches headless Firefox with a throw-away profile and
// opens a WebDriver BiDi session. The browser is killed when the test ends.
func StartFirefox(t testing.TB, ctx context.Context, o FirefoxOptions) *Firefox {
	t.Helper()
	wine.Skip(t, "there is no Windows Firefox in the Wine prefix")
	bin, err := FirefoxBinary()
	if err != nil {
		t.Fatal(err)
	}
	if o.Profile == "" {
		o.Profile = t.TempDir()
	}
	if o.Env == nil {
		o.Env = BaseEnv(t.TempDir())
	}
	if err := os.WriteFile(filepath.Join(o.Profile, "user.js"), []byte(quietPrefs+o.Prefs), 0o600); err != nil {
		t.Fatalf("write user.js: %v", err)
	}
	urls := make(chan string, 1)
	f := &Firefox{Profile: o.Profile, urls: urls, pending: map[int]chan bidiMessage{}, readDone: make(chan struct{})}
	args := []string{"--headless", "--no-remote", "--profile", o.Profile, "--remote-debugging-port=0"}
	if o.AllowSystemAccess {
		args = append(args, "--remote-allow-system-access")
	}
	cmd := exec.Command(bin, append(args, "about:blank")...)
	cmd.Env = o.Env
	cmd.Stdout = io.Discard
	cmd.Stderr = (*firefoxOutput)(f)
	p, err := browserproc.StartGroup(cmd)
	if err != nil {
		t.Fatalf("start firefox: %v", err)
	}
	f.Proc = p
	t.Cleanup(f.Stop)

	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var url string
	select {
	case url = <-urls:
	case <-ctx.Done():
		t.Fatalf("firefox did not start WebDriver BiDi (%v); its output:\n%s", ctx.Err(), f.Output())
	}
	f.conn, _, err = websocket.Dial(ctx, url+"/session", nil)
	if err != nil {
		t.Fatalf("connect to WebDriver BiDi: %v", err)
	}
	f.conn.SetReadLimit(64 << 20)
	go f.read()
	if err := f.Call(ctx, "session.new", map[string]any{"capabilities": map[string]any{}}, nil); err != nil {
		t.Fatalf("new BiDi session: %v", err)
	}
	return f
}

// firefoxOutput collects the browser's stderr and picks the BiDi address
// out of it.
type firefoxOutput Firefox

func (w *firefoxOutput) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.output.Write(p)
	if w.urls != nil {
		if m := bidiURL.FindStringSubmatch(w.output.String()); m != nil {
			w.urls <- m[1]
			w.urls = nil
		}
	}
	return len(p), nil
}

// Output is what the browser printed on stderr so far.
func (f *Firefox) Output() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.output.String()
}

// Call sends one BiDi command and decodes its result into result (when
// not nil). Calls may run concurrently; events go to the listeners.
func (f *Firefox) Call(ctx context.Context, method string, params, result any) error {
	reply := make(chan bidiMessage, 1)
	f.calls.Lock()
	if f.readErr != nil {
		err := f.readErr
		f.calls.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	f.nextID++
	id := f.nextID
	f.pending[id] = reply
	f.calls.Unlock()
	defer func() {
		f.calls.Lock()
		delete(f.pending, id)
		f.calls.Unlock()
	}()
	req, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	err = f.conn.Write(ctx, websocket.MessageText, req)
	clear(req)
	if err != nil {
		return fmt.Errorf("%s: send: %w", method, err)
	}
	var msg bidiMessage
	select {
	case msg = <-reply:
	case <-f.readDone:
		return fmt.Errorf("%s: read: %w", method, f.readError())
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
	if msg.Type == "error" {
		return fmt.Errorf("%s: %s: %s", method, msg.Error, msg.Message)
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(msg.Result, result); err != nil {
		return fmt.Errorf("%s: decode result: %w", method, err)
	}
	return nil
}

// Listen calls fn with every event the session receives from now on, in
// the order the browser sent them, on the connection's reader goroutine:
// fn must not block or call the browser. Which events arrive is what
// session.subscribe asked for.
func (f *Firefox) Listen(fn func(Event)) {
	f.calls.Lock()
	defer f.calls.Unlock()
	f.listeners = append(f.listeners, fn)
}

// Subscribe asks for events (such as "browsingContext.contextCreated") in
// every browsing context; Listen receives them.
func (f *Firefox) Subscribe(ctx context.Context, events ...string) error {
	return f.Call(ctx, "session.subscribe", map[string]any{"events": events}, nil)
}

// read hands every message on the connection to its command's caller or,
// for an event, to the listeners, until the connection ends.
func (f *Firefox) read() {
	defer close(f.readDone)
	for {
		_, data, err := f.conn.Read(context.Background())
		if err != nil {
			f.calls.Lock()
			f.readErr = err
			f.calls.Unlock()
			return
		}
		var msg bidiMessage
		if err := json.Unmarshal(data, &msg); err != nil {
			continue // not a message of the protocol; a command waiting for it ends at its deadline
		}
		f.calls.Lock()
		if msg.Type == "event" {
			ls := f.listeners
			f.calls.Unlock()
			for _, fn := range ls {
				fn(Event{Method: msg.Method, Params: msg.Params})
			}
			continue
		}
		reply := f.pending[msg.ID]
		f.calls.Unlock()
		if reply != nil {
			reply <- msg
		}
	}
}

// readError is why the reader stopped.
func (f *Firefox) readError() error {
	f.calls.Lock()
	defer f.calls.Unlock()
	return f.readErr
}

// Stop ends the session and kills the browser and the native hosts it
// started.
func (f *Firefox) Stop() {
	if f.conn != nil {
		_ = f.conn.CloseNow()
	}
	if f.Proc != nil {
		f.Proc.Stop()
	}
}
