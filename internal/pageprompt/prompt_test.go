package pageprompt_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/pageprompt"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

func TestSubmitRoundTrip(t *testing.T) {
	ctx := testctx.New(t)
	secret := leakscan.NewSecret(t)
	p, logs := startPrompt(t, ctx, testInfo())

	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	form := page.HTML()
	if err := page.Submit(ctx, secret); err != nil {
		t.Fatalf("submit: %v", err)
	}
	if !strings.Contains(page.HTML(), "Sent. You can close this window.") {
		t.Errorf("final page does not say Sent:\n%s", page.HTML())
	}
	a, err := waitAnswer(t, ctx, p)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	if a.Cancelled {
		t.Errorf("answer says cancelled")
	}
	sameValue(t, a.Value, secret)
	clear(a.Value)

	// A second Wait finds nothing to hand over.
	if _, err := waitAnswer(t, ctx, p); !errors.Is(err, pageprompt.ErrClosed) {
		t.Errorf("second wait: %v, want ErrClosed", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	noLeak(t, secret, map[string][]byte{
		"form page":  []byte(form),
		"final page": []byte(page.HTML()),
		"headers":    dumpHeader(page.Header()),
		"log":        logs.Bytes(),
	})
}

func TestCancelRoundTrip(t *testing.T) {
	ctx := testctx.New(t)
	secret := leakscan.NewSecret(t)
	p, logs := startPrompt(t, ctx, testInfo())

	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	// The human typed the secret, then thought better of it.
	if err := page.CancelTyped(ctx, secret); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if !strings.Contains(page.HTML(), "Cancelled.") {
		t.Errorf("final page does not say Cancelled:\n%s", page.HTML())
	}
	a, err := waitAnswer(t, ctx, p)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	if !a.Cancelled {
		t.Errorf("answer is not cancelled")
	}
	if a.Value != nil {
		t.Errorf("a cancelled answer holds a value")
	}
	noLeak(t, secret, map[string][]byte{
		"final page": []byte(page.HTML()),
		"headers":    dumpHeader(page.Header()),
		"log":        logs.Bytes(),
	})
}

func TestCancelWithNothingTyped(t *testing.T) {
	ctx := testctx.New(t)
	p, _ := startPrompt(t, ctx, testInfo())
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := page.Cancel(ctx); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	a, err := waitAnswer(t, ctx, p)
	if err != nil || !a.Cancelled {
		t.Fatalf("wait: cancelled=%v err=%v, want a cancel", a.Cancelled, err)
	}
}

func TestValueBytesSurviveEncoding(t *testing.T) {
	ctx := testctx.New(t)
	// Spaces, '+', '%', '&', '=', quotes and multi-byte UTF-8 must come
	// through byte for byte.
	secret := append(leakscan.NewSecret(t), []byte(` +%&=?#"'<>ü€😀`)...)
	p, _ := startPrompt(t, ctx, testInfo())
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := page.Submit(ctx, secret); err != nil {
		t.Fatalf("submit: %v", err)
	}
	gotValue(t, ctx, p, secret)
}

func TestPageNamesAgentServiceOriginField(t *testing.T) {
	ctx := testctx.New(t)
	for _, tc := range []struct {
		field, title, noun string
		attrs              []string
	}{
		{fill.FieldPassword, "fillgate — password for github.com", "password",
			[]string{`type="text"`, `class="secret"`, `autocomplete="off"`, `spellcheck="false"`, "required"}},
		{fill.FieldOTP, "fillgate — one-time code for github.com", "one-time code",
			[]string{`type="text"`, `class="secret"`, `autocomplete="one-time-code"`, `inputmode="numeric"`, `spellcheck="false"`}},
	} {
		t.Run(tc.field, func(t *testing.T) {
			info := testInfo()
			info.Field = tc.field
			p, _ := startPrompt(t, ctx, info)
			page, err := fakehuman.Open(ctx, p.URL())
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			doc := page.HTML()
			text := visibleText(t, doc)
			for _, want := range []string{
				"claude (pid 4121) via fillgate mcp", // which agent
				"github.com",                         // which service
				"https://github.com",                 // which exact origin
				"the focused " + tc.noun + " field",  // which kind of field
				"never sees what you type",           // the promise
				"the fillgate extension",             // how it gets there
				"Open until",                         // the budget
				"2 min",
			} {
				if !strings.Contains(text, want) {
					t.Errorf("page text lacks %q:\n%s", want, text)
				}
			}
			if got := titleOf(t, doc); got != "fillgate — opening the prompt" {
				t.Errorf("title before the script runs %q, want fillgate — opening the prompt", got)
			}
			if got := elementTag(t, doc, `<div id="answer"`); !strings.Contains(got, `data-title="`+tc.title+`"`) {
				t.Errorf("the title once answerable is not %q: %s", tc.title, got)
			}
			input := elementTag(t, doc, `<input id="value"`)
			for _, a := range tc.attrs {
				if !strings.Contains(input, a) {
					t.Errorf("input lacks %s: %s", a, input)
				}
			}
			// Send comes before Cancel; the field is in no form (the
			// script sends it, encrypted), and Cancel is a form of its own
			// that works without the script.
			send, cancel := strings.Index(doc, `<button id="send"`), strings.Index(doc, `<button id="cancel"`)
			if send < 0 || cancel < 0 || send > cancel {
				t.Errorf("Send must come before Cancel")
			}
			if c := elementTag(t, doc, `<button id="cancel"`); !strings.Contains(c, `type="submit"`) || !strings.Contains(c, `value="cancel"`) {
				t.Errorf("Cancel is not the submit button of its form: %s", c)
			}
			if f := strings.Index(doc, "<form"); f < 0 || f < strings.Index(doc, `<input id="value"`) {
				t.Errorf("the field must come before, and outside, the Cancel form")
			}
			if !strings.Contains(text, "needs JavaScript") {
				t.Errorf("the page does not say it needs JavaScript when it is off")
			}
		})
	}
}

// TestPageSaysWhenTheValueStays: with then none the page says, before the
// person answers, that a typed value stays in the field where the agent's
// tools can read it, and no longer promises the agent never sees it.
func TestPageSaysWhenTheValueStays(t *testing.T) {
	ctx := testctx.New(t)
	for _, saved := range []bool{false, true} {
		info := testInfo()
		info.Stays = true
		if saved {
			info.From = "from pass"
		}
		p, _ := startPrompt(t, ctx, info)
		page, err := fakehuman.Open(ctx, p.URL())
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		text := visibleText(t, page.HTML())
		for _, want := range []string{"what you type stays there", "the agent's browser tools"} {
			if !strings.Contains(text, want) {
				t.Errorf("saved %v: the page lacks %q:\n%s", saved, want, text)
			}
		}
		if strings.Contains(text, "never sees what you type") {
			t.Errorf("saved %v: the page still promises the agent never sees it", saved)
		}
		if got := strings.Contains(text, "submitted at once"); got != saved {
			t.Errorf("saved %v: the page says an approved value is submitted: %v", saved, got)
		}
	}
}

// TestPageSaysWhenWatched: when a program is attached to the login page's
// tab, the page says it can read what goes into the page, and makes no
// promise that the agent never sees the value.
func TestPageSaysWhenWatched(t *testing.T) {
	ctx := testctx.New(t)
	info := testInfo()
	info.Watched = true
	p, _ := startPrompt(t, ctx, info)
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	text := visibleText(t, page.HTML())
	if !strings.Contains(text, "A program is attached to the login page's tab") || strings.Contains(text, "never sees") {
		t.Errorf("the page does not warn, or still promises the agent never sees the value:\n%s", text)
	}
}

func TestPageWithoutBudgetOrAgentName(t *testing.T) {
	ctx := testctx.New(t)
	info := testInfo()
	info.Budget = 0
	info.Agent = fill.Agent{Via: "fillgate fill"}
	info.Via = fill.ViaCDP
	p, _ := startPrompt(t, ctx, info)
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	text := visibleText(t, page.HTML())
	for _, want := range []string{"an unknown process via fillgate fill", "debugging port (CDP)", "you answer"} {
		if !strings.Contains(text, want) {
			t.Errorf("page text lacks %q:\n%s", want, text)
		}
	}
}

func TestHostileNamesAreEscaped(t *testing.T) {
	ctx := testctx.New(t)
	info := testInfo()
	info.Service = "evil.test\"><script>alert(1)</script>\u202e"
	info.Origin = "https://a.test/'><img src=x onerror=alert(2)>\u200b"
	info.Agent.Name = "</code><b>boss</b>\u202egnp.exe" // markup and a bidi override
	p, _ := startPrompt(t, ctx, info)
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	doc := page.HTML()
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	scripts := 0
	for n := range root.Descendants() {
		switch n.DataAtom {
		case atom.Img, atom.B:
			t.Errorf("a hostile name became a <%s> element", n.Data)
		case atom.Script:
			scripts++
		}
	}
	if scripts != 1 {
		t.Errorf("page has %d scripts, want only its own", scripts)
	}
	if strings.ContainsAny(doc, "\u202e\u200b") {
		t.Errorf("a bidi override or zero-width character reached the page")
	}
	text := visibleText(t, doc)
	for _, want := range []string{`evil.test"><script>alert(1)</script>`, `<img src=x onerror=alert(2)>`, "</code><b>boss</b>\uFFFDgnp.exe"} {
		if !strings.Contains(text, want) {
			t.Errorf("page does not show %q as text:\n%s", want, text)
		}
	}
}

func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	ctx := testctx.New(t)
	p, _ := startPrompt(t, ctx, testInfo())
	host := hostOf(t, p.URL())
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	responses := map[string]response{
		"form":       {status: page.StatusCode(), header: page.Header()},
		"wrong path": send(t, ctx, request{method: "GET", url: "http://" + host + "/favicon.ico"}),
		"wrong host": send(t, ctx, request{method: "GET", url: p.URL(), host: "localhost:1"}),
		"bad post":   send(t, ctx, request{method: "POST", url: p.URL()}),
		"method":     send(t, ctx, request{method: "PUT", url: p.URL()}),
	}
	if err := page.Submit(ctx, []byte("x")); err != nil {
		t.Fatalf("submit: %v", err)
	}
	responses["final"] = response{status: page.StatusCode(), header: page.Header()}
	for name, r := range responses {
		h := r.header
		for k, want := range map[string]string{
			"Cache-Control":                "no-store",
			"X-Content-Type-Options":       "nosniff",
			"X-Frame-Options":              "DENY",
			"Cross-Origin-Opener-Policy":   "same-origin",
			"Cross-Origin-Resource-Policy": "same-origin",
		} {
			if got := h.Get(k); got != want {
				t.Errorf("%s: %s = %q, want %q", name, k, got, want)
			}
		}
		wantRP := "no-referrer"
		if name == "form" {
			wantRP = "same-origin" // see writeForm: no-referrer makes browsers send Origin: null
		}
		if got := h.Get("Referrer-Policy"); got != wantRP {
			t.Errorf("%s: Referrer-Policy = %q, want %q", name, got, wantRP)
		}
		csp := h.Get("Content-Security-Policy")
		for _, d := range []string{"default-src 'none'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, d) {
				t.Errorf("%s: CSP %q lacks %q", name, csp, d)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, "*") {
			t.Errorf("%s: CSP %q is not strict", name, csp)
		}
		if len(h.Values("Content-Security-Policy")) != 1 {
			t.Errorf("%s: headers: %s", name, headerKeys(h))
		}
	}
}

func TestInlineStyleAndScriptMatchCSPHashes(t *testing.T) {
	ctx := testctx.New(t)
	p, _ := startPrompt(t, ctx, testInfo())
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	doc := page.HTML()
	csp := page.Header().Get("Content-Security-Policy")
	for _, tag := range []string{"style", "script"} {
		m := regexp.MustCompile(`(?s)<`+tag+`>(.*?)</`+tag+`>`).FindAllStringSubmatch(doc, -1)
		if len(m) != 1 {
			t.Fatalf("page has %d <%s> elements, want 1", len(m), tag)
		}
		sum := sha256.Sum256([]byte(m[0][1]))
		want := tag + "-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q does not allow the page's <%s> (want %s)", csp, tag, want)
		}
	}
	if regexp.MustCompile(`\sstyle=|\son[a-z]+=`).MatchString(doc) {
		t.Errorf("the page has an inline style or event attribute the CSP would block")
	}
}

