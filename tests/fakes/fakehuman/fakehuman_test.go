package fakehuman

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testKey is the prompt key of the fake pages.
var testKey = func() *ecdh.PrivateKey {
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}()

// promptPage is a minimal prompt-like page: the field outside any form,
// the data the page's script encrypts to, and the Cancel form. closesIn
// is its data-closes-in.
func promptPage(action, closesIn string) string {
	return `<!doctype html><title>t</title>
<div id="answer" hidden data-key="` + base64.RawURLEncoding.EncodeToString(testKey.PublicKey().Bytes()) +
		`" data-path="` + action + `" data-closes-in="` + closesIn + `">
<input id="value" class="secret" type="text" required>
</div>
<form id="cancelform" method="post" action="` + action + `">
<input type="hidden" name="csrf" value="tok+en/=">
<button id="send" type="button">Send</button>
<button id="cancel" type="submit" name="action" value="cancel">Cancel</button>
</form>`
}

// formPage is the prompt page answering to /answer, with no deadline.
var formPage = promptPage("/answer", "")

// openAnswer decrypts an answer as the protocol says (the test's own
// reading of PROTOCOL.md) and returns the value in its payload.
func openAnswer(t *testing.T, sealed, path, action string) []byte {
	t.Helper()
	plain := openPlain(t, sealed, path, action)
	var p struct {
		Value []byte `json:"value"`
	}
	if err := json.Unmarshal(plain, &p); err != nil {
		t.Fatalf("the payload is not {\"value\": base64}")
	}
	return p.Value
}

// openPlain decrypts an answer and returns its JSON payload.
func openPlain(t *testing.T, sealed, path, action string) []byte {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || len(raw) < 60 {
		t.Fatalf("the answer is not base64url of at least 60 bytes")
	}
	peer, err := ecdh.X25519().NewPublicKey(raw[:32])
	if err != nil {
		t.Fatal(err)
	}
	shared, err := testKey.ECDH(peer)
	if err != nil {
		t.Fatal(err)
	}
	info := "fillgate-prompt-v1 " + path + " " + action
	key, err := hkdf.Key(sha256.New, shared, append(testKey.PublicKey().Bytes(), raw[:32]...), info, 32)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	plain, err := gcm.Open(nil, raw[32:44], raw[44:], []byte(info))
	if err != nil {
		t.Fatalf("the answer does not decrypt: %v", err)
	}
	return plain
}

// seen is what the test server received with one request.
type seen struct {
	method string
	header http.Header
	body   []byte
}

// server serves page at every GET and records every request, answering a
// POST with a small final page.
func server(t *testing.T, page string, header map[string]string) (*httptest.Server, func() []seen) {
	t.Helper()
	var mu sync.Mutex
	var reqs []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, seen{r.Method, r.Header.Clone(), body})
		mu.Unlock()
		if r.Method == http.MethodPost {
			_, _ = io.WriteString(w, "<p>Sent.</p>")
			return
		}
		_, _ = io.WriteString(w, page)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), reqs...)
	}
}

