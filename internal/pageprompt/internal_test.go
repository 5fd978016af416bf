package pageprompt

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
	"errors"
	stdlog "log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

func testPrompt(t *testing.T) *prompt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	fp, err := Start(ctx, fill.PromptInfo{
		Agent: fill.Agent{Name: "claude", PID: 1}, Service: "github.com",
		Origin: "https://github.com", Field: fill.FieldPassword, Budget: time.Minute,
	})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = fp.Close() })
	return fp.(*prompt)
}

// post is the browser's form POST to p, served by p's handler directly,
// with the cookie the form's GET set.
func post(p *prompt, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, p.path, strings.NewReader(body))
	r.Host = p.host
	r.Header.Set("Origin", p.origin)
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.AddCookie(&http.Cookie{Name: cookieName, Value: string(p.cookie)})
	w := httptest.NewRecorder()
	p.ServeHTTP(w, r)
	return w
}

// sealTo encrypts payload for p as the page does, padded with spaces to
// a multiple of answerPad, with info as both HKDF info and additional
// data; the tests vary it to check the binding.
func sealTo(t testing.TB, pub []byte, info string, payload []byte) string {
	t.Helper()
	n := max(1, (len(payload)+answerPad-1)/answerPad) * answerPad
	padded := append(append(make([]byte, 0, n), payload...), bytes.Repeat([]byte(" "), n-len(payload))...)
	return sealRaw(t, pub, info, padded)
}

// sealRaw encrypts plain as it is, padding and all.
func sealRaw(t testing.TB, pub []byte, info string, payload []byte) string {
	t.Helper()
	mine, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	peer, err := ecdh.X25519().NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	shared, err := mine.ECDH(peer)
	if err != nil {
		t.Fatal(err)
	}
	salt := append(append([]byte(nil), pub...), mine.PublicKey().Bytes()...)
	key, err := hkdf.Key(sha256.New, shared, salt, info, 32)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	iv := make([]byte, 12)
	_, _ = rand.Read(iv)
	out := append(append([]byte(nil), mine.PublicKey().Bytes()...), iv...)
	return base64.RawURLEncoding.EncodeToString(gcm.Seal(out, iv, payload, []byte(info)))
}

// submitBody is the body of the page's submit of value to p.
func submitBody(t *testing.T, p *prompt, value string) string {
	t.Helper()
	payload := `{"value":"` + base64.StdEncoding.EncodeToString([]byte(value)) + `"}`
	return "csrf=" + string(p.csrf) + "&action=submit&answer=" + sealTo(t, p.page.keyBytes(t), answerInfo(p.path, "submit"), []byte(payload))
}

// keyBytes is the page's public key.
func (d formData) keyBytes(t *testing.T) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(d.Key)
	if err != nil || len(b) != 32 {
		t.Fatalf("the page's key is not 32 bytes of base64url")
	}
	return b
}

// get is a GET of p's form with the Sec-Fetch-* headers in fetch
// (site, mode, dest; "" leaves one out) and, when withCookie, p's cookie.
func get(p *prompt, withCookie bool, fetch ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, p.path, nil)
	r.Host = p.host
	for i, k := range []string{"Sec-Fetch-Site", "Sec-Fetch-Mode", "Sec-Fetch-Dest"} {
		if i < len(fetch) && fetch[i] != "" {
			r.Header.Set(k, fetch[i])
		}
	}
	if withCookie {
		r.AddCookie(&http.Cookie{Name: cookieName, Value: string(p.cookie)})
	}
	w := httptest.NewRecorder()
	p.ServeHTTP(w, r)
	return w
}