func TestStartRefusesIncompleteInfo(t *testing.T) {
	ctx := testctx.New(t)
	for name, mutate := range map[string]func(*fill.PromptInfo){
		"no service":      func(i *fill.PromptInfo) { i.Service = "" },
		"no origin":       func(i *fill.PromptInfo) { i.Origin = "" },
		"other field":     func(i *fill.PromptInfo) { i.Field = fill.FieldOther },
		"negative budget": func(i *fill.PromptInfo) { i.Budget = -time.Second },
	} {
		info := testInfo()
		mutate(&info)
		if p, err := pageprompt.Start(ctx, info); err == nil {
			_ = p.Close()
			t.Errorf("%s: Start succeeded", name)
		}
	}
}

// TestRefusalsDoNotConsume sends every kind of request the prompt must
// refuse, each carrying a secret where it could, then answers properly
// and checks the answer is the proper one: no refused request was taken.
func TestRefusalsDoNotConsume(t *testing.T) {
	ctx := testctx.New(t)
	refused := leakscan.NewSecret(t)
	p, logs := startPrompt(t, ctx, testInfo())
	host := hostOf(t, p.URL())
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	csrf := page.Hidden("csrf")
	if len(csrf) < 22 {
		t.Fatalf("no CSRF token in the form")
	}
	// good is a real encrypted answer of the refused secret: each request
	// below carries it and is refused for its own reason anyway.
	good := answerBody(t, page, refused)
	sealed := func(csrf, action string) []byte {
		q, err := url.ParseQuery(string(good))
		if err != nil {
			t.Fatal(err)
		}
		q.Set("action", action)
		q.Set("csrf", csrf)
		if csrf == "" {
			q.Del("csrf")
		}
		return []byte(q.Encode())
	}
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{}
		for kk, vv := range h {
			out[kk] = vv
		}
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	ph := with(postHeaders(p.URL()), "Cookie", cookieHeader(t, page))
	nonce := strings.TrimPrefix(p.URL(), "http://"+host+"/")
	flipped := []byte(nonce)
	flipped[0] ^= 1
	big := append(bytes.Repeat([]byte("a"), 17<<10), good...)

	cases := []struct {
		name string
		req  request
		want int
	}{
		{"GET wrong host", request{method: "GET", url: p.URL(), host: "localhost:" + strings.Split(host, ":")[1]}, 403},
		{"GET rebinding host", request{method: "GET", url: p.URL(), host: "evil.test"}, 403},
		{"POST wrong host", request{method: "POST", url: p.URL(), host: "127.0.0.1", header: ph, body: good}, 403},
		{"GET root", request{method: "GET", url: "http://" + host + "/"}, 404},
		{"GET other nonce", request{method: "GET", url: "http://" + host + "/" + string(flipped)}, 404},
		{"GET nonce prefix", request{method: "GET", url: "http://" + host + "/" + nonce[:len(nonce)-1]}, 404},
		{"GET nonce/extra", request{method: "GET", url: p.URL() + "/x"}, 404},
		{"POST wrong path", request{method: "POST", url: "http://" + host + "/favicon.ico", header: ph, body: good}, 404},
		{"GET cross-site", request{method: "GET", url: p.URL(), header: map[string]string{"Sec-Fetch-Site": "cross-site"}}, 403},
		{"GET cross-site frame", request{method: "GET", url: p.URL(), header: map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}}, 403},
		{"GET cross-site fetch", request{method: "GET", url: p.URL(), header: map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}}, 403},
		{"GET same-site", request{method: "GET", url: p.URL(), header: map[string]string{"Sec-Fetch-Site": "same-site"}}, 403},
		{"POST cross-site", request{method: "POST", url: p.URL(), header: with(ph, "Sec-Fetch-Site", "cross-site"), body: good}, 403},
		{"POST fetch-site none", request{method: "POST", url: p.URL(), header: with(ph, "Sec-Fetch-Site", "none"), body: good}, 403},
		{"POST no origin", request{method: "POST", url: p.URL(), header: with(ph, "Origin", ""), body: good}, 403},
		{"POST null origin", request{method: "POST", url: p.URL(), header: with(ph, "Origin", "null"), body: good}, 403},
		{"POST localhost origin", request{method: "POST", url: p.URL(), header: with(ph, "Origin", "http://localhost:"+strings.Split(host, ":")[1]), body: good}, 403},
		{"POST other port origin", request{method: "POST", url: p.URL(), header: with(ph, "Origin", "http://127.0.0.1:1"), body: good}, 403},
		{"POST no cookie", request{method: "POST", url: p.URL(), header: with(ph, "Cookie", ""), body: good}, 403},
		{"POST wrong cookie", request{method: "POST", url: p.URL(), header: with(ph, "Cookie", "fillgate-prompt="+flipped0(cookieValue(t, page))), body: good}, 403},
		{"POST cookie of another path", request{method: "POST", url: p.URL(), header: with(ph, "Cookie", "fillgate-prompt="+nonce), body: good}, 403},
		{"POST no csrf", request{method: "POST", url: p.URL(), header: ph, body: sealed("", "submit")}, 403},
		{"POST wrong csrf", request{method: "POST", url: p.URL(), header: ph, body: sealed(flipped0(csrf), "submit")}, 403},
		{"POST csrf twice", request{method: "POST", url: p.URL(), header: ph, body: append(sealed("x", "submit"), "&csrf="+csrf...)}, 400},
		{"POST answer twice", request{method: "POST", url: p.URL(), header: ph, body: append(append([]byte(nil), good...), "&answer=x"...)}, 400},
		{"POST plaintext value too", request{method: "POST", url: p.URL(), header: ph, body: append(append([]byte(nil), good...), "&value=x"...)}, 400},
		{"POST plaintext value only", request{method: "POST", url: p.URL(), header: ph, body: []byte("csrf=" + csrf + "&action=submit&value=" + string(refused))}, 400},
		{"POST bad escape", request{method: "POST", url: p.URL(), header: ph, body: append(append([]byte(nil), good...), "&x=%zz&action=%zz"...)}, 400},
		{"POST lone percent", request{method: "POST", url: p.URL(), header: ph, body: []byte("csrf=" + csrf + "&action=submit&answer=ab%4")}, 400},
		{"POST answer for another action", request{method: "POST", url: p.URL(), header: ph, body: sealed(csrf, "approve")}, 400},
		{"POST no answer", request{method: "POST", url: p.URL(), header: ph, body: []byte("csrf=" + csrf + "&action=submit")}, 400},
		{"POST no action", request{method: "POST", url: p.URL(), header: ph, body: []byte("csrf=" + csrf + "&answer=x")}, 400},
		{"POST multipart", request{method: "POST", url: p.URL(), header: with(ph, "Content-Type", "multipart/form-data; boundary=x"), body: good}, 415},
		{"POST json", request{method: "POST", url: p.URL(), header: with(ph, "Content-Type", "application/json"), body: good}, 415},
		{"POST no content type", request{method: "POST", url: p.URL(), header: with(ph, "Content-Type", ""), body: good}, 415},
		{"POST oversize", request{method: "POST", url: p.URL(), header: ph, body: big}, 413},
		{"POST oversize chunked", request{method: "POST", url: p.URL(), header: ph, body: big, chunked: true}, 413},
		{"PUT", request{method: "PUT", url: p.URL(), header: ph, body: good}, 405},
		{"DELETE", request{method: "DELETE", url: p.URL()}, 405},
		{"HEAD", request{method: "HEAD", url: p.URL()}, 405},
		{"POST empty value", request{method: "POST", url: p.URL(), header: ph, body: answerBody(t, page, nil)}, 422},
	}
	seen := map[string][]byte{"log": nil}
	for _, tc := range cases {
		r := send(t, ctx, tc.req)
		if r.status != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, r.status, tc.want)
		}
		seen[tc.name] = r.dump()
		if strings.Contains(tc.name, "cookie") && !strings.Contains(string(r.body), "Not sent: this is not the browser the prompt was opened in.") {
			t.Errorf("%s: the refusal does not tell the human why", tc.name)
		}
	}
	// An absolute-form request line names the host in the URL itself.
	abs := sendRaw(t, ctx, host, "GET "+p.URL()+" HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
	if abs.status != 403 {
		t.Errorf("absolute-form request: status %d, want 403", abs.status)
	}
	// A body announced larger than the cap is refused before it is read
	// (none follows here, so reading would wait for the read timeout).
	announced := sendRaw(t, ctx, host, "POST /"+nonce+" HTTP/1.1\r\nHost: "+host+"\r\nOrigin: http://"+host+
		"\r\nCookie: "+cookieHeader(t, page)+
		"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000000\r\n\r\n")
	if announced.status != 413 {
		t.Errorf("announced oversize body: status %d, want 413", announced.status)
	}
	// HTTP/1.0 without a Host header.
	noHost := sendRaw(t, ctx, host, "GET /"+nonce+" HTTP/1.0\r\n\r\n")
	if noHost.status != 403 {
		t.Errorf("request without Host: status %d, want 403", noHost.status)
	}

	// The empty value showed the form again with a note.
	empty := send(t, ctx, request{method: "POST", url: p.URL(), header: ph, body: answerBody(t, page, nil)})
	if !strings.Contains(string(empty.body), "Nothing was typed") || !strings.Contains(string(empty.body), `name="csrf"`) {
		t.Errorf("an empty value did not show the form again with a note")
	}

	// Now the human answers properly, in the page opened at the start.
	answer := leakscan.NewSecret(t)
	if err := page.Submit(ctx, answer); err != nil {
		t.Fatalf("submit after refusals: %v", err)
	}
	gotValue(t, ctx, p, answer)

	seen["log"] = logs.Bytes()
	noLeak(t, refused, seen)
	noLeak(t, answer, map[string][]byte{"log": logs.Bytes(), "final page": []byte(page.HTML())})
	if !bytes.Contains(logs.Bytes(), []byte("prompt refused")) {
		t.Errorf("refusals were not logged")
	}
	// The log holds neither the nonce, the CSRF token nor the cookie.
	for name, s := range map[string]string{"nonce": nonce, "csrf token": csrf, "cookie": cookieValue(t, page)} {
		if bytes.Contains(logs.Bytes(), []byte(s)) {
			t.Errorf("the log holds the %s", name)
		}
	}
}

