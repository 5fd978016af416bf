// Package fakehuman plays the human at a fillgate prompt page over HTTP,
// the way a browser running the page's script would: it loads the page
// with the headers a browser sends for that navigation (opened directly
// with Open, or through the system opener's local redirect file with
// OpenFile), keeps the page's cookies as a browser does, reads the prompt
// out of the HTML, and answers as the page's script does for a press of
// Enter (Submit: the value encrypted to the prompt's key, in Go, from
// PROTOCOL.md; SubmitWith: with the Remember box ticked or another
// account picked), of Approve (the saved value: the account picked and
// what the store needs typed, sealed, and no value) or of Cancel, with the
// requests its fetch makes. Offers says what the page offers. It also
// honours the page's own deadline. CancelWithoutScript posts the
// Cancel form as a browser without JavaScript would. Each opened Page is
// its own browser: its own cookie jar.
//
// It talks only to 127.0.0.1. It never logs, prints or returns a value it
// was given to type, and it zeroes its copies of it once the answer has
// gone (the HTTP transport's own buffers are beyond its reach; what they
// hold is ciphertext).
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
	"slices"
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
	// is required: the page's script does not send it either.
	ErrRequired = errors.New("fakehuman: the field is required and the value is empty; the page would not send it")
	// ErrExpired is returned by Submit and Cancel once the page's own
	// deadline (its data-closes-in) passed: the page disabled itself.
	ErrExpired = errors.New("fakehuman: the page's deadline passed; it disabled itself and sends nothing")
)

// maxRedirectFile caps how much of a redirect file OpenFile reads.
const maxRedirectFile = 64 << 10

