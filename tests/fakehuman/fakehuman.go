// Package fakehuman plays the human at a fillgate prompt page over HTTP,
// the way a browser would: it loads the page with the headers a browser
// sends for that navigation (opened directly with Open, or through the
// system opener's local redirect file with OpenFile), keeps the page's
// cookies as a browser does, reads the form out of the HTML, and posts it
// back as the browser would for a press of Enter (Submit) or of the
// Cancel button. Each opened Page is its own browser: its own cookie jar.
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
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
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

// maxRedirectFile caps how much of a redirect file OpenFile reads.
const maxRedirectFile = 64 << 10

// Page is the page the fake human has in front of them: the last response
// (its status, headers and HTML) and, when it has one, its form, in a
// browser of its own (its cookies).
type Page struct {
	client *http.Client
	jar    jar
	url    *url.URL
	site   string // Sec-Fetch-Site of the navigation that loaded the page
	method string // the method of the request that loaded the page
	status int
	header http.Header
	html   []byte
	form   *form
}

// Open loads the prompt page at rawURL as a browser does when the page is
// opened directly (Sec-Fetch-Site: none: the extension's popup, a new tab,
// a typed URL). It fails unless the URL is http://127.0.0.1:<port>/...,
// the answer is 200 and the page holds a form the fake human can answer.
func Open(ctx context.Context, rawURL string) (*Page, error) {
	return open(ctx, rawURL, "none", true)
}

// OpenFile opens the local HTML file at path as a browser does when the
// system opener hands it one, and follows its meta refresh to the prompt:
// a navigation from a file:// page, which browsers mark Sec-Fetch-Site:
// cross-site, and with no user activation. The same checks as Open apply
// to where it leads.
func OpenFile(ctx context.Context, path string) (*Page, error) {
	target, err := RedirectTarget(path)
	if err != nil {
		return nil, err
	}
	return open(ctx, target, "cross-site", false)
}

// RedirectTarget is the URL the meta refresh of the HTML file at path
// leads to (resolved against the file's own file:// URL).
func RedirectTarget(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("fakehuman: open the redirect file: %w", err)
	}
	defer func() { _ = f.Close() }()
	doc, err := html.Parse(io.LimitReader(f, maxRedirectFile))
	if err != nil {
		return "", fmt.Errorf("fakehuman: parse the redirect file: %w", err)
	}
	meta := find(doc, func(n *html.Node) bool {
		return n.DataAtom == atom.Meta && strings.EqualFold(attr(n, "http-equiv"), "refresh")
	})
	if meta == nil {
		return "", errors.New("fakehuman: the file has no meta refresh")
	}
	target, ok := refreshURL(attr(meta, "content"))
	if !ok {
		return "", errors.New("fakehuman: the meta refresh names no URL")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("fakehuman: %w", err)
	}
	base := &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	u, err := base.Parse(target)
	if err != nil {
		return "", fmt.Errorf("fakehuman: the meta refresh URL: %w", err)
	}
	return u.String(), nil
}

// refreshURL is the URL in a meta refresh's content ("0; url=...",
// optionally quoted), as HTML's "shared declarative refresh steps" read it.
func refreshURL(content string) (string, bool) {
	_, rest, ok := strings.Cut(content, ";")
	if !ok {
		_, rest, ok = strings.Cut(content, ",")
	}
	if !ok {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	if len(rest) < 4 || !strings.EqualFold(rest[:3], "url") {
		return "", false
	}
	rest = strings.TrimSpace(rest[3:])
	if !strings.HasPrefix(rest, "=") {
		return "", false
	}
	rest = strings.TrimSpace(rest[1:])
	if rest != "" && (rest[0] == '\'' || rest[0] == '"') {
		q := rest[0]
		rest = rest[1:]
		if i := strings.IndexByte(rest, q); i >= 0 {
			rest = rest[:i]
		}
	}
	return rest, rest != ""
}

// open loads rawURL in a new browser, navigating with site as
// Sec-Fetch-Site; user says the human started the navigation.
func open(ctx context.Context, rawURL, site string, user bool) (*Page, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("fakehuman: parse url: %w", err)
	}
	if err := checkLoopback(u); err != nil {
		return nil, err
	}
	p := &Page{client: newClient(), url: u}
	if err := p.get(ctx, site, user); err != nil {
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

// get loads the page's URL with a top-level GET navigation.
func (p *Page) get(ctx context.Context, site string, user bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url.String(), nil)
	if err != nil {
		return fmt.Errorf("fakehuman: build GET: %w", err)
	}
	setNavigationHeaders(req.Header, site, user)
	if err := p.do(req, site); err != nil {
		return err
	}
	p.site = site
	return nil
}

// Reload reloads the current page as the human's reload button does: a
// GET of the same URL, with the cookies it has, marked as the navigation
// that first loaded the page was (browsers keep Sec-Fetch-Site, and with
// it which SameSite cookies go along, across a reload). A page that came
// from a POST is not reloaded: a browser would ask to send the form
// again. The answer becomes the current page whatever its status.
func (p *Page) Reload(ctx context.Context) error {
	if p.method != http.MethodGet {
		return errors.New("fakehuman: the page came from a form POST; a browser would ask before sending it again")
	}
	return p.get(ctx, p.site, true)
}

// URL is the current page's address.
func (p *Page) URL() string { return p.url.String() }

// Cookies are the cookies this page's browser sends back to the page's
// own origin (name and value only), for tests that build their own
// requests as this browser would.
func (p *Page) Cookies() []*http.Cookie { return p.jar.send(p.url, false, false) }

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
	setNavigationHeaders(req.Header, site, true)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", requestOrigin(p.url, p.header))
	req.Header.Set("Cache-Control", "max-age=0")
	if err := p.do(req, site); err != nil {
		return err
	}
	p.url, p.site = f.action, site
	if p.status < 200 || p.status > 299 {
		return fmt.Errorf("fakehuman: POST answered %d %s", p.status, http.StatusText(p.status))
	}
	return nil
}

// do sends req, a navigation marked site, with the cookies a browser
// would send, keeps the cookies the answer sets, and makes the answer the
// current page.
func (p *Page) do(req *http.Request, site string) error {
	for _, c := range p.jar.send(req.URL, site == "cross-site" || site == "same-site", req.Method == http.MethodGet) {
		req.AddCookie(c)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("fakehuman: %s: %w", req.Method, err)
	}
	defer func() { _ = resp.Body.Close() }()
	p.jar.store(req.URL, resp)
	p.method = req.Method
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
// navigation; user says the user started it (a click, Enter, a typed URL)
// rather than a page (a meta refresh).
func setNavigationHeaders(h http.Header, site string, user bool) {
	h.Set("User-Agent", userAgent)
	h.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8")
	h.Set("Upgrade-Insecure-Requests", "1")
	h.Set("Sec-Fetch-Site", site)
	h.Set("Sec-Fetch-Mode", "navigate")
	h.Set("Sec-Fetch-Dest", "document")
	if user {
		h.Set("Sec-Fetch-User", "?1")
	}
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