func TestQueryStringBurnsPrompt(t *testing.T) {
	for _, method := range []string{"GET", "POST"} {
		t.Run(method, func(t *testing.T) {
			ctx := testctx.New(t)
			secret := leakscan.NewSecret(t)
			p, logs := startPrompt(t, ctx, testInfo())
			host := hostOf(t, p.URL())

			// A query on a wrong path is only a 404 and burns nothing.
			r404 := send(t, ctx, request{method: "GET", url: "http://" + host + "/x?value=" + string(secret)})
			if r404.status != 404 {
				t.Errorf("query on a wrong path: status %d, want 404", r404.status)
			}
			page, err := fakehuman.Open(ctx, p.URL())
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			req := request{method: method, url: p.URL() + "?value=" + string(secret) + "&action=submit"}
			if method == "POST" {
				req.header = postHeaders(p.URL())
				req.body = answerBody(t, page, secret)
			}
			r := send(t, ctx, req)
			if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "value came in the address") {
				t.Errorf("status %d, want 400 and the burned page", r.status)
			}
			a, err := waitAnswer(t, ctx, p)
			if !errors.Is(err, pageprompt.ErrBurned) {
				t.Errorf("wait: %v, want ErrBurned", err)
			}
			if a.Value != nil {
				t.Errorf("a burned prompt handed over a value")
			}
			// The open page can no longer answer.
			if err := page.Submit(ctx, secret); err == nil {
				t.Errorf("submit after a burn succeeded")
			}
			noLeak(t, secret, map[string][]byte{"burn answer": r.dump(), "404 answer": r404.dump(), "log": logs.Bytes()})
		})
	}
}

