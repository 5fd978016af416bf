package hostcore

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
)

// benchPolicy allows one agent 1000 requests a second, the most a policy
// can; the fill benchmarks also keep under it (see pacer), since the
// host would refuse a tight loop.
const benchPolicy = "rate_limit = \"1000/1s\"\n"

// pacer spaces the starts of a loop's requests 1.1 ms apart (at most 910
// in any second), sleeping outside the benchmark's timer.
type pacer struct {
	b    *testing.B
	next time.Time
}

func (p *pacer) wait() {
	if d := time.Until(p.next); d > 0 {
		p.b.StopTimer()
		time.Sleep(d)
		p.b.StartTimer()
	}
	p.next = time.Now().Add(1100 * time.Microsecond)
}

// timeFills runs b.N fills of req through the agent socket, paced (see
// pacer), and hands each result, error and time to each, which fails the
// benchmark on a result it does not expect.
func timeFills(b *testing.B, r *rig, req fill.Request, each func(res fill.Result, err error, took time.Duration)) {
	dir := r.dirs.socketDir(b)
	pace := pacer{b: b}
	b.ResetTimer()
	for range b.N {
		pace.wait()
		start := time.Now()
		res, err := agentsock.Fill(r.ctx, dir, req, "bench", nil)
		each(res, err, time.Since(start))
	}
	b.StopTimer()
}

// percentile is the nearest-rank p-th percentile of sorted.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p+99)/100 - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// reportPercentiles reports the p50 and p99 of per-op timings ds in
// microseconds, as "<prefix>p50-µs" and "<prefix>p99-µs".
func reportPercentiles(b *testing.B, prefix string, ds []time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	b.ReportMetric(us(percentile(s, 50)), prefix+"p50-µs")
	b.ReportMetric(us(percentile(s, 99)), prefix+"p99-µs")
}

// BenchmarkFillRoundTrip is one fill through the agent socket, the host
// (in this process) and the fake extension's inspect and insert, with the
// prompt answered at once by the fake human over loopback HTTP. It
// reports the whole round trip and the round trip without the human's
// part (from the prompt window opening to the human's answer arriving).
func BenchmarkFillRoundTrip(b *testing.B) {
	r := newRig(b, setup{inProcess: true, policy: benchPolicy, page: loginPage("https://github.com")})
	humanTook := make(chan time.Duration, 1)
	r.behave(func(ctx context.Context, r *rig, at prompted) error {
		start := time.Now()
		p, err := fakehuman.Open(ctx, at.url)
		if err == nil {
			err = p.Submit(ctx, r.secret)
		}
		humanTook <- time.Since(start)
		return err
	})
	total := make([]time.Duration, 0, b.N)
	machine := make([]time.Duration, 0, b.N)
	timeFills(b, r, fill.Request{Service: "github.com"}, func(res fill.Result, err error, took time.Duration) {
		if err != nil || res.Status != fill.StatusOK {
			b.Fatalf("fill: %v, %s: %s", err, res.Status, r.safe(res.Detail))
		}
		human := <-humanTook
		total = append(total, took)
		machine = append(machine, took-human)
	})
	reportPercentiles(b, "", total)
	reportPercentiles(b, "nohuman-", machine)
	if !r.ext.ValueEquals(r.secret) {
		b.Error("the field does not hold the value: value differed")
	}
}

// BenchmarkRefusedAtInspect is a request the policy refuses after the
// extension's inspect: agent → host → extension → agent, no prompt.
func BenchmarkRefusedAtInspect(b *testing.B) {
	r := newRig(b, setup{inProcess: true, policy: benchPolicy, page: loginPage("https://gitlab.com")})
	ds := make([]time.Duration, 0, b.N)
	timeFills(b, r, fill.Request{Service: "github.com"}, func(res fill.Result, err error, took time.Duration) {
		ds = append(ds, took)
		if err != nil || res.Status != fill.StatusRefused || !strings.Contains(res.Detail, "is not github.com") {
			b.Fatalf("fill: %v, %s: %s", err, res.Status, r.safe(res.Detail))
		}
	})
	reportPercentiles(b, "", ds)
	if r.ext.Inserts() != 0 || r.promptCount() != 0 {
		b.Error("a refused request opened a prompt or inserted")
	}
}

// BenchmarkStatus is a status request through the agent socket.
func BenchmarkStatus(b *testing.B) {
	r := newRig(b, setup{inProcess: true, page: loginPage("https://github.com")})
	dir := r.dirs.socketDir(b)
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		st, err := agentsock.Status(r.ctx, dir)
		ds = append(ds, time.Since(start))
		if err != nil || len(st) != 1 || !st[0].Extension.Connected {
			b.Fatalf("status: %v, %+v", err, st)
		}
	}
	b.StopTimer()
	reportPercentiles(b, "", ds)
}

// BenchmarkNoHost is `fillgate fill --via extension` with no host
// running: a whole process that must fail fast. "version" is the same
// binary doing nothing, for scale.
func BenchmarkNoHost(b *testing.B) {
	b.Run("fill", func(b *testing.B) {
		r := newRig(b, setup{noHost: true})
		ds := make([]time.Duration, 0, b.N)
		for range b.N {
			start := time.Now()
			got := r.fill("github.com")
			ds = append(ds, time.Since(start))
			if got.res.Status != fill.StatusFailed || got.exit != fill.StatusFailed.ExitCode() || !strings.Contains(got.res.Detail, noHostDetail) {
				b.Fatalf("got %s (exit %d): %s", got.res.Status, got.exit, r.safe(got.res.Detail))
			}
		}
		b.StopTimer()
		reportPercentiles(b, "", ds)
	})
	b.Run("version", func(b *testing.B) {
		r := newRig(b, setup{noHost: true})
		ds := make([]time.Duration, 0, b.N)
		for range b.N {
			start := time.Now()
			p := r.start("fillgate version", exec.Command(fillgateBin(), "version"), r.dirs.environ())
			if _, exit := p.finish(); exit != 0 {
				b.Fatalf("fillgate version: exit %d", exit)
			}
			ds = append(ds, time.Since(start))
		}
		b.StopTimer()
		reportPercentiles(b, "", ds)
	})
}