// Page is the page the fake human has in front of them: the last response
// (its status, headers and HTML) and, when it has one, its prompt, in a
// browser of its own (its cookies).
type Page struct {
	client   *http.Client
	jar      jar
	url      *url.URL
	site     string // Sec-Fetch-Site of the navigation that loaded the page
	method   string // the method of the request that loaded the page
	status   int
	header   http.Header
	html     []byte
	form     *form     // the prompt the page shows, or nil
	loadedAt time.Time // when the prompt was loaded
	answered bool      // the script sent its answer: the prompt is disabled
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
	if err := p.do(req, site, true); err != nil {
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

// Submit types value into the field and presses Enter: as the page's
// script does, it encrypts {"value": value} to the prompt's key, bound to
// this prompt and the submit action, and posts only that. The caller
// keeps value; Submit zeroes its own copies. A non-2xx answer is an
// error. Either way the page is final afterwards (the script disables
// it), and the answer's response becomes the current page.
func (p *Page) Submit(ctx context.Context, value []byte) error {
	f, err := p.answerable()
	if err != nil {
		return err
	}
	if len(value) == 0 && f.secretRequired {
		return ErrRequired
	}
	sealed, err := sealValue(f, value)
	if err != nil {
		return err
	}
	return p.fetch(ctx, field{"action", "submit"}, field{"answer", sealed})
}

// SubmitBody is the body Submit would post for value (csrf, action and
// the encrypted answer), for tests that build their own requests. It
// holds no plaintext.
func (p *Page) SubmitBody(value []byte) ([]byte, error) {
	if p.form == nil {
		return nil, ErrNoForm
	}
	sealed, err := sealValue(p.form, value)
	if err != nil {
		return nil, err
	}
	return encodeFields(field{"csrf", p.form.csrf()}, field{"action", "submit"}, field{"answer", sealed}), nil
}

// sealValue is the encrypted answer of a submit of value to f, with the
// account the page has checked, as the script sends it.
func sealValue(f *form, value []byte) (string, error) {
	plain := submitPayload(value, false, f.checked())
	defer clear(plain)
	return seal(f.key, f.path, "submit", plain)
}

// checked is the account radio checked, nil when the page offers none.
func (f *form) checked() *string {
	if len(f.offers.Accounts) == 0 {
		return nil
	}
	a := f.picked
	return &a
}

// Offers is what the current page offers besides typing a value (zero for
// a page without a prompt).
func (p *Page) Offers() Offers {
	if p.form == nil {
		return Offers{}
	}
	o := p.form.offers
	o.Accounts = slices.Clone(o.Accounts)
	return o
}

// SubmitOptions is what the person does besides typing, for SubmitWith.
type SubmitOptions struct {
	// Remember ticks the Remember box; the page must offer it.
	Remember bool
	// Account picks an account among the page's Accounts ("" keeps the
	// one checked).
	Account string
}

// SubmitWith is Submit after ticking the Remember box or picking an
// account as o says. Either must be on the page, or it is an error: a
// person cannot tick a box that is not there.
func (p *Page) SubmitWith(ctx context.Context, value []byte, o SubmitOptions) error {
	f, err := p.answerable()
	if err != nil {
		return err
	}
	if len(value) == 0 && f.secretRequired {
		return ErrRequired
	}
	if o.Remember && !f.offers.Remember {
		return errors.New("fakehuman: the page has no Remember box")
	}
	account, err := f.pick(o.Account)
	if err != nil {
		return err
	}
	plain := submitPayload(value, o.Remember, account)
	defer clear(plain)
	sealed, err := seal(f.key, f.path, "submit", plain)
	if err != nil {
		return err
	}
	return p.fetch(ctx, field{"action", "submit"}, field{"answer", sealed})
}

// pick is the account the script sends when the person picked account
// ("" keeps the one checked): nil when the page offers none.
func (f *form) pick(account string) (*string, error) {
	if account == "" {
		return f.checked(), nil
	}
	if !slices.Contains(f.offers.Accounts, account) {
		return nil, errors.New("fakehuman: the page offers no such account")
	}
	return &account, nil
}

// ApproveOptions is what the person does before pressing Approve.
type ApproveOptions struct {
	// Account picks an account among the page's Accounts ("" keeps the
	// one checked).
	Account string
	// Ask is what the person types into the store's field (the KeePassXC
	// database password); the page must have that field. The caller keeps
	// it; Approve zeroes its own copies.
	Ask []byte
}

// ErrNoApprove is returned by Approve on a page with no saved value to
// approve.
var ErrNoApprove = errors.New("fakehuman: the page offers no saved value to approve")

// Approve presses Approve as the page's script does: it encrypts the
// account picked and what was typed for the store, bound to this prompt
// and the approve action, and posts only that. No value is sent. The
// page refuses (as its script does) an Approve with the store's field
// empty.
func (p *Page) Approve(ctx context.Context, o ApproveOptions) error {
	f, err := p.answerable()
	if err != nil {
		return err
	}
	switch {
	case f.offers.From == "":
		return ErrNoApprove
	case o.Ask != nil && f.offers.Ask == "":
		return errors.New("fakehuman: the page has no field for what the store needs")
	case f.offers.Ask != "" && len(o.Ask) == 0:
		return ErrRequired
	}
	account, err := f.pick(o.Account)
	if err != nil {
		return err
	}
	var ask []byte
	if f.offers.Ask != "" {
		ask = o.Ask
	}
	plain := approvePayload(ask, account)
	defer clear(plain)
	sealed, err := seal(f.key, f.path, "approve", plain)
	if err != nil {
		return err
	}
	return p.fetch(ctx, field{"action", "approve"}, field{"answer", sealed})
}

// Cancel presses Cancel with nothing typed, with the page's script
// running: it posts the cancel itself.
func (p *Page) Cancel(ctx context.Context) error {
	return p.CancelTyped(ctx, nil)
}

// CancelTyped is Cancel after typing typed into the field. The field is
// in no form, so nothing typed goes with a cancel: typed is never sent.
func (p *Page) CancelTyped(ctx context.Context, typed []byte) error {
	if _, err := p.answerable(); err != nil {
		return err
	}
	return p.fetch(ctx, field{"action", "cancel"})
}

// CancelWithoutScript presses Cancel in a browser without JavaScript: the
// Cancel form is posted as a navigation, and its answer becomes the
// current page.
func (p *Page) CancelWithoutScript(ctx context.Context) error {
	f, err := p.answerable()
	if err != nil {
		return err
	}
	if err := checkLoopback(f.cancelAction); err != nil {
		return err
	}
	fields := append([]field(nil), f.hidden...)
	if f.cancel.name != "" {
		fields = append(fields, f.cancel)
	}
	body := encodeFields(fields...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.cancelAction.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("fakehuman: build POST: %w", err)
	}
	site := p.siteOf(f.cancelAction)
	setNavigationHeaders(req.Header, site, true)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", requestOrigin(p.url, p.header))
	req.Header.Set("Cache-Control", "max-age=0")
	if err := p.do(req, site, true); err != nil {
		return err
	}
	p.url, p.site = f.cancelAction, site
	if p.status < 200 || p.status > 299 {
		return fmt.Errorf("fakehuman: POST answered %d %s", p.status, http.StatusText(p.status))
	}
	return nil
}

// answerable is the page's prompt while it still takes an answer.
func (p *Page) answerable() (*form, error) {
	switch f := p.form; {
	case f == nil || p.answered:
		return nil, ErrNoForm
	case f.closesIn >= 0 && time.Since(p.loadedAt) >= f.closesIn:
		return nil, ErrExpired
	default:
		return f, nil
	}
}

// fetch posts what the page's script posts: the csrf token and fields, as
// URLSearchParams, with the headers a browser's fetch() sends. The page
// is final afterwards; the response is kept as the current page.
func (p *Page) fetch(ctx context.Context, fields ...field) error {
	f := p.form
	if err := checkLoopback(f.action); err != nil {
		return err
	}
	body := encodeFields(append([]field{{"csrf", f.csrf()}}, fields...)...)
	defer clear(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.action.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("fakehuman: build POST: %w", err)
	}
	site := p.siteOf(f.action)
	h := req.Header
	h.Set("User-Agent", userAgent)
	h.Set("Accept", "*/*")
	h.Set("Content-Type", "application/x-www-form-urlencoded;charset=UTF-8")
	h.Set("Origin", requestOrigin(p.url, p.header))
	h.Set("Sec-Fetch-Site", site)
	h.Set("Sec-Fetch-Mode", "cors")
	h.Set("Sec-Fetch-Dest", "empty")
	p.answered = true
	if err := p.do(req, site, false); err != nil {
		return err
	}
	if p.status < 200 || p.status > 299 {
		return fmt.Errorf("fakehuman: POST answered %d %s", p.status, http.StatusText(p.status))
	}
	return nil
}

// siteOf is the Sec-Fetch-Site of a request from the page to u.
func (p *Page) siteOf(u *url.URL) string {
	if sameOrigin(u, p.url) {
		return "same-origin"
	}
	return "cross-site"
}

// HTML is the current page's markup.
func (p *Page) HTML() string { return string(p.html) }

// StatusCode is the current page's HTTP status.
func (p *Page) StatusCode() int { return p.status }

// Header is the current page's response headers.
func (p *Page) Header() http.Header { return p.header }

// HasForm reports whether the current page holds a prompt that still
// takes an answer.
func (p *Page) HasForm() bool { return p.form != nil && !p.answered }

// ClosesIn is how long the page stays answerable from when it was
// loaded, as it says (negative: no limit).
func (p *Page) ClosesIn() time.Duration {
	if p.form == nil {
		return 0
	}
	return p.form.closesIn
}

// Hidden is the value of the Cancel form's hidden field name ("" if
// none), e.g. the CSRF token, for tests that build their own requests.
// It stays readable after the page answered.
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

// Action is the absolute URL the page's script posts its answers to (""
// without a prompt). It stays readable after the page answered.
func (p *Page) Action() string {
	if p.form == nil {
		return ""
	}
	return p.form.action.String()
}

// do sends req, marked site, with the cookies a browser would send,
// keeps the cookies the answer sets, and makes the answer the current
// page; nav says req is a navigation, whose answer the browser shows (and
// whose prompt, if any, it reads); the script's fetches are not.
func (p *Page) do(req *http.Request, site string, nav bool) error {
	for _, c := range p.jar.send(req.URL, site == "cross-site" || site == "same-site", nav && req.Method == http.MethodGet) {
		req.AddCookie(c)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("fakehuman: %s: %w", req.Method, err)
	}
	defer func() { _ = resp.Body.Close() }()
	p.jar.store(req.URL, resp)
	html, err := io.ReadAll(io.LimitReader(resp.Body, maxPage))
	if err != nil {
		return fmt.Errorf("fakehuman: read %s answer: %w", req.Method, err)
	}
	p.status, p.header, p.html = resp.StatusCode, resp.Header, html
	if !nav {
		return nil // the script's fetch: the page stays, disabled
	}
	p.method, p.form, p.answered, p.loadedAt = req.Method, nil, false, time.Now()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		f, err := parseForm(html, req.URL)
		if err != nil {
			return fmt.Errorf("fakehuman: read the prompt: %w", err)
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

// requestOrigin is the Origin header a browser sends with a POST (a form's
// or a fetch's) from the page at u served with header: the page's origin,
// or "null" when the page's Referrer-Policy is no-referrer (as the Fetch
// standard says and Chromium does).
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