func TestReplayAfterAnswerFails(t *testing.T) {
	ctx := testctx.New(t)
	p, _ := startPrompt(t, ctx, testInfo())
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := page.Submit(ctx, []byte("first")); err != nil {
		t.Fatalf("submit: %v", err)
	}
	if a, err := waitAnswer(t, ctx, p); err != nil {
		t.Fatalf("wait: %v", err)
	} else {
		clear(a.Value)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	// The same form, posted again, reaches nobody.
	req, _ := http.NewRequestWithContext(ctx, "POST", p.URL(), bytes.NewReader(answerBody(t, page, []byte("second"))))
	for k, v := range postHeaders(p.URL()) {
		req.Header.Set(k, v)
	}
	if resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req); err == nil {
		_ = resp.Body.Close()
		t.Errorf("a replayed POST got %d; the server should be gone", resp.StatusCode)
	}
	if _, err := waitAnswer(t, ctx, p); !errors.Is(err, pageprompt.ErrClosed) {
		t.Errorf("wait after replay: %v, want ErrClosed", err)
	}
}

func TestWaitReturnsContextError(t *testing.T) {
	ctx := testctx.New(t)
	p, _ := startPrompt(t, ctx, testInfo())
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if _, err := p.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait: %v, want DeadlineExceeded", err)
	}
	cancelled, cancel2 := context.WithCancel(ctx)
	cancel2()
	if _, err := p.Wait(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait: %v, want Canceled", err)
	}
	// Giving up waiting does not close the prompt: an answer still counts.
	secret := leakscan.NewSecret(t)
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open after a timed-out wait: %v", err)
	}
	if err := page.Submit(ctx, secret); err != nil {
		t.Fatalf("submit: %v", err)
	}
	gotValue(t, ctx, p, secret)
}

