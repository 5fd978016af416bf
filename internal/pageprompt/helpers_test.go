package pageprompt_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/pageprompt"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/syncbuf"
)

// testInfo is a typical request: an agent via fillgate mcp wants the
// password for github.com typed by the extension.
func testInfo() fill.PromptInfo {
	return fill.PromptInfo{
		Agent:   fill.Agent{Name: "claude", PID: 4121, Via: "fillgate mcp", Exe: "/usr/bin/claude"},
		Service: "github.com",
		Origin:  "https://github.com",
		Field:   fill.FieldPassword,
		Via:     fill.ViaExtension,
		Budget:  2 * time.Minute,
	}
}

// startPrompt opens a prompt for info that logs at debug level into the
// returned buffer; it is closed when the test ends.
func startPrompt(t *testing.T, ctx context.Context, info fill.PromptInfo) (fill.Prompt, *syncbuf.Buffer) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	cfg := pageprompt.Config{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	p, err := cfg.Start(ctx, info)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p, logs
}

// response is one raw answer, kept whole for assertions and leak scans.
type response struct {
	status int
	header http.Header
	body   []byte
}

// dump is everything a response carried, for leak scanning.
func (r response) dump() []byte {
	var b bytes.Buffer
	_ = r.header.Write(&b)
	b.Write(r.body)
	return b.Bytes()
}

// request describes a hand-made request to a prompt.
type request struct {
	method string
	url    string
	host   string // overrides the Host header when set
	header map[string]string
	body   []byte
	// chunked sends the body without a Content-Length.
	chunked bool
}

// send makes one request on a fresh connection.
func send(t *testing.T, ctx context.Context, r request) response {
	t.Helper()
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
		if r.chunked {
			body = io.MultiReader(body) // hides the length
		}
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, body)
	if err != nil {
		t.Fatalf("build request: %v", err)
	}
	if r.host != "" {
		req.Host = r.host
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s request: %v", r.method, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

// sendRaw writes a request line and headers verbatim on a fresh
// connection and reads the answer.
func sendRaw(t *testing.T, ctx context.Context, addr, raw string) response {
	t.Helper()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer func() { _ = conn.Close() }()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatalf("write: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

// answerBody is the body the page's script posts for value: csrf, the
// submit action and the value encrypted to the prompt's key.
func answerBody(t *testing.T, page *fakehuman.Page, value []byte) []byte {
	t.Helper()
	b, err := page.SubmitBody(value)
	if err != nil {
		t.Fatalf("seal an answer: %v", err)
	}
	return b
}

// postHeaders are the headers of the page's fetch() POST to the prompt at
// u.
func postHeaders(u string) map[string]string {
	pu, _ := url.Parse(u)
	return map[string]string{
		"Origin":         "http://" + pu.Host,
		"Content-Type":   "application/x-www-form-urlencoded;charset=UTF-8",
		"Sec-Fetch-Site": "same-origin",
		"Sec-Fetch-Mode": "cors",
		"Sec-Fetch-Dest": "empty",
	}
}

// hostOf is the host:port of prompt URL u.
func hostOf(t *testing.T, u string) string {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatalf("parse url: %v", err)
	}
	return pu.Host
}

// noLeak fails t if the secret is in any of the named byte slices.
func noLeak(t *testing.T, secret []byte, where map[string][]byte) {
	t.Helper()
	for name, data := range where {
		leakscan.Bytes(t, secret, name, data)
	}
}

// sameValue compares an answer with the expected secret without printing
// either.
func sameValue(t *testing.T, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("value differed")
	}
}

// waitAnswer waits for p's outcome with a generous deadline.
func waitAnswer(t *testing.T, ctx context.Context, p fill.Prompt) (fill.Answer, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return p.Wait(ctx)
}

// gotValue waits for p's answer and checks that it is exactly want, then
// zeroes it.
func gotValue(t *testing.T, ctx context.Context, p fill.Prompt, want []byte) {
	t.Helper()
	a, err := waitAnswer(t, ctx, p)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	sameValue(t, a.Value, want)
	clear(a.Value)
}

// headerKeys lists h's keys, for failure messages.
func headerKeys(h http.Header) string {
	var keys []string
	for k := range h {
		keys = append(keys, k)
	}
	return strings.Join(keys, ", ")
}

// cookieValue is the prompt's binding cookie in page's browser.
func cookieValue(t *testing.T, page *fakehuman.Page) string {
	t.Helper()
	for _, c := range page.Cookies() {
		if c.Name == "fillgate-prompt" {
			return c.Value
		}
	}
	t.Fatalf("the page's browser holds no prompt cookie")
	return ""
}

// cookieHeader is the Cookie header page's browser sends to the prompt.
func cookieHeader(t *testing.T, page *fakehuman.Page) string {
	t.Helper()
	return "fillgate-prompt=" + cookieValue(t, page)
}

// flipped0 is s with its first character changed.
func flipped0(s string) string {
	b := []byte(s)
	b[0] ^= 1
	return string(b)
}

// setCookie is the prompt's Set-Cookie in h, or nil.
func setCookie(h http.Header) *http.Cookie {
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == "fillgate-prompt" {
			return c
		}
	}
	return nil
}

// writeRedirectFile writes a page like the system opener's: a local file
// whose meta refresh leads to u.
func writeRedirectFile(t *testing.T, u string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prompt.html")
	page := `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">` +
		`<meta http-equiv="refresh" content="0; url=` + u + `"><title>opening</title><a href="` + u + `">open</a>`
	if err := os.WriteFile(path, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// noSecretsIn fails t if text names the prompt's address, nonce or
// cookie.
func noSecretsIn(t *testing.T, what, text, promptURL, cookie string) {
	t.Helper()
	pu, err := url.Parse(promptURL)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{
		"URL": promptURL, "nonce": strings.TrimPrefix(pu.Path, "/"), "port": ":" + pu.Port(), "cookie": cookie,
	} {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%s holds the prompt's %s", what, name)
		}
	}
}

// typeAndEnter types secret into whatever has focus in tab and presses
// Enter, as the human would at a page still on screen.
func typeAndEnter(t *testing.T, tab context.Context, secret []byte) {
	t.Helper()
	if err := chromedp.Do(tab, chromedp.KeyEvent(string(secret)), chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatalf("type into the page: %v", err)
	}
}
