package hostcore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
)

// loopbackClient sends the tests' own requests to a prompt: it dials only
// 127.0.0.1, reuses no connection and follows no redirect.
func loopbackClient() *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:             nil,
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				if h, _, err := net.SplitHostPort(addr); err != nil || h != "127.0.0.1" {
					return nil, fmt.Errorf("refusing to dial %s: not 127.0.0.1", addr)
				}
				return d.DialContext(ctx, network, addr)
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// formBody is the prompt form's body with csrf (left out when "-"),
// value and the action button. value must be URL-safe, as
// leakscan.NewSecret's are.
func formBody(csrf string, value []byte, action string) []byte {
	var b []byte
	if csrf != "-" {
		b = append(b, "csrf="+url.QueryEscape(csrf)+"&"...)
	}
	b = append(b, "value="...)
	b = append(b, value...)
	return append(b, "&action="+action...)
}

// forged is a request an attacker sends to an open prompt.
type forged struct {
	name   string
	method string
	host   string            // the Host header; "" means the right one
	header map[string]string // set on top of what a browser's form POST sends
	drop   []string          // headers to leave out
	csrf   string            // "" means the page's own token, "-" none
	// noCookie leaves out the cookie the prompt gave the human's browser;
	// every other request carries it, so that each is refused for its own
	// reason.
	noCookie bool
	want     int // the status the prompt must answer with
}

// send sends f to the prompt whose page the human has open, carrying
// value and the page's cookies, and returns the status.
func (f forged) send(ctx context.Context, r *rig, action, pageCSRF string, cookies []*http.Cookie, value []byte) (int, error) {
	u, err := url.Parse(action)
	if err != nil {
		return 0, err
	}
	csrf := f.csrf
	if csrf == "" {
		csrf = pageCSRF
	}
	var body io.Reader
	var raw []byte
	if f.method == http.MethodPost {
		raw = formBody(csrf, value, "submit")
		defer clear(raw)
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, f.method, u.String(), body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Origin", "http://"+u.Host)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, v := range f.header {
		req.Header.Set(k, v)
	}
	for _, k := range f.drop {
		req.Header.Del(k)
	}
	if f.host != "" {
		req.Host = strings.ReplaceAll(f.host, "PORT", u.Port())
	}
	if !f.noCookie {
		for _, c := range cookies {
			req.AddCookie(c)
		}
	}
	resp, err := loopbackClient().Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// attacks sends every forged request with a value of its own while the
// human has the prompt open, then lets the human answer.
func attacks(fs []forged, attack []byte) human {
	return atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
		for _, f := range fs {
			code, err := f.send(ctx, r, p.Action(), p.Hidden("csrf"), p.Cookies(), attack)
			switch {
			case err != nil:
				r.t.Errorf("%s: %s", f.name, r.safe(err.Error()))
			case code != f.want:
				r.t.Errorf("%s: the prompt answered %d, want %d", f.name, code, f.want)
			}
		}
		return submitOn(ctx, p, r.secret)
	})
}

func TestPromptRefusesForgedRequests(t *testing.T) {
	post := http.MethodPost
	groups := map[string][]forged{
		"wrong host": {
			{name: "GET under another host name (DNS rebinding)", method: http.MethodGet, host: "evil.test:PORT", want: 403},
			{name: "GET as localhost", method: http.MethodGet, host: "localhost:PORT", want: 403},
			{name: "POST under another host name", method: post, host: "evil.test", want: 403},
		},
		"wrong origin": {
			{name: "POST from another site", method: post, header: map[string]string{"Origin": "https://evil.test"}, want: 403},
			{name: "POST from an opaque origin", method: post, header: map[string]string{"Origin": "null"}, want: 403},
			{name: "POST from localhost", method: post, header: map[string]string{"Origin": "http://localhost:80"}, want: 403},
			{name: "POST without Origin", method: post, drop: []string{"Origin"}, want: 403},
			{name: "POST marked cross-site", method: post, header: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: 403},
		},
		"browser binding": {
			{name: "POST without the page's cookie", method: post, noCookie: true, want: 403},
			{name: "POST with a forged cookie", method: post, noCookie: true,
				header: map[string]string{"Cookie": "fillgate-prompt=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}, want: 403},
		},
		"csrf token": {
			{name: "POST without the token", method: post, csrf: "-", want: 403},
			{name: "POST with a wrong token", method: post, csrf: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", want: 403},
			{name: "POST with an empty token", method: post, csrf: " ", want: 403},
		},
	}
	for name, fs := range groups {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, setup{page: loginPage("https://github.com")})
			attack := r.newSecret()
			r.behave(attacks(fs, attack))
			got := r.fill("github.com")
			// The refusals left the prompt open for the human, whose
			// answer, and only that, is in the field.
			r.expect(got, fill.StatusOK, "inserted")
			r.expectInserted(r.secret)
			if r.ext.ValueEquals(attack) {
				t.Error("a forged request's value is in the field")
			}
			r.expectExtSaw(1, "inspect", "open_prompt", "close_prompt", "insert", "outcome")
		})
	}
}