func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestOpenAndSubmitLikeThePagesScript(t *testing.T) {
	ctx := ctxFor(t)
	srv, got := server(t, formPage, map[string]string{"Referrer-Policy": "same-origin"})
	p, err := Open(ctx, srv.URL+"/nonce")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if p.Hidden("csrf") != "tok+en/=" || p.Action() != srv.URL+"/answer" || p.ClosesIn() >= 0 {
		t.Errorf("prompt read as csrf=%q action=%q closes in %v", p.Hidden("csrf"), p.Action(), p.ClosesIn())
	}
	value := []byte("p a+s%s&=ü")
	if err := p.Submit(ctx, value); err != nil {
		t.Fatalf("submit: %v", err)
	}
	if p.HasForm() || !strings.Contains(p.HTML(), "Sent.") {
		t.Errorf("the page still takes an answer, or the answer's response is not kept")
	}
	if p.Action() != srv.URL+"/answer" || p.Hidden("csrf") == "" {
		t.Errorf("the page's prompt data went with the answer")
	}
	reqs := got()
	if len(reqs) != 2 {
		t.Fatalf("server saw %d requests, want GET and POST", len(reqs))
	}
	get, post := reqs[0].header, reqs[1]
	for k, want := range map[string]string{"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"} {
		if get.Get(k) != want {
			t.Errorf("GET %s = %q, want %q", k, get.Get(k), want)
		}
	}
	// What a browser's fetch() sends for the script's URLSearchParams body.
	for k, want := range map[string]string{
		"Sec-Fetch-Site": "same-origin",
		"Sec-Fetch-Mode": "cors",
		"Sec-Fetch-Dest": "empty",
		"Sec-Fetch-User": "",
		"Origin":         srv.URL,
		"Content-Type":   "application/x-www-form-urlencoded;charset=UTF-8",
	} {
		if post.header.Get(k) != want {
			t.Errorf("POST %s = %q, want %q", k, post.header.Get(k), want)
		}
	}
	form, err := url.ParseQuery(string(post.body))
	if err != nil || form.Get("csrf") != "tok+en/=" || form.Get("action") != "submit" || form.Has("value") {
		t.Fatalf("POST body is not csrf, action=submit and the answer alone")
	}
	if !strings.HasPrefix(string(post.body), "csrf=tok%2Ben%2F%3D&action=submit&answer=") {
		t.Errorf("POST body is not in the script's order")
	}
	if bytes.Contains(post.body, value) || bytes.Contains(post.body, []byte(url.QueryEscape(string(value)))) {
		t.Errorf("the value went in the clear")
	}
	if got := openAnswer(t, form.Get("answer"), "/answer", "submit"); !bytes.Equal(got, value) {
		t.Errorf("value differed after decryption")
	}
	if err := p.Submit(ctx, value); !errors.Is(err, ErrNoForm) {
		t.Errorf("a second submit from an answered page: %v, want ErrNoForm", err)
	}
}

func TestCancelSendsNoValue(t *testing.T) {
	ctx := ctxFor(t)
	srv, got := server(t, formPage, nil)
	p, err := Open(ctx, srv.URL+"/nonce")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := p.CancelTyped(ctx, []byte("typed-but-cancelled")); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	reqs := got()
	last := reqs[len(reqs)-1]
	if body := string(last.body); body != "csrf=tok%2Ben%2F%3D&action=cancel" {
		t.Errorf("cancel body %q", body)
	}
	if last.header.Get("Sec-Fetch-Mode") != "cors" {
		t.Errorf("the script's cancel is not a fetch")
	}
	if err := p.Cancel(ctx); !errors.Is(err, ErrNoForm) {
		t.Errorf("cancel on an answered page: %v, want ErrNoForm", err)
	}
}

func TestCancelWithoutScriptPostsTheCancelForm(t *testing.T) {
	ctx := ctxFor(t)
	srv, got := server(t, formPage, map[string]string{"Referrer-Policy": "same-origin"})
	p, err := Open(ctx, srv.URL+"/nonce")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := p.CancelWithoutScript(ctx); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	last := got()[1]
	if body := string(last.body); body != "csrf=tok%2Ben%2F%3D&action=cancel" {
		t.Errorf("cancel body %q", body)
	}
	for k, want := range map[string]string{"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Sec-Fetch-User": "?1",
		"Content-Type": "application/x-www-form-urlencoded", "Origin": srv.URL} {
		if last.header.Get(k) != want {
			t.Errorf("POST %s = %q, want %q", k, last.header.Get(k), want)
		}
	}
	if p.HasForm() || !strings.Contains(p.HTML(), "Sent.") {
		t.Errorf("the form's answer did not become the page")
	}
	if err := p.Reload(ctx); err == nil {
		t.Errorf("a page that came from a form POST was reloaded without asking")
	}
}

func TestEmptyRequiredValueIsNotSent(t *testing.T) {
	ctx := ctxFor(t)
	srv, got := server(t, formPage, nil)
	p, err := Open(ctx, srv.URL+"/nonce")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := p.Submit(ctx, nil); !errors.Is(err, ErrRequired) {
		t.Errorf("submit of nothing: %v, want ErrRequired", err)
	}
	if n := len(got()); n != 1 {
		t.Errorf("server saw %d requests, want only the GET", n)
	}
}

