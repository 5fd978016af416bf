package fakehuman

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// formPage is a minimal prompt-like page.
const formPage = `<!doctype html><title>t</title>
<form method="post" action="/answer">
<input type="hidden" name="csrf" value="tok+en/=">
<input type="password" name="value" required>
<button type="submit" name="action" value="submit">Send</button>
<button type="submit" name="action" value="cancel" formnovalidate>Cancel</button>
</form>`

// seen is what the test server received with one POST.
type seen struct {
	header http.Header
	body   []byte
}

// server serves page at every GET and records every POST, answering it
// with a small final page.
func server(t *testing.T, page string, header map[string]string) (*httptest.Server, func() []seen) {
	t.Helper()
	var mu sync.Mutex
	var posts []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			posts = append(posts, seen{r.Header.Clone(), body})
			mu.Unlock()
			_, _ = io.WriteString(w, "<p>Sent.</p>")
			return
		}
		mu.Lock()
		posts = append(posts, seen{r.Header.Clone(), nil})
		mu.Unlock()
		_, _ = io.WriteString(w, page)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), posts...)
	}
}

func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestOpenAndSubmitLikeABrowser(t *testing.T) {
	ctx := ctxFor(t)
	srv, got := server(t, formPage, map[string]string{"Referrer-Policy": "same-origin"})
	p, err := Open(ctx, srv.URL+"/nonce")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if p.Hidden("csrf") != "tok+en/=" || p.Action() != srv.URL+"/answer" {
		t.Errorf("form read as csrf=%q action=%q", p.Hidden("csrf"), p.Action())
	}
	value := []byte("p a+s%s&=ü")
	if err := p.Submit(ctx, value); err != nil {
		t.Fatalf("submit: %v", err)
	}
	if p.HasForm() || !strings.Contains(p.HTML(), "Sent.") {
		t.Errorf("the answer did not become the current page")
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
	for k, want := range map[string]string{
		"Sec-Fetch-Site": "same-origin",
		"Origin":         srv.URL,
		"Content-Type":   "application/x-www-form-urlencoded",
	} {
		if post.header.Get(k) != want {
			t.Errorf("POST %s = %q, want %q", k, post.header.Get(k), want)
		}
	}
	// The body is what a browser sends: tree order, the default button.
	want := "csrf=tok%2Ben%2F%3D&value=p+a%2Bs%25s%26%3D%C3%BC&action=submit"
	if !bytes.Equal(post.body, []byte(want)) {
		t.Errorf("POST body differed from the browser's encoding")
	}
	form, err := url.ParseQuery(string(post.body))
	if err != nil || form.Get("value") != string(value) {
		t.Errorf("value differed after a round trip through net/url")
	}
}

func TestCancelSendsCancelButton(t *testing.T) {
	ctx := ctxFor(t)
	srv, got := server(t, formPage, nil)
	p, err := Open(ctx, srv.URL+"/nonce")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := p.Cancel(ctx); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	reqs := got()
	if body := string(reqs[len(reqs)-1].body); body != "csrf=tok%2Ben%2F%3D&value=&action=cancel" {
		t.Errorf("cancel body %q", body)
	}
	if err := p.Cancel(ctx); !errors.Is(err, ErrNoForm) {
		t.Errorf("cancel on a final page: %v, want ErrNoForm", err)
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
	for name, page := range map[string]string{
		"no form":        "<p>hi</p>",
		"get form":       `<form method="get"><input type="password" name="v"><button>Go</button></form>`,
		"no password":    `<form method="post"><input name="v"><button>Go</button></form>`,
		"two passwords":  `<form method="post"><input type="password" name="a"><input type="password" name="b"><button>Go</button></form>`,
		"no button":      `<form method="post"><input type="password" name="v"></form>`,
		"unnamed secret": `<form method="post"><input type="password"><button>Go</button></form>`,
	} {
		srv, _ := server(t, page, nil)
		if _, err := Open(ctx, srv.URL+"/"); err == nil {
			t.Errorf("%s: Open succeeded", name)
		}
	}
	// A form that posts off loopback is refused before anything is sent.
	srv, got := server(t, strings.Replace(formPage, `action="/answer"`, `action="http://example.com/steal"`, 1), nil)
	p, err := Open(ctx, srv.URL+"/")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := p.Submit(ctx, []byte("x")); err == nil {
		t.Errorf("submit to a non-loopback action succeeded")
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
