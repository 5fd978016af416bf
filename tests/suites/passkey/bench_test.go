//go:build linux

package passkey

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/median"
	"github.com/fillgate/fillgate/tests/kit/poll"
)

// loginPage is a plain password login that posts to /done, and
// welcomePage the page /done answers; both with the test's page control
// script (pageProxy), so that the test can take the tab on from either.
const (
	loginPage = `<!doctype html><meta charset=utf-8><title>login</title>
<form method=post action=/done><input name=u autocomplete=username value=ada>
<input type=password id=pw name=p autocomplete=current-password><button>Sign in</button></form>` + pageControl
	welcomePage = `<!doctype html><meta charset=utf-8><title>welcome</title><p>welcome</p>` + pageControl
)

// BenchmarkNoHuman times, side by side in one run, what an agent waits
// for with approval = "none": from `fillgate fill` starting to the site
// having let the user in. Approval none is for a browser nothing drives
// (in one a program drives, fillgate refuses it for a passkey and logs
// in with a saved password in its clean room), so it runs in the
// browser of TestUndrivenPasskeys, which the test reaches only through
// its pages' own script. For the agents' passkey the time is until the
// relying party verified the assertion (the arm, the page's get() once
// fillgate answered "armed", the check, the signature and the count kept
// in the keyring), with --no-wait (it answers "armed", then the agent
// clicks: an MCP agent's way; a run that waits for the page's call
// cannot be timed here, as nothing but a program driving the browser
// could see the tab armed); for a saved password until the site got the
// submitted form (inspect, the keyring read, insert and submit), on the
// same site.
//
//	go test -run '^$' -bench NoHuman -benchtime 20x ./tests/suites/passkey
func BenchmarkNoHuman(b *testing.B) {
	s := startUndriven(b)
	px := s.tab.(*pageTab).px

	// The password login, on the site's origin, its password kept in
	// the keyring.
	var mu sync.Mutex
	var posted []time.Time
	px.mux.HandleFunc("GET /password", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(loginPage))
	})
	px.mux.HandleFunc("POST /done", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		posted = append(posted, time.Now())
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(welcomePage))
	})
	secret := leakscan.NewSecret(b)
	if _, errOut, code := s.cliIn(secret, "remember", "--service", s.svc, "--account", "ada", "--stdin"); code != 0 {
		b.Fatalf("fillgate remember exited %d: %s", code, errOut)
	}
	s.policy("none")

	var pk, pw []time.Duration
	for range b.N {
		// The passkey: the agent clicks once fillgate answers "armed".
		s.tab.open(s.origin + "/")
		before := len(s.site.Logins())
		t0 := time.Now()
		r := s.run(b, "fill", "--service", s.svc, "--field", "passkey", "--no-wait", "--json")
		s.armed(b, r)
		s.tab.eval(`document.getElementById("signin").click(), true`)
		if err := poll.Until(s.ctx, time.Millisecond, func() (bool, error) { return len(s.site.Logins()) > before, nil }); err != nil {
			b.Fatal("the site let nobody in after armed")
		}
		pk = append(pk, time.Since(t0))

		// The password: the field focused, then the fill.
		s.tab.open(s.origin + "/password")
		s.tab.eval(`document.getElementById("pw").focus(), true`)
		mu.Lock()
		n := len(posted)
		mu.Unlock()
		from := px.loads()
		t0 = time.Now()
		r = s.run(b, "fill", "--service", s.svc, "--json")
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
		// The tab goes on to the welcome page, from which the next
		// round takes it.
		if err := px.waitLoad(s.ctx, from, s.origin+"/done"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(median.Ms(pk), "ms-passkey-no-wait-request→login")
	b.ReportMetric(median.Ms(pw), "ms-password-request→submit")
	b.ReportMetric(0, "ns/op")
}
