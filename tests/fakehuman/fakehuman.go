// Package fakehuman plays the human at a fillgate prompt page over HTTP,
// the way a browser would: it loads the page with the headers a browser
// sends for a navigation it did not come from another site for, reads the
// form out of the HTML, and posts it back as the browser would for a press
// of Enter (Submit) or of the Cancel button.
//
// It talks only to 127.0.0.1. It never logs, prints or returns a value it
// was given to type, and it zeroes its copy of the request body once the
// answer has come back (the HTTP transport's own buffers are beyond its
// reach).
package fakehuman

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxPage caps how much of a response Page reads.
const maxPage = 1 << 20

// userAgent is sent with every request.
const userAgent = "fillgate-fakehuman/1 (like a browser)"

var (
	// ErrNoForm is returned by Submit and Cancel when the current page has
	// no form (it is a final page, or a refusal).
	ErrNoForm = errors.New("fakehuman: the page has no form")
	// ErrRequired is returned by Submit for an empty value when the field
	// is required: a browser would not send the form either.
	ErrRequired = errors.New("fakehuman: the field is required and the value is empty; a browser would not submit")
)

// Page is the page the fake human has in front of them: the last response
// (its status, headers and HTML) and, when it has one, its form.
type Page struct {
	client *http.Client
	url    *url.URL
	status int
	header http.Header
	html   []byte
	form   *form
}

// Open loads the prompt page at rawURL as a browser does when the page is
// opened directly (Sec-Fetch-Site: none). It fails unless the URL is
// http://127.0.0.1:<port>/..., the answer is 200 and the page holds a form
// the fake human can answer.
func Open(ctx context.Context, rawURL string) (*Page, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("fakehuman: parse url: %w", err)
	}
	if err := checkLoopback(u); err != nil {
		return nil, err
	}
	p := &Page{client: newClient(), url: u}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("fakehuman: build GET: %w", err)
	}
	setNavigationHeaders(req.Header, "none")
	if err := p.do(req); err != nil {
		return nil, err
	}
	if p.status != http.StatusOK {
		return nil, fmt.Errorf("fakehuman: GET answered %d %s", p.status, http.StatusText(p.status))
	}
	if p.form == nil {
		return nil, ErrNoForm
	}
	return p, nil
}

// Submit types value into the form's password field and presses Enter:
// the form goes with its default (first) submit button. The caller keeps
// value; Submit zeroes its own encoded copy. A non-2xx answer is an error.
// Either way the answer becomes the current page.
func (p *Page) Submit(ctx context.Context, value []byte) error {
	if p.form == nil {
		return ErrNoForm
	}
	if len(value) == 0 && p.form.secretRequired {
		return ErrRequired
	}
	return p.post(ctx, value, p.form.submit)
}

// Cancel presses the form's Cancel button (the one marked formnovalidate)
// with nothing typed.
func (p *Page) Cancel(ctx context.Context) error {
	return p.CancelTyped(ctx, nil)
}

// CancelTyped is Cancel after typing typed into the field: a browser sends
// the field's contents with any button, Cancel included.
func (p *Page) CancelTyped(ctx context.Context, typed []byte) error {
	if p.form == nil {
		return ErrNoForm
	}
	if !p.form.hasCancel {
		return errors.New("fakehuman: the form has no button marked formnovalidate to cancel with")
	}
	return p.post(ctx, typed, p.form.cancel)
}

// HTML is the current page's markup.
func (p *Page) HTML() string { return string(p.html) }

// StatusCode is the current page's HTTP status.
func (p *Page) StatusCode() int { return p.status }

// Header is the current page's response headers.
func (p *Page) Header() http.Header { return p.header }

// HasForm reports whether the current page holds a form to answer.
func (p *Page) HasForm() bool { return p.form != nil }

// Hidden is the value of the form's hidden field name ("" if none), e.g.
// the CSRF token, for tests that build their own requests.
func (p *Page) Hidden(name string) string {
	if p.form == nil {
		return ""
	}
	for _, f := range p.form.hidden {
		if f.name == name {
			return f.value
		}
	}
	return ""
}

// Action is the absolute URL the form posts to ("" without a form).
func (p *Page) Action() string {
	if p.form == nil {
		return ""
	}
	return p.form.action.String()
}