func TestBudgetRunsOut(t *testing.T) {
	ctx := testctx.New(t)
	info := testInfo()
	info.Budget = time.Millisecond
	p, _ := startPrompt(t, ctx, info)
	_, err := waitAnswer(t, ctx, p)
	if !errors.Is(err, pageprompt.ErrExpired) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait: %v, want ErrExpired (a DeadlineExceeded)", err)
	}
	if _, err := fakehuman.Open(ctx, p.URL()); err == nil {
		t.Errorf("the page still opens after the budget ran out")
	}
}

func TestCloseBeforeAnswer(t *testing.T) {
	ctx := testctx.New(t)
	p, _ := startPrompt(t, ctx, testInfo())
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if _, err := waitAnswer(t, ctx, p); !errors.Is(err, pageprompt.ErrClosed) {
		t.Errorf("wait: %v, want ErrClosed", err)
	}
	if err := page.Submit(ctx, []byte("late")); err == nil {
		t.Errorf("submit after Close succeeded")
	}
	// The request ended early: the port stays bound for the rest of the
	// budget, answering 410, so nobody else can take it.
	if r := send(t, ctx, request{method: "GET", url: p.URL()}); r.status != http.StatusGone {
		t.Errorf("after Close the prompt answered %d, want 410", r.status)
	}
	if l, err := net.Listen("tcp4", hostOf(t, p.URL())); err == nil {
		_ = l.Close()
		t.Errorf("another listener could bind the prompt's port after Close")
	}
}