func TestPageDeadlineDisablesIt(t *testing.T) {
	ctx := ctxFor(t)
	srv, got := server(t, promptPage("/answer", "0"), nil)
	p, err := Open(ctx, srv.URL+"/nonce")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := p.Submit(ctx, []byte("late")); !errors.Is(err, ErrExpired) {
		t.Errorf("submit after the page's deadline: %v, want ErrExpired", err)
	}
	if err := p.Cancel(ctx); !errors.Is(err, ErrExpired) {
		t.Errorf("cancel after the page's deadline: %v, want ErrExpired", err)
	}
	if n := len(got()); n != 1 {
		t.Errorf("server saw %d requests, want only the GET", n)
	}
}

func TestNoReferrerPageMakesOriginNull(t *testing.T) {
	ctx := ctxFor(t)
	srv, got := server(t, formPage, map[string]string{"Referrer-Policy": "no-referrer"})
	p, err := Open(ctx, srv.URL+"/nonce")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := p.Submit(ctx, []byte("x")); err != nil {
		t.Fatalf("submit: %v", err)
	}
	reqs := got()
	if o := reqs[len(reqs)-1].header.Get("Origin"); o != "null" {
		t.Errorf("Origin %q, want null as browsers send under no-referrer", o)
	}
}

func TestReferrerPolicyLastKnownTokenWins(t *testing.T) {
	for v, want := range map[string]string{
		"":                            "",
		"no-referrer":                 "no-referrer",
		"no-referrer, same-origin":    "same-origin",
		"same-origin, bogus":          "same-origin",
		"Strict-Origin , no-referrer": "no-referrer",
	} {
		h := http.Header{}
		if v != "" {
			h.Set("Referrer-Policy", v)
		}
		if got := referrerPolicy(h); got != want {
			t.Errorf("referrerPolicy(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestOpenRefusesNonLoopbackAndBadPages(t *testing.T) {
	ctx := ctxFor(t)
	for _, u := range []string{"https://127.0.0.1:1/x", "http://example.com:80/x", "http://localhost:1/x", "http://127.0.0.1/x"} {
		if _, err := Open(ctx, u); err == nil {
			t.Errorf("Open(%s) succeeded", u)
		}
	}
	key := base64.RawURLEncoding.EncodeToString(testKey.PublicKey().Bytes())
	for name, page := range map[string]string{
		"no prompt":       "<p>hi</p>",
		"no path":         strings.Replace(formPage, `data-path="/answer"`, `data-path=""`, 1),
		"short key":       strings.Replace(formPage, key, key[:20], 1),
		"bad closes-in":   promptPage("/answer", "soon"),
		"no field":        strings.Replace(formPage, `id="value"`, `id="other"`, 1),
		"field in a form": `<form method="post">` + formPage + `</form>`,
		"no cancel form":  formPage[:strings.Index(formPage, "<form")],
		"no csrf":         strings.Replace(formPage, `name="csrf"`, `name="other"`, 1),
		"get cancel form": strings.Replace(formPage, `method="post"`, `method="get"`, 1),
	} {
		srv, _ := server(t, page, nil)
		if _, err := Open(ctx, srv.URL+"/"); err == nil {
			t.Errorf("%s: Open succeeded", name)
		}
	}
	// A page that posts off loopback is refused before anything is sent.
	srv, got := server(t, promptPage("//example.com/steal", ""), nil)
	p, err := Open(ctx, srv.URL+"/")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := p.Submit(ctx, []byte("x")); err == nil {
		t.Errorf("submit to a non-loopback action succeeded")
	}
	if err := p.CancelWithoutScript(ctx); err == nil {
		t.Errorf("a Cancel form posting off loopback was sent")
	}
	if n := len(got()); n != 1 {
		t.Errorf("server saw %d requests, want only the GET", n)
	}
}

func TestErrorsNeverHoldTheValue(t *testing.T) {
	ctx := ctxFor(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		_, _ = io.WriteString(w, formPage)
	}))
	defer srv.Close()
	p, err := Open(ctx, srv.URL+"/")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	value := []byte("marker-value-7a1c")
	err = p.Submit(ctx, value)
	if err == nil {
		t.Fatalf("a 403 did not fail Submit")
	}
	if strings.Contains(err.Error(), "marker-value") {
		t.Errorf("the error holds the value")
	}
	if !bytes.Equal(value, []byte("marker-value-7a1c")) {
		t.Errorf("Submit changed the caller's value")
	}
}

// cookieServer serves formPage at /nonce, sets cookies on the first GET
// and records the Cookie header and Sec-Fetch-* of every request.
func cookieServer(t *testing.T, setCookies ...string) (*httptest.Server, func() []seen) {
	t.Helper()
	var mu sync.Mutex
	var reqs []seen
	first := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reqs = append(reqs, seen{method: r.Method, header: r.Header.Clone()})
		set := first && r.Method == http.MethodGet
		first = false
		mu.Unlock()
		if set {
			for _, c := range setCookies {
				w.Header().Add("Set-Cookie", c)
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Referrer-Policy", "same-origin")
		if r.Method == http.MethodPost {
			_, _ = io.WriteString(w, "<p>Sent.</p>")
			return
		}
		_, _ = io.WriteString(w, promptPage("/nonce", ""))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), reqs...)
	}
}

