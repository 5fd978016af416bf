package hostcore

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
)

// loadPolicy lets the one agent of the load tests (this test binary) ask
// as often as the tests do.
const loadPolicy = "rate_limit = \"1000/1m\"\n"

// statusLoad runs agents goroutines, each asking the host in dir for its
// status (as `fillgate status` does: every host, with its browser's
// active tab) over and over until ctx ends, and returns every round
// trip's time and the errors.
func statusLoad(ctx context.Context, dir string, agents int) ([]time.Duration, []error) {
	var (
		mu   sync.Mutex
		ds   []time.Duration
		errs []error
		wg   sync.WaitGroup
	)
	start := make(chan struct{})
	for range agents {
		wg.Go(func() {
			<-start
			var mine []time.Duration
			for ctx.Err() == nil {
				t0 := time.Now()
				hs, err := agentsock.Status(context.WithoutCancel(ctx), dir) // a round trip under way finishes
				d := time.Since(t0)
				if err == nil && (len(hs) != 1 || !hs[0].Extension.Connected || hs[0].ActiveTab == nil) {
					err = fmt.Errorf("status %+v", hs)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
				mine = append(mine, d)
			}
			mu.Lock()
			ds = append(ds, mine...)
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	slices.Sort(ds)
	return ds, errs
}

// TestStatusUnderLoad: 200 agents ask the real host binary for its status
// at once, over and over, for 10 s. Every one is answered; the host's
// memory stays bounded and it lets go of everything afterwards. It logs
// the round trips' p50 and p99 (BenchmarkStatusParallel measures the
// same as a benchmark).
func TestStatusUnderLoad(t *testing.T) {
	t.Parallel()
	r := newRig(t, setup{page: loginPage("https://github.com"), budget: 3 * time.Minute})
	base := r.baseline()
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	const agents = 200
	ds, errs := statusLoad(ctx, r.dirs.socketDir(t), agents)
	for i, err := range errs {
		if i == 5 {
			t.Errorf("… %d errors in all", len(errs))
			break
		}
		t.Errorf("a status under load: %v", err)
	}
	if len(ds) < agents {
		t.Fatalf("only %d status round trips in 10 s", len(ds))
	}
	f := r.expectSettled(base)
	t.Logf("%d agents, 10 s: %d status round trips (%.0f/s), p50 %v, p99 %v, max %v; host RSS %.1f MiB at rest, peak %.1f MiB (race detector: %v)",
		agents, len(ds), float64(len(ds))/10, percentile(ds, 50).Round(time.Microsecond), percentile(ds, 99).Round(time.Microsecond),
		ds[len(ds)-1].Round(time.Microsecond), float64(base.rssKB)/1024, float64(f.hwmKB)/1024, raceEnabled)
	if f.hwmKB-base.hwmKB > 512<<10 {
		t.Errorf("the load cost the host %d MiB at peak", (f.hwmKB-base.hwmKB)>>10)
	}
}

// BenchmarkStatusParallel is a status round trip (every host, with the
// active tab) with 200 agents asking the real host binary at once.
func BenchmarkStatusParallel(b *testing.B) {
	r := newRig(b, setup{page: loginPage("https://github.com"), budget: 10 * time.Minute})
	dir := r.dirs.socketDir(b)
	var (
		mu sync.Mutex
		ds []time.Duration
	)
	var failed atomic.Int64
	b.SetParallelism(max(1, 200/runtime.GOMAXPROCS(0))) // 200 goroutines
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			t0 := time.Now()
			hs, err := agentsock.Status(r.ctx, dir)
			mine = append(mine, time.Since(t0))
			if err != nil || len(hs) != 1 {
				failed.Add(1)
			}
		}
		mu.Lock()
		ds = append(ds, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	if n := failed.Load(); n != 0 {
		b.Fatalf("%d status requests failed", n)
	}
	reportPercentiles(b, "", ds)
}

// deepOrigin is a login page whose host has n labels under example.com,
// so that n+1 services (example.com, and each name under it down to the
// page's own host) all cover it.
func deepOrigin(n int) (origin string, services []string) {
	host := "example.com"
	services = append(services, host)
	for i := range n {
		host = fmt.Sprintf("l%d.%s", i, host)
		services = append(services, host)
	}
	return "https://" + host, services
}

// TestTwentyConcurrentFills: 20 agents ask for 20 different services of
// the page at once, and 5 more ask again for services whose prompts are
// open. Each of the 20 gets its own prompt, all open at the same time,
// and, once the human has answered every one, ok; each of the 5 gets a
// clear refused at once. Nothing deadlocks, and the host's memory stays
// bounded and comes back.
func TestTwentyConcurrentFills(t *testing.T) {
	t.Parallel()
	const n = 20
	origin, services := deepOrigin(n - 1)
	r := newRig(t, setup{page: loginPage(origin), policy: loadPolicy, budget: 4 * time.Minute})
	// Warm up once, so the baseline has what the host starts lazily.
	r.behave(answers(r.secret))
	r.expect(r.fill(services[0]), fill.StatusOK, "inserted")
	base := r.baseline()

	values := map[string][]byte{}
	for _, s := range services {
		values[s] = r.newSecret()
	}
	var mu sync.Mutex
	opened := map[string]bool{}
	all := make(chan struct{})
	extra := make(chan struct{})
	r.behave(atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
		svc := ""
		for _, s := range services {
			if strings.Contains(p.HTML(), `for <code dir="ltr">`+s+`</code>`) {
				svc = s
			}
		}
		if svc == "" {
			return fmt.Errorf("a prompt names none of the services")
		}
		mu.Lock()
		if opened[svc] {
			mu.Unlock()
			return fmt.Errorf("a second prompt for %s", svc)
		}
		opened[svc] = true
		if len(opened) == n {
			close(all)
		}
		mu.Unlock()
		// Answer only once every prompt is open and the extra requests
		// were refused.
		for _, c := range []chan struct{}{all, extra} {
			select {
			case <-c:
			case <-ctx.Done():
				return fmt.Errorf("waiting for the other prompts: %w", ctx.Err())
			}
		}
		return submitOn(ctx, p, values[svc])
	}))
	fills := make([]*running, n)
	for i, s := range services {
		fills[i] = r.startFill(s)
	}
	select {
	case <-all:
	case <-r.ctx.Done():
		mu.Lock()
		t.Fatalf("only %d of %d prompts opened", len(opened), n)
	}
	open := r.figures()
	for i := range 5 {
		r.expect(r.fill(services[i*4]), fill.StatusRefused, "a prompt for "+services[i*4]+" is already open, or a tab is armed for its passkey; answer or cancel it first")
	}
	close(extra)
	for i, p := range fills {
		got := p.wait()
		r.expect(got, fill.StatusOK, "inserted")
		r.expectWhere(got, services[i], origin, fill.FieldPassword)
	}
	if got := r.ext.Inserts(); got != n+1 {
		t.Errorf("%d inserts, want %d", got, n+1)
	}
	if r.promptCount() != n+1 {
		t.Errorf("%d prompts opened, want %d", r.promptCount(), n+1)
	}
	f := r.expectSettled(base)
	t.Logf("host with %d prompts open at once: %s; at rest before %.1f MiB, after %.1f MiB, peak %.1f MiB (race detector: %v)",
		n, open, float64(base.rssKB)/1024, float64(f.rssKB)/1024, float64(f.hwmKB)/1024, raceEnabled)
	if f.hwmKB-base.hwmKB > 256<<10 {
		t.Errorf("20 prompts cost the host %d MiB at peak", (f.hwmKB-base.hwmKB)>>10)
	}
}