func TestStartContextBoundsPrompt(t *testing.T) {
	ctx := testctx.New(t)
	life, cancel := context.WithCancel(ctx)
	p, _ := startPrompt(t, life, testInfo())
	cancel()
	if _, err := waitAnswer(t, ctx, p); !errors.Is(err, pageprompt.ErrClosed) {
		t.Errorf("wait: %v, want ErrClosed once Start's ctx ended", err)
	}
}

func TestConcurrentPrompts(t *testing.T) {
	ctx := testctx.New(t)
	const n = 8
	var wg sync.WaitGroup
	urls := make(chan string, n)
	for i := range n {
		wg.Go(func() {
			info := testInfo()
			info.Service = "svc" + string(rune('a'+i)) + ".test"
			p, err := pageprompt.Start(ctx, info)
			if err != nil {
				t.Errorf("start %d: %v", i, err)
				return
			}
			defer func() { _ = p.Close() }()
			urls <- p.URL()
			secret := leakscan.NewSecret(t)
			page, err := fakehuman.Open(ctx, p.URL())
			if err != nil {
				t.Errorf("open %d: %v", i, err)
				return
			}
			if !strings.Contains(page.HTML(), info.Service) {
				t.Errorf("prompt %d shows another prompt's page", i)
			}
			// Odd prompts cancel, even ones submit.
			if i%2 == 1 {
				err = page.Cancel(ctx)
			} else {
				err = page.Submit(ctx, secret)
			}
			if err != nil {
				t.Errorf("answer %d: %v", i, err)
				return
			}
			a, err := p.Wait(ctx)
			if err != nil {
				t.Errorf("wait %d: %v", i, err)
				return
			}
			if a.Cancelled != (i%2 == 1) {
				t.Errorf("prompt %d got another prompt's kind of answer", i)
			}
			if i%2 == 0 && !bytes.Equal(a.Value, secret) {
				t.Errorf("prompt %d: value differed", i)
			}
			clear(a.Value)
		})
	}
	wg.Wait()
	close(urls)
	seen := map[string]bool{}
	for u := range urls {
		if seen[u] {
			t.Errorf("two prompts share a URL")
		}
		seen[u] = true
	}
}