// wantStatus closes resp's body and fails the scenario unless what got
// the status want.
func (r *rig) wantStatus(resp *http.Response, want int, what string) {
	resp.Body.Close()
	if resp.StatusCode != want {
		r.t.Errorf("%s got %d, want %d %s", what, resp.StatusCode, want, http.StatusText(want))
	}
}

func TestValueInURLBurnsThePrompt(t *testing.T) {
	r := newRig(t, setup{page: loginPage("https://github.com")})
	attack := r.newSecret()
	r.behave(func(ctx context.Context, r *rig, at prompted) error {
		if _, err := r.open(ctx, at); err != nil {
			return err
		}
		// A page (or a confused human) puts a value in the address.
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, at.url+"?value="+string(attack), nil)
		if err != nil {
			return err
		}
		resp, err := loopbackClient().Do(req)
		if err != nil {
			return err
		}
		r.wantStatus(resp, http.StatusBadRequest, "a GET with a value")
		return nil
	})
	got := r.fill("github.com")
	r.expect(got, fill.StatusFailed, "prompt burned: a request carried a value in its URL, which was discarded")
	r.expectExtSaw(1, "inspect", "open_prompt", "close_prompt", "outcome")
	r.expectNothingInserted()
	r.expectAudit(got)
	// The human, who still has the form open, cannot answer it any more.
	r.expectPromptDead(r.lastPage())
}

func TestReplayAfterAnswer(t *testing.T) {
	r := newRig(t, setup{page: loginPage("https://github.com")})
	attack := r.newSecret()
	// Hold the host between the answer and closing the prompt's server:
	// it waits for the extension to close the prompt window (3 s at most).
	r.ext.Ignore("close_prompt")
	type form struct {
		action, csrf string
		cookies      []*http.Cookie
	}
	forms := make(chan form, 1)
	r.behave(atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
		csrf := p.Hidden("csrf")
		forms <- form{p.Action(), csrf, p.Cookies()}
		u, err := url.Parse(p.Action())
		if err != nil {
			return err
		}
		// A copy of the form's POST already on its way when the human
		// answers: its headers passed every check and the prompt waits
		// for its body (it asked for it with 100 Continue).
		body := formBody(csrf, attack, "submit")
		defer clear(body)
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		var jar []string
		for _, ck := range p.Cookies() {
			jar = append(jar, ck.String())
		}
		_, err = fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nOrigin: http://%s\r\nCookie: %s\r\n"+
			"Content-Type: application/x-www-form-urlencoded\r\nSec-Fetch-Site: same-origin\r\n"+
			"Content-Length: %d\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
			u.Path, u.Host, u.Host, strings.Join(jar, "; "), len(body))
		if err != nil {
			return err
		}
		br := bufio.NewReader(c)
		cont, err := http.ReadResponse(br, nil)
		if err != nil {
			return fmt.Errorf("the copy got no 100 Continue: %w", err)
		}
		if cont.StatusCode != http.StatusContinue {
			return fmt.Errorf("the copy got %d before its body, want 100 Continue", cont.StatusCode)
		}
		if err := submitOn(ctx, p, r.secret); err != nil {
			return err
		}
		if _, err := r.ext.Wait(ctx, fakeext.OfType("close_prompt")); err != nil {
			return err
		}
		// The host has the human's answer; now the copy's value comes. The
		// prompt's server either answers it 410 Gone or, as it shuts down
		// once answered (the window closing meanwhile), has already
		// hung up on it; nothing else.
		_, werr := c.Write(body)
		resp, err := http.ReadResponse(br, nil)
		switch {
		case err != nil && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)):
			return nil // hung up
		case err != nil:
			return fmt.Errorf("the replay got no answer: %w (write: %v)", err, werr)
		}
		r.wantStatus(resp, http.StatusGone, "the replay")
		return nil
	}))
	got := r.fill("github.com")
	r.expect(got, fill.StatusOK, "inserted")
	r.expectInserted(r.secret)
	if r.ext.ValueEquals(attack) {
		t.Error("the replayed value is in the field")
	}
	// Once the request is over the prompt's server is gone: a replay now
	// reaches nobody.
	var fm form
	select {
	case fm = <-forms:
	case <-r.ctx.Done():
		t.Fatal("the human never had the prompt's form")
	}
	f := forged{name: "replay after the request", method: http.MethodPost}
	if code, err := f.send(r.ctx, r, fm.action, fm.csrf, fm.cookies, attack); err == nil || !strings.Contains(err.Error(), "connection refused") {
		msg := fmt.Sprintf("status %d", code)
		if err != nil {
			msg = r.safe(err.Error())
		}
		t.Errorf("a replay after the request: %s, want connection refused", msg)
	}
	r.expectExtSaw(1, "inspect", "open_prompt", "close_prompt", "insert", "outcome")
}