// writeRedirect writes a redirect file like the system opener's.
func writeRedirect(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prompt.html")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCookiesGoBackOnPostAndReload(t *testing.T) {
	ctx := ctxFor(t)
	srv, got := cookieServer(t,
		"bind=b1; Path=/nonce; HttpOnly; SameSite=Lax",
		"other=o1; Path=/elsewhere",
		"sec=s1; Path=/; Secure",
	)
	p, err := Open(ctx, srv.URL+"/nonce")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := p.Reload(ctx); err != nil || !p.HasForm() {
		t.Fatalf("reload: %v (form: %v)", err, p.HasForm())
	}
	if c := p.Cookies(); len(c) != 1 || c[0].Name != "bind" || c[0].Value != "b1" {
		t.Errorf("Cookies() = %v, want bind=b1 alone", c)
	}
	if err := p.Submit(ctx, []byte("x")); err != nil {
		t.Fatalf("submit: %v", err)
	}
	// The answer was a fetch: the page is still the one the GET loaded,
	// and a reload loads it again.
	if err := p.Reload(ctx); err != nil {
		t.Errorf("reload after the script's answer: %v", err)
	}
	reqs := got()
	if len(reqs) != 4 {
		t.Fatalf("server saw %d requests, want GET, reload, POST, reload", len(reqs))
	}
	for i, want := range []string{"", "bind=b1", "bind=b1", "bind=b1"} {
		if c := reqs[i].header.Get("Cookie"); c != want {
			t.Errorf("request %d carried Cookie %q, want %q", i, c, want)
		}
	}
	if s := reqs[1].header.Get("Sec-Fetch-Site"); s != "none" {
		t.Errorf("the reload of a page opened directly was %q, want none", s)
	}
}

func TestOpenFileFollowsTheMetaRefreshCrossSite(t *testing.T) {
	ctx := ctxFor(t)
	srv, got := cookieServer(t,
		"lax=l1; Path=/nonce; HttpOnly; SameSite=Lax",
		"strict=s1; Path=/nonce; HttpOnly; SameSite=Strict",
	)
	path := writeRedirect(t, `<!doctype html><meta name="referrer" content="no-referrer">`+
		`<meta http-equiv="Refresh" content="0; URL='`+srv.URL+`/nonce'"><a href="`+srv.URL+`/nonce">open</a>`)
	target, err := RedirectTarget(path)
	if err != nil || target != srv.URL+"/nonce" {
		t.Fatalf("RedirectTarget = %q, %v", target, err)
	}
	p, err := OpenFile(ctx, path)
	if err != nil {
		t.Fatalf("open file: %v", err)
	}
	if p.URL() != srv.URL+"/nonce" {
		t.Errorf("the page is at %s", p.URL())
	}
	// A reload stays cross-site: the Strict cookie stays home, as in
	// Chromium and Firefox.
	if err := p.Reload(ctx); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if err := p.Submit(ctx, []byte("x")); err != nil {
		t.Fatalf("submit: %v", err)
	}
	reqs := got()
	if len(reqs) != 3 {
		t.Fatalf("server saw %d requests, want GET, reload, POST", len(reqs))
	}
	for i, want := range []struct{ site, user, cookie, mode, dest string }{
		{"cross-site", "", "", "navigate", "document"},
		{"cross-site", "?1", "lax=l1", "navigate", "document"},
		{"same-origin", "", "lax=l1; strict=s1", "cors", "empty"}, // the script's fetch
	} {
		h := reqs[i].header
		if h.Get("Sec-Fetch-Site") != want.site || h.Get("Sec-Fetch-User") != want.user || h.Get("Cookie") != want.cookie {
			t.Errorf("request %d: site %q user %q cookie %q, want %+v", i,
				h.Get("Sec-Fetch-Site"), h.Get("Sec-Fetch-User"), h.Get("Cookie"), want)
		}
		if h.Get("Sec-Fetch-Mode") != want.mode || h.Get("Sec-Fetch-Dest") != want.dest {
			t.Errorf("request %d: mode %q dest %q, want %s %s", i, h.Get("Sec-Fetch-Mode"), h.Get("Sec-Fetch-Dest"), want.mode, want.dest)
		}
	}
}