// post sends the form as a browser would with submitter pressed and typed
// in the password field.
func (p *Page) post(ctx context.Context, typed []byte, submitter field) error {
	f := p.form
	if err := checkLoopback(f.action); err != nil {
		return err
	}
	body := f.encode(typed, submitter)
	defer clear(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.action.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("fakehuman: build POST: %w", err)
	}
	site := "cross-site"
	if sameOrigin(f.action, p.url) {
		site = "same-origin"
	}
	setNavigationHeaders(req.Header, site)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", requestOrigin(p.url, p.header))
	req.Header.Set("Cache-Control", "max-age=0")
	if err := p.do(req); err != nil {
		return err
	}
	p.url = f.action
	if p.status < 200 || p.status > 299 {
		return fmt.Errorf("fakehuman: POST answered %d %s", p.status, http.StatusText(p.status))
	}
	return nil
}

// do sends req and makes the answer the current page.
func (p *Page) do(req *http.Request) error {
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("fakehuman: %s: %w", req.Method, err)
	}
	defer func() { _ = resp.Body.Close() }()
	html, err := io.ReadAll(io.LimitReader(resp.Body, maxPage))
	if err != nil {
		return fmt.Errorf("fakehuman: read %s answer: %w", req.Method, err)
	}
	p.status, p.header, p.html, p.form = resp.StatusCode, resp.Header, html, nil
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		f, err := parseForm(html, req.URL)
		if err != nil {
			return fmt.Errorf("fakehuman: read the form: %w", err)
		}
		p.form = f
	}
	return nil
}

// newClient is an HTTP client that dials only loopback addresses and
// follows no redirects (a prompt never redirects).
func newClient() *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Client{
		Transport: &http.Transport{
			Proxy: nil, // never a proxy: straight to loopback
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				host, _, err := net.SplitHostPort(addr)
				if err != nil {
					return nil, fmt.Errorf("fakehuman: dial %s: %w", addr, err)
				}
				if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
					return nil, fmt.Errorf("fakehuman: refusing to dial %s: not loopback", addr)
				}
				return dialer.DialContext(ctx, network, addr)
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// checkLoopback refuses any URL but http://127.0.0.1:<port>/...
func checkLoopback(u *url.URL) error {
	if u.Scheme != "http" || u.Hostname() != "127.0.0.1" || u.Port() == "" {
		return fmt.Errorf("fakehuman: %s://%s is not a loopback prompt", u.Scheme, u.Host)
	}
	return nil
}

// setNavigationHeaders sets what a browser sends with a top-level
// navigation that the user started.
func setNavigationHeaders(h http.Header, site string) {
	h.Set("User-Agent", userAgent)
	h.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8")
	h.Set("Upgrade-Insecure-Requests", "1")
	h.Set("Sec-Fetch-Site", site)
	h.Set("Sec-Fetch-Mode", "navigate")
	h.Set("Sec-Fetch-Dest", "document")
	h.Set("Sec-Fetch-User", "?1")
}

// sameOrigin reports whether a and b share scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && a.Host == b.Host
}

// requestOrigin is the Origin header a browser sends with a form POST from
// the page at u served with header: the page's origin, or "null" when the
// page's Referrer-Policy is no-referrer (as the Fetch standard says and
// Chromium does).
func requestOrigin(u *url.URL, header http.Header) string {
	if referrerPolicy(header) == "no-referrer" {
		return "null"
	}
	return u.Scheme + "://" + u.Host
}

// referrerPolicy is the policy a browser applies from Referrer-Policy
// headers: the last token it knows.
func referrerPolicy(header http.Header) string {
	known := map[string]bool{
		"no-referrer": true, "no-referrer-when-downgrade": true, "same-origin": true,
		"origin": true, "strict-origin": true, "origin-when-cross-origin": true,
		"strict-origin-when-cross-origin": true, "unsafe-url": true,
	}
	policy := ""
	for _, v := range header.Values("Referrer-Policy") {
		for _, tok := range strings.Split(v, ",") {
			if tok = strings.ToLower(strings.TrimSpace(tok)); known[tok] {
				policy = tok
			}
		}
	}
	return policy
}