func TestFetchMetadata(t *testing.T) {
	for _, tc := range []struct {
		method string
		header map[string][]string
		ok     bool
	}{
		{"GET", nil, true}, // not a browser that sends them
		{"POST", nil, true},
		{"GET", map[string][]string{"Sec-Fetch-Site": {"none"}}, true},
		{"GET", map[string][]string{"Sec-Fetch-Site": {"same-origin"}}, true},
		{"POST", map[string][]string{"Sec-Fetch-Site": {"same-origin"}}, true},
		{"POST", map[string][]string{"Sec-Fetch-Site": {"none"}}, false},
		// The system opener's file: a top-level navigation from file://.
		{"GET", map[string][]string{"Sec-Fetch-Site": {"cross-site"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"}}, true},
		{"POST", map[string][]string{"Sec-Fetch-Site": {"cross-site"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"}}, false},
		{"GET", map[string][]string{"Sec-Fetch-Site": {"cross-site"}}, false},
		{"GET", map[string][]string{"Sec-Fetch-Site": {"cross-site"}, "Sec-Fetch-Mode": {"navigate"}}, false},
		{"GET", map[string][]string{"Sec-Fetch-Site": {"cross-site"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"iframe"}}, false},
		{"GET", map[string][]string{"Sec-Fetch-Site": {"cross-site"}, "Sec-Fetch-Mode": {"no-cors"}, "Sec-Fetch-Dest": {"document"}}, false},
		{"GET", map[string][]string{"Sec-Fetch-Site": {"cross-site"}, "Sec-Fetch-Mode": {"navigate", "navigate"}, "Sec-Fetch-Dest": {"document"}}, false},
		{"GET", map[string][]string{"Sec-Fetch-Site": {"same-site"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"}}, false},
		{"GET", map[string][]string{"Sec-Fetch-Site": {"none", "none"}}, false},
		{"GET", map[string][]string{"Sec-Fetch-Site": {""}}, false},
	} {
		r := httptest.NewRequest(tc.method, "/x", nil)
		for k, v := range tc.header {
			r.Header[k] = v
		}
		if got := fetchSiteOK(r); got != tc.ok {
			t.Errorf("%s %v: fetchSiteOK = %v, want %v", tc.method, tc.header, got, tc.ok)
		}
	}
}

func TestBinding(t *testing.T) {
	p := testPrompt(t)
	// A POST before any GET has no cookie to carry.
	r := httptest.NewRequest(http.MethodPost, p.path, strings.NewReader(submitBody(t, p, "x")))
	r.Host = p.host
	r.Header.Set("Origin", p.origin)
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	p.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Errorf("POST before the form was loaded: status %d, want 403", w.Code)
	}
	// Refused GETs bind nothing.
	if w := get(p, false, "cross-site", "no-cors", "image"); w.Code != http.StatusForbidden {
		t.Errorf("cross-site subresource GET: status %d, want 403", w.Code)
	}
	first := get(p, false, "cross-site", "navigate", "document")
	if first.Code != http.StatusOK || len(first.Result().Cookies()) != 1 {
		t.Fatalf("first GET: status %d with %d cookies, want 200 and the cookie", first.Code, len(first.Result().Cookies()))
	}
	again := get(p, true, "cross-site", "navigate", "document")
	if again.Code != http.StatusOK || len(again.Result().Cookies()) != 0 {
		t.Errorf("reload with the cookie: status %d with %d cookies, want 200 and no new cookie", again.Code, len(again.Result().Cookies()))
	}
	if w := post(p, submitBody(t, p, "")); w.Code != http.StatusUnprocessableEntity {
		t.Errorf("POST with the cookie reached the form checks: status %d, want 422", w.Code)
	}
	if w := get(p, false, "none"); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "second client") {
		t.Errorf("GET without the cookie after binding: status %d, want 403 and the second-client page", w.Code)
	}
	if _, err := p.Wait(context.Background()); !errors.Is(err, ErrSecondClient) {
		t.Errorf("wait: %v, want ErrSecondClient", err)
	}
	if w := get(p, true, "none"); w.Code != http.StatusGone {
		t.Errorf("the first client after the burn: status %d, want 410", w.Code)
	}
}

// TestEverythingIsGoneAfterAnAnswer drives the handler directly, so it can
// reach it after the answer, when the real server no longer accepts
// connections.
func TestEverythingIsGoneAfterAnAnswer(t *testing.T) {
	for _, action := range []string{actionSubmit, actionCancel} {
		t.Run(action, func(t *testing.T) {
			p := testPrompt(t)
			body := "csrf=" + string(p.csrf) + "&action=cancel"
			if action == actionSubmit {
				body = submitBody(t, p, "first")
			}
			if w := post(p, body); w.Code != http.StatusOK {
				t.Fatalf("answer: status %d", w.Code)
			}
			for name, r := range map[string]*http.Request{
				"GET form":   httptest.NewRequest(http.MethodGet, p.path, nil),
				"GET other":  httptest.NewRequest(http.MethodGet, "/favicon.ico", nil),
				"GET query":  httptest.NewRequest(http.MethodGet, p.path+"?value=x", nil),
				"PUT":        httptest.NewRequest(http.MethodPut, p.path, nil),
				"wrong host": httptest.NewRequest(http.MethodGet, p.path, nil),
			} {
				r.Host = p.host
				if name == "wrong host" {
					r.Host = "evil.test"
				}
				w := httptest.NewRecorder()
				p.ServeHTTP(w, r)
				if w.Code != http.StatusGone {
					t.Errorf("%s after the answer: status %d, want 410", name, w.Code)
				}
				if w.Header().Get("Cache-Control") != "no-store" {
					t.Errorf("%s: 410 lacks the security headers", name)
				}
			}
			// A replay of the accepted POST, token and all.
			if w := post(p, submitBody(t, p, "second")); w.Code != http.StatusGone {
				t.Errorf("replayed POST: status %d, want 410", w.Code)
			}
			a, err := p.Wait(context.Background())
			if err != nil {
				t.Fatalf("wait: %v", err)
			}
			if action == actionSubmit && !bytes.Equal(a.Value, []byte("first")) {
				t.Errorf("value differed: the replay replaced the first answer")
			}
			if a.Cancelled != (action == actionCancel) {
				t.Errorf("cancelled = %v", a.Cancelled)
			}
		})
	}
}

func TestCloseZeroesAnUncollectedValue(t *testing.T) {
	p := testPrompt(t)
	if w := post(p, submitBody(t, p, "hunter2hunter2")); w.Code != http.StatusOK {
		t.Fatalf("answer: status %d", w.Code)
	}
	p.mu.Lock()
	held := p.answer.Value
	p.mu.Unlock()
	if len(held) == 0 {
		t.Fatalf("the prompt holds no value after a submit")
	}
	if err := p.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if !bytes.Equal(held, make([]byte, len(held))) {
		t.Errorf("Close left the uncollected value in memory")
	}
	if _, err := p.Wait(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("wait: %v, want ErrClosed", err)
	}
}

func TestAnswerAfterCloseIsDropped(t *testing.T) {
	p := testPrompt(t)
	if err := p.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	// A request already inside the handler when Close ran.
	if w := post(p, submitBody(t, p, "late")); w.Code != http.StatusGone {
		t.Errorf("POST after Close: status %d, want 410", w.Code)
	}
	if _, err := p.Wait(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("wait: %v, want ErrClosed", err)
	}
}

func TestPercentDecode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"abc", "abc"},
		{"a+b", "a b"},
		{"%2B%2b%25", "++%"},
		{"%C3%BC%E2%82%AC", "ü€"},
		{"%00x", "\x00x"},
	} {
		got, err := percentDecode([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("percentDecode(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if cap(got) > len(tc.in) {
			t.Errorf("percentDecode(%q) grew its buffer", tc.in)
		}
	}
	for _, in := range []string{"%", "%4", "a%zz", "%g0", "%0g"} {
		if _, err := percentDecode([]byte(in)); !errors.Is(err, errBadEscape) {
			t.Errorf("percentDecode(%q): err %v, want errBadEscape", in, err)
		}
	}
}

func TestParseForm(t *testing.T) {
	f, err := parseForm([]byte("x=1&&csrf=t%3D&answer=abc_-&value=&action=submit&other"))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if string(f.csrf.b) != "t%3D" || !f.value.ok || len(f.value.b) != 0 || string(f.action.b) != "submit" || string(f.answer.b) != "abc_-" {
		t.Errorf("parse gave csrf=%q value.ok=%v action=%q answer=%q", f.csrf.b, f.value.ok, f.action.b, f.answer.b)
	}
	for _, dup := range []string{"value=a&value=b", "answer=a&answer=b", "csrf=a&csrf=b", "action=submit&action=cancel"} {
		if _, err := parseForm([]byte(dup)); !errors.Is(err, errDuplicateField) {
			t.Errorf("%s: err %v, want errDuplicateField", dup, err)
		}
	}
	g, _ := parseForm([]byte("action=cancel"))
	if g.csrf.ok || g.value.ok || g.answer.ok {
		t.Errorf("absent fields reported present")
	}
}

// TestAnswerIsBoundToPromptAndAction: an answer sealed for another
// prompt's nonce, for another action, to another key, or altered in any
// byte does not decrypt; the prompt stays open and takes the real answer.
func TestAnswerIsBoundToPromptAndAction(t *testing.T) {
	p := testPrompt(t)
	get(p, false, "none") // bind, as the page's browser does
	value := `{"value":"` + base64.StdEncoding.EncodeToString([]byte("bound")) + `"}`
	other, err := newAnswerKey()
	if err != nil {
		t.Fatal(err)
	}
	good := sealTo(t, p.page.keyBytes(t), answerInfo(p.path, actionSubmit), []byte(value))
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	for name, sealed := range map[string]string{
		"another prompt's nonce": sealTo(t, p.page.keyBytes(t), answerInfo("/"+strings.Repeat("A", 43), actionSubmit), []byte(value)),
		"another action":         sealTo(t, p.page.keyBytes(t), answerInfo(p.path, "approve"), []byte(value)),
		"another version":        sealTo(t, p.page.keyBytes(t), "fillgate-prompt-v0 "+p.path+" submit", []byte(value)),
		"another prompt's key":   sealTo(t, other.pub, answerInfo(p.path, actionSubmit), []byte(value)),
		"a flipped tag bit":      flipByte(raw, len(raw)-1),
		"a flipped IV bit":       flipByte(raw, 33),
		"a flipped key bit":      flipByte(raw, 0),
		"a low-order key":        base64.RawURLEncoding.EncodeToString(append(make([]byte, 32), raw[32:]...)),
		"cut short":              base64.RawURLEncoding.EncodeToString(raw[:59]),
		"not base64url":          "*" + good[1:],
	} {
		w := post(p, "csrf="+string(p.csrf)+"&action=submit&answer="+sealed)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "does not decrypt") {
			t.Errorf("%s: status %d %q, want 400 that it does not decrypt", name, w.Code, w.Body.String())
		}
	}
	for name, payload := range map[string]string{
		"no value":     `{"other":"x"}`,
		"null value":   `{"value":null}`,
		"empty value":  `{"value":""}`,
		"not base64":   `{"value":"!!"}`,
		"not JSON":     `value=x`,
		"not a object": `["x"]`,
	} {
		w := post(p, "csrf="+string(p.csrf)+"&action=submit&answer="+sealTo(t, p.page.keyBytes(t), answerInfo(p.path, actionSubmit), []byte(payload)))
		if w.Code != http.StatusBadRequest && w.Code != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d, want 400 or 422", name, w.Code)
		}
	}
	// The right answer, but not padded as the page pads it (its size would
	// tell a traffic recorder the value's length): refused.
	for name, n := range map[string]int{"not padded": 0, "padded one byte short": answerPad - 1, "one byte over": answerPad + 1} {
		plain := []byte(value)
		if n > 0 {
			plain = append(plain, bytes.Repeat([]byte(" "), n-len(plain))...)
		}
		w := post(p, "csrf="+string(p.csrf)+"&action=submit&answer="+sealRaw(t, p.page.keyBytes(t), answerInfo(p.path, actionSubmit), plain))
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "not padded") {
			t.Errorf("%s: status %d %q, want 400 that it is not padded", name, w.Code, w.Body.String())
		}
	}
	if w := post(p, "csrf="+string(p.csrf)+"&action=submit&answer="+good); w.Code != http.StatusOK {
		t.Fatalf("the real answer after the refusals: status %d", w.Code)
	}
	a, err := p.Wait(context.Background())
	if err != nil || !bytes.Equal(a.Value, []byte("bound")) {
		t.Errorf("wait: %v; value differed or missing", err)
	}
	clear(a.Value)
}

// TestPlaintextValueIsRefusedUnread: a POST that carries the value in the
// clear is not the page's; it is refused and the prompt stays open.
func TestPlaintextValueIsRefusedUnread(t *testing.T) {
	p := testPrompt(t)
	get(p, false, "none")
	for _, body := range []string{
		"csrf=" + string(p.csrf) + "&value=hunter2&action=submit",
		submitBody(t, p, "x") + "&value=hunter2",
	} {
		if w := post(p, body); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "plaintext value") {
			t.Errorf("a plaintext value: status %d %q, want 400", w.Code, w.Body.String())
		}
	}
	if p.isEnded() {
		t.Fatalf("a refused plaintext value ended the prompt")
	}
}

// TestReadPayloadIsExact: the decoded value and what the store needs are
// fresh slices of exactly their length.
func TestReadPayloadIsExact(t *testing.T) {
	for _, v := range []string{"a", "ab", "abc", "abcd", strings.Repeat("x", 1000)} {
		b := base64.StdEncoding.EncodeToString([]byte(v))
		got, err := readPayload([]byte(`{"value":"` + b + `","ask":"` + b + `","remember":true,"account":"al"}`))
		if err != nil || string(got.Value) != v || cap(got.Value) != len(v) || string(got.Ask) != v || cap(got.Ask) != len(v) ||
			!got.Remember || got.Account == nil || *got.Account != "al" {
			t.Errorf("readPayload(%d bytes): %v; exact value %v", len(v), err, string(got.Value) == v)
		}
	}
}

func flipByte(b []byte, i int) string {
	c := append([]byte(nil), b...)
	c[i] ^= 1
	return base64.RawURLEncoding.EncodeToString(c)
}

func TestDisplay(t *testing.T) {
	for in, want := range map[string]string{
		"github.com":             "github.com",
		"a\u202eb":               "a\uFFFDb",
		"a\u200bb":               "a\uFFFDb",
		"a\nb\x00":               "a\uFFFDb\uFFFD",
		"bad\xffutf8":            "bad\uFFFDutf8",
		strings.Repeat("x", 300): strings.Repeat("x", maxDisplay) + "…",
	} {
		if got := display(in); got != want {
			t.Errorf("display(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestServerErrorLogKeepsFirstLines: the prompt server's error log keeps
// the first line of each message and drops what follows (a handler
// panic's stack trace, whose argument words could be buffer sizes).
func TestServerErrorLogKeepsFirstLines(t *testing.T) {
	var out bytes.Buffer
	l := stdlog.New(firstLine{slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))}, "", 0)
	l.Printf("http: panic serving 127.0.0.1:1: boom\ngoroutine 7 [running]:\nfillgate.f(0xc000123456, 0x2a, 0x40)")
	if got := out.String(); !strings.Contains(got, "http: panic serving 127.0.0.1:1: boom") || strings.Contains(got, "goroutine") || strings.Contains(got, "0x2a") {
		t.Errorf("the error log kept %q", got)
	}
}

// TestInlineTextStaysInItsElement: the style and the script are inserted
// into the page as they are, so neither may hold what would end its
// element early or change how the HTML parser reads it.
func TestInlineTextStaysInItsElement(t *testing.T) {
	for _, c := range []struct {
		file, text string
		bad        []string
	}{
		{"page/style.css", pageStyle, []string{"</style"}},
		{"page/script.js", pageScript, []string{"</script", "<script", "<!--"}},
	} {
		for _, b := range c.bad {
			if strings.Contains(strings.ToLower(c.text), b) {
				t.Errorf("%s holds %s", c.file, b)
			}
		}
	}
}