func TestEachPageIsItsOwnBrowser(t *testing.T) {
	ctx := ctxFor(t)
	srv, got := cookieServer(t, "bind=b1; Path=/nonce; HttpOnly; SameSite=Lax")
	if _, err := Open(ctx, srv.URL+"/nonce"); err != nil {
		t.Fatalf("open: %v", err)
	}
	if _, err := Open(ctx, srv.URL+"/nonce"); err != nil {
		t.Fatalf("second open: %v", err)
	}
	if c := got()[1].header.Get("Cookie"); c != "" {
		t.Errorf("a second Page sent the first one's cookie %q", c)
	}
}

func TestRedirectTargetRefusesFilesWithoutARefresh(t *testing.T) {
	for name, content := range map[string]string{
		"no meta":     `<a href="http://127.0.0.1:1/x">x</a>`,
		"no url":      `<meta http-equiv="refresh" content="0">`,
		"other equiv": `<meta http-equiv="content-type" content="0; url=http://127.0.0.1:1/x">`,
	} {
		if u, err := RedirectTarget(writeRedirect(t, content)); err == nil {
			t.Errorf("%s: RedirectTarget = %q", name, u)
		}
	}
	if _, err := RedirectTarget(filepath.Join(t.TempDir(), "missing.html")); err == nil {
		t.Errorf("a missing file gave a target")
	}
	// A file that leads off loopback is not followed.
	if _, err := OpenFile(ctxFor(t), writeRedirect(t, `<meta http-equiv="refresh" content="0;url=http://example.com/x">`)); err == nil {
		t.Errorf("OpenFile followed a refresh to example.com")
	}
}

func TestJarRules(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:8080/nonce")
	resp := &http.Response{Header: http.Header{"Set-Cookie": {
		"a=1; Path=/nonce; SameSite=Strict",
		"b=2; Path=/nonce; SameSite=Lax",
		"c=3; Path=/nonce",
		"d=4; Path=/nonce; SameSite=None",                         // None needs Secure
		"e=5; Path=/nonce; Domain=example.com",                    // another domain
		"f=6; Path=/nonceX",                                       // not a path prefix
		"g=7; Path=/nonce; Max-Age=0",                             // a deletion
		"h=8; Path=/nonce; Expires=Thu, 01 Jan 1970 00:00:00 GMT", // expired
	}}}
	var j jar
	j.store(u, resp)
	names := func(cs []*http.Cookie) string {
		var n []string
		for _, c := range cs {
			n = append(n, c.Name)
		}
		return strings.Join(n, ",")
	}
	for _, tc := range []struct {
		cross, top bool
		want       string
	}{
		{false, false, "a,b,c"},
		{true, true, "b,c"},
		{true, false, ""},
	} {
		if got := names(j.send(u, tc.cross, tc.top)); got != tc.want {
			t.Errorf("cross-site %v, top-level GET %v: sent %q, want %q", tc.cross, tc.top, got, tc.want)
		}
	}
	other, _ := url.Parse("http://127.0.0.2:8080/nonce")
	if got := j.send(other, false, false); len(got) != 0 {
		t.Errorf("another host got %d cookies", len(got))
	}
	// Setting a cookie again replaces it; Max-Age=-1 deletes it.
	j.store(u, &http.Response{Header: http.Header{"Set-Cookie": {"a=9; Path=/nonce", "b=; Path=/nonce; Max-Age=-1"}}})
	if got := j.send(u, false, false); names(got) != "c,a" || got[1].Value != "9" {
		t.Errorf("after replacing a and deleting b: %q", names(got))
	}
}