func BenchmarkStartSubmitWait(b *testing.B) {
	ctx := context.Background()
	info := testInfo()
	value := []byte("correct horse battery staple")
	for b.Loop() {
		p, err := pageprompt.Start(ctx, info)
		if err != nil {
			b.Fatal(err)
		}
		page, err := fakehuman.Open(ctx, p.URL())
		if err != nil {
			b.Fatal(err)
		}
		if err := page.Submit(ctx, value); err != nil {
			b.Fatal(err)
		}
		a, err := p.Wait(ctx)
		if err != nil {
			b.Fatal(err)
		}
		clear(a.Value)
		_ = p.Close()
	}
}

// dumpHeader is h as bytes, for leak scanning.
func dumpHeader(h http.Header) []byte {
	var b bytes.Buffer
	_ = h.Write(&b)
	return b.Bytes()
}

// visibleText is the text a human reads on the page (no markup, no style
// or script).
func visibleText(t *testing.T, doc string) string {
	t.Helper()
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	var b strings.Builder
	for n := range root.Descendants() {
		if n.Type == html.TextNode && n.Parent != nil && n.Parent.DataAtom != atom.Style && n.Parent.DataAtom != atom.Script && n.Parent.DataAtom != atom.Title {
			b.WriteString(n.Data)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// titleOf is the page's <title>.
func titleOf(t *testing.T, doc string) string {
	t.Helper()
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	for n := range root.Descendants() {
		if n.DataAtom == atom.Title && n.FirstChild != nil {
			return n.FirstChild.Data
		}
	}
	return ""
}

// elementTag is the start tag in doc that begins with prefix.
func elementTag(t *testing.T, doc, prefix string) string {
	t.Helper()
	i := strings.Index(doc, prefix)
	if i < 0 {
		t.Fatalf("page has no %s", prefix)
	}
	j := strings.Index(doc[i:], ">")
	return doc[i : i+j+1]
}
