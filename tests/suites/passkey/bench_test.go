//go:build linux

package passkey

import (
	"github.com/fillgate/fillgate/tests/kit/median"

	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/poll"
)

// loginPage is a plain password login that posts to /done.
const loginPage = `<!doctype html><meta charset=utf-8><title>login</title>
<form method=post action=/done><input name=u autocomplete=username value=ada>
<input type=password id=pw name=p autocomplete=current-password><button>Sign in</button></form>`

// BenchmarkNoHuman times, side by side in one run, what an agent waits
// for with approval = "none": from `fillgate fill` starting to the site
// having let the user in. For the agents' passkey that is until the
// relying party verified the assertion (the arm, the page's get() as soon
// as the tab is armed, the check, the signature and the count kept in
// the keyring), both as a run that waits for the page's call and as one
// with --no-wait (it answers "armed", then the agent clicks: an MCP
// agent's way); for a saved password until the site got the submitted
// form (inspect, the keyring read, insert and submit).
//
//	go test -run '^$' -bench NoHuman -benchtime 20x ./tests/suites/passkey
func BenchmarkNoHuman(b *testing.B) {
	s := start(b)
	s.enrol() // once, asked of the person, as always

	// The password site on 127.0.0.1, its password kept in the keyring.
	var mu sync.Mutex
	var posted []time.Time
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(loginPage)) })
	mux.HandleFunc("/done", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		posted = append(posted, time.Now())
		mu.Unlock()
		_, _ = w.Write([]byte("welcome"))
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(mux)
	_ = srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	b.Cleanup(srv.Close)
	pwSvc := fmt.Sprintf("127.0.0.1:%d", l.Addr().(*net.TCPAddr).Port)
	secret := leakscan.NewSecret(b)
	if _, errOut, code := s.cliIn(secret, "remember", "--service", pwSvc, "--account", "ada", "--stdin"); code != 0 {
		b.Fatalf("fillgate remember exited %d: %s", code, errOut)
	}
	s.policyText(fmt.Sprintf("rate_limit = \"1000/1m\"\nno_response_cooldown = \"0s\"\n\n[service.%q]\napproval = \"none\"\n\n[service.%q]\napproval = \"none\"\n", s.svc, pwSvc))

	var pk, pkNoWait, pw []time.Duration
	for range b.N {
		// The passkey: the page calls get() as soon as the tab is armed.
		if err := chromedp.Do(s.tab.(*chromiumTab).cdp, chromedp.Navigate(s.site.URL)); err != nil {
			b.Fatal(err)
		}
		before := len(s.site.Logins())
		t0 := time.Now()
		r := s.run(b, "fill", "--service", s.svc, "--field", "passkey", "--json")
		s.armed(b, r)
		if _, err := chromedp.Run(s.tab.(*chromiumTab).cdp, chromedp.Evaluate[bool](`document.getElementById("signin").click(), true`)); err != nil {
			b.Fatal(err)
		}
		if err := poll.Until(s.ctx, time.Millisecond, func() (bool, error) { return len(s.site.Logins()) > before, nil }); err != nil {
			b.Fatal("the site let nobody in")
		}
		pk = append(pk, time.Since(t0))
		s.result(b, r, fill.StatusOK, "answered")

		// The same with --no-wait, as an agent that makes one call at a
		// time: the run answers "armed", then the agent clicks.
		if err := chromedp.Do(s.tab.(*chromiumTab).cdp, chromedp.Navigate(s.site.URL)); err != nil {
			b.Fatal(err)
		}
		before = len(s.site.Logins())
		t0 = time.Now()
		r = s.run(b, "fill", "--service", s.svc, "--field", "passkey", "--no-wait", "--json")
		if res, code, err := r.Result(s.ctx); err != nil || res.Status != fill.StatusArmed || code != 0 {
			b.Fatalf("fill --no-wait: %+v, exit %d, %v; want armed, exit 0", res, code, err)
		}
		if _, err := chromedp.Run(s.tab.(*chromiumTab).cdp, chromedp.Evaluate[bool](`document.getElementById("signin").click(), true`)); err != nil {
			b.Fatal(err)
		}
		if err := poll.Until(s.ctx, time.Millisecond, func() (bool, error) { return len(s.site.Logins()) > before, nil }); err != nil {
			b.Fatal("the site let nobody in after armed")
		}
		pkNoWait = append(pkNoWait, time.Since(t0))

		// The password: the field focused, then the fill.
		if err := chromedp.Do(s.tab.(*chromiumTab).cdp, chromedp.Navigate(srv.URL)); err != nil {
			b.Fatal(err)
		}
		if _, err := chromedp.Run(s.tab.(*chromiumTab).cdp, chromedp.Evaluate[bool](`document.getElementById("pw").focus(), true`)); err != nil {
			b.Fatal(err)
		}
		mu.Lock()
		n := len(posted)
		mu.Unlock()
		t0 = time.Now()
		r = s.run(b, "fill", "--service", pwSvc, "--json")
		if err := poll.Until(s.ctx, time.Millisecond, func() (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			return len(posted) > n, nil
		}); err != nil {
			b.Fatalf("the site got no form: %s", r.Stdout())
		}
		mu.Lock()
		pw = append(pw, posted[len(posted)-1].Sub(t0))
		mu.Unlock()
		if res, _, err := r.Result(s.ctx); err != nil || res.Status != fill.StatusOK {
			b.Fatalf("password fill: %+v, %v", res, err)
		}
	}
	b.ReportMetric(median.Ms(pk), "ms-passkey-request→login")
	b.ReportMetric(median.Ms(pkNoWait), "ms-passkey-no-wait-request→login")
	b.ReportMetric(median.Ms(pw), "ms-password-request→submit")
	b.ReportMetric(0, "ns/op")
}