// offeringPage is a prompt-like page with a saved value to approve, two
// accounts (the first checked), a field for the store's password and the
// Remember box, as the prompt's template writes them.
func offeringPage() string {
	return strings.Replace(formPage, `<input id="value"`, `<section id="saved"><p id="from">from pass: work/github</p>
<fieldset><label><input type="radio" name="account" value="alice" checked> alice</label>
<label><input type="radio" name="account" value="b&quot;ob"> b"ob</label></fieldset>
<label for="ask">The password of the database</label><input id="ask" type="text">
<button id="approve" type="button">Approve</button></section>
<input id="remember" type="checkbox">
<input id="value"`, 1)
}

func TestApproveAndSubmitWithOffers(t *testing.T) {
	ctx := ctxFor(t)
	srv, got := server(t, offeringPage(), nil)
	open := func() *Page {
		p, err := Open(ctx, srv.URL+"/nonce")
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return p
	}
	p := open()
	if o := p.Offers(); o.From != "from pass: work/github" || strings.Join(o.Accounts, ",") != `alice,b"ob` ||
		o.Ask != "The password of the database" || !o.Remember {
		t.Fatalf("offers %+v", o)
	}
	if err := p.Approve(ctx, ApproveOptions{}); !errors.Is(err, ErrRequired) {
		t.Errorf("Approve with the store's field empty: %v", err)
	}
	if err := p.Approve(ctx, ApproveOptions{Account: "mallory", Ask: []byte("x")}); err == nil {
		t.Error("Approve picked an account the page does not offer")
	}
	pw := []byte("db pässword")
	if err := p.Approve(ctx, ApproveOptions{Account: `b"ob`, Ask: pw}); err != nil {
		t.Fatal(err)
	}
	form := lastForm(t, got())
	if form.Get("action") != "approve" || form.Has("value") || bytes.Contains([]byte(form.Encode()), pw) {
		t.Fatal("the approval is not action=approve and a sealed answer alone")
	}
	var a struct {
		Ask     []byte  `json:"ask"`
		Account *string `json:"account"`
		Value   *string `json:"value"`
	}
	if err := json.Unmarshal(openPlain(t, form.Get("answer"), "/answer", "approve"), &a); err != nil ||
		!bytes.Equal(a.Ask, pw) || a.Account == nil || *a.Account != `b"ob` || a.Value != nil {
		t.Fatalf("the approval's payload: %v, account %v, value %v; store password matched %v", err, a.Account, a.Value, bytes.Equal(a.Ask, pw))
	}

	p = open()
	value := []byte("typed")
	if err := p.SubmitWith(ctx, value, SubmitOptions{Remember: true}); err != nil {
		t.Fatal(err)
	}
	var s struct {
		Value    []byte  `json:"value"`
		Remember bool    `json:"remember"`
		Account  *string `json:"account"`
	}
	if err := json.Unmarshal(openPlain(t, lastForm(t, got()).Get("answer"), "/answer", "submit"), &s); err != nil ||
		!bytes.Equal(s.Value, value) || !s.Remember || s.Account == nil || *s.Account != "alice" {
		t.Fatalf("the submit's payload: %v, remember %v, account %v; value matched %v", err, s.Remember, s.Account, bytes.Equal(s.Value, value))
	}
}

// lastForm is the body of the last request the server saw.
func lastForm(t *testing.T, reqs []seen) url.Values {
	t.Helper()
	form, err := url.ParseQuery(string(reqs[len(reqs)-1].body))
	if err != nil {
		t.Fatal(err)
	}
	return form
}

func TestApproveNeedsASavedValue(t *testing.T) {
	ctx := ctxFor(t)
	srv, _ := server(t, formPage, nil)
	p, err := Open(ctx, srv.URL+"/nonce")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Approve(ctx, ApproveOptions{}); !errors.Is(err, ErrNoApprove) {
		t.Errorf("Approve on a page with no saved value: %v", err)
	}
	if err := p.SubmitWith(ctx, []byte("x"), SubmitOptions{Remember: true}); err == nil {
		t.Error("SubmitWith ticked a box the page does not have")
	}
}
