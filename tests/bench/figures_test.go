//go:build linux

package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/repo"
	"github.com/fillgate/fillgate/tests/kit/sessionsite"
)

// sample is the made-up text the benchmark types: no secret of anyone's.
const sample = "bench-Sample-Pa55word"

// series is the timings of one figure, in milliseconds.
type series []float64

func (s series) pct(p float64) float64 {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return c[min(len(c)-1, int(p*float64(len(c))))]
}

func (s series) median() float64 { return s.pct(0.5) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkFigures measures every machine step of a fill that issue 12
// names, on the extension path and the CDP path, side by side in one run
// on one browser with the references: a bare Input.insertText on an open
// CDP session, and Playwright's fresh connectOverCDP + finding the tab +
// keyboard.insertText. FGBENCH_N sets the iterations per figure (20 by
// default); FGBENCH_OUT names a file to write the table to (tests/bench/run
// writes tests/bench/RESULTS.md). It is a benchmark, not a timed test: it
// asserts only that every step worked.
func BenchmarkFigures(b *testing.B) {
	n := 20
	if v, err := strconv.Atoi(os.Getenv("FGBENCH_N")); err == nil && v > 0 {
		n = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	r := newRig(b, ctx)
	f := map[string]series{}
	only := os.Getenv("FGBENCH_ONLY")
	want := func(s string) bool { return only == "" || strings.Contains(only, s) }
	for b.Loop() {
		for _, via := range []string{fill.ViaExtension, fill.ViaCDP} {
			if want(via + "-fill") {
				r.fills(b, via, n, f)
			}
			if want(via + "-refuse") {
				r.refusals(b, via, n, f)
			}
			if want(via + "-none") {
				r.unaskedFills(b, via, n, f)
			}
			if want(via + "-native") {
				r.nativeFills(b, via, n, f)
			}
			if want(via + "-room") {
				r.cleanRoomFills(b, via, n, f)
			}
		}
		if want("ref") {
			r.references(b, n, f)
		}
		if want("process") {
			r.process(b, n, f)
		}
	}
	b.StopTimer()
	table := r.table(f, n)
	b.Log("\n" + table)
	for name, s := range f {
		b.ReportMetric(s.median(), strings.ReplaceAll(name, " ", "-")+"-p50-ms")
	}
	if out := os.Getenv("FGBENCH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// fills runs n fills through via: request → prompt painted, Enter →
// result, and their sum.
func (r *rig) fills(b *testing.B, via string, n int, f map[string]series) {
	tb := r.open("/classic")
	defer tb.close()
	for range n {
		tb.focus("pw")
		k := r.prompts.Count()
		a := r.fill("--service", "127.0.0.1", "--then", "none", "--via", via)
		painted, enter := r.answer(a, k, sample)
		res := a.result(b, r.ctx)
		if res.Status != fill.StatusOK {
			b.Fatalf("%s fill: %+v", via, res)
		}
		f[via+" to prompt"] = append(f[via+" to prompt"], ms(painted.Sub(a.Started)))
		f[via+" enter to result"] = append(f[via+" enter to result"], ms(a.Ended.Sub(enter)))
		f[via+" machine total"] = append(f[via+" machine total"], ms(painted.Sub(a.Started)+a.Ended.Sub(enter)))
	}
}

// cleanRoomFills runs n logins through the clean room (the session site's
// form, the person answering the page prompt as in fills): request →
// prompt painted (the room started, the page opened there, its field
// found and inspected), Enter → result (the insert in the room, the login
// followed to its end, the session handed to the tab), their sum, and
// where the room's time goes, from fillgate.log's timing records. Each
// login gets a fresh tab, the form's user name typed as the agent would.
func (r *rig) cleanRoomFills(b *testing.B, via string, n int, f map[string]series) {
	form := r.sessions.Archetype("form")
	for range n {
		tb := r.openURL(form.Login)
		tb.typeIn("user", sessionsite.User)
		tb.focus("pw")
		k := r.prompts.Count()
		mark := r.logSize()
		a := r.fill("--service", r.sessionsService(), "--via", via)
		painted, enter := r.answer(a, k, sample)
		res := a.result(b, r.ctx)
		if res.Status != fill.StatusOK || res.HandedOver == nil || !*res.HandedOver {
			b.Fatalf("%s login in the clean room: %+v", via, res)
		}
		f[via+" room to prompt"] = append(f[via+" room to prompt"], ms(painted.Sub(a.Started)))
		f[via+" room enter to result"] = append(f[via+" room enter to result"], ms(a.Ended.Sub(enter)))
		f[via+" room machine total"] = append(f[via+" room machine total"], ms(painted.Sub(a.Started)+a.Ended.Sub(enter)))
		if st := r.timings(mark); st != nil {
			for name, steps := range map[string][]string{
				"room start":    {"waited"},
				"room open":     {"page_loaded", "page_settled", "field_found", "inspected"},
				"room settled":  {"login_settled"},
				"room handover": {"session_read", "tab_handed_over"},
			} {
				sum := 0.0
				for _, s := range steps {
					sum += st[s]
				}
				f[via+" "+name] = append(f[via+" "+name], sum)
			}
		}
		tb.close()
		r.spareUp(b, via, mark)
	}
	if got := r.sessions.Logins("form"); got < n {
		b.Fatalf("%s logins in the clean room: the site let in %d, want at least %d", via, got, n)
	}
}

// spareUp waits, on the extension path, until the host's spare clean
// room (started when the request that began at the log's mark ended) is
// up, as it is when a person's requests are seconds apart: at most 30 s.
func (r *rig) spareUp(b *testing.B, via string, mark int64) {
	if via != fill.ViaExtension {
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	if err := poll.Until(ctx, 20*time.Millisecond, func() (bool, error) {
		_, up := r.timings(mark)["spare_up"]
		return up, nil
	}); err != nil {
		b.Logf("the host's spare clean room did not come up within 30 s: %v", err)
	}
}

// nativeFills runs n fills the person answers in the native dialog
// (pinentry on the rig's X display): request → dialog shown, and Enter in
// the dialog → result. "Shown" is when the dialog's window is mapped on
// the display, seen by polling every 2 ms (each poll runs xdotool, a few
// ms): so the figure is up to one poll late.
func (r *rig) nativeFills(b *testing.B, via string, n int, f map[string]series) {
	r.writePolicy(promptNative)
	defer r.writePolicy(promptInBrowser)
	tb := r.open("/classic")
	defer tb.close()
	for range n {
		tb.focus("pw")
		a := r.fill("--service", "127.0.0.1", "--then", "none", "--via", via)
		shown, enter := r.answerNative(a, sample)
		if res := a.result(b, r.ctx); res.Status != fill.StatusOK {
			b.Fatalf("%s fill answered in the native dialog: %+v", via, res)
		}
		f[via+" to dialog"] = append(f[via+" to dialog"], ms(shown.Sub(a.Started)))
		f[via+" dialog enter to result"] = append(f[via+" dialog enter to result"], ms(a.Ended.Sub(enter)))
	}
	if !tb.holds("pw", sample) {
		b.Fatalf("%s fill answered in the native dialog: value differed", via)
	}
}

// unaskedFills times n fills that need no human (approval = none, the
// value remembered in the keyring), each from a fresh `fillgate fill`
// process as an agent runs it, request to result. A saved value is always
// submitted (the page's classic POST), so each fill gets a fresh login
// page, opened before the clock starts.
func (r *rig) unaskedFills(b *testing.B, via string, n int, f map[string]series) {
	before := r.unasked.Logins("/classic/login", []byte(sample))
	for range n {
		tb := r.openOn(r.unasked, "/classic")
		tb.focus("pw")
		a := r.fill("--service", unaskedHost, "--via", via)
		if res := a.result(b, r.ctx); res.Status != fill.StatusOK {
			b.Fatalf("%s fill with no human: %+v", via, res)
		}
		f[via+" no human"] = append(f[via+" no human"], ms(a.Ended.Sub(a.Started)))
		tb.close()
	}
	if got := r.unasked.Logins("/classic/login", []byte(sample)) - before; got != n {
		b.Fatalf("%s fills with no human: the site got the value in %d logins, want %d", via, got, n)
	}
}

// refusals times n refusals decided at inspect: the wrong field focused,
// and a page of another service.
func (r *rig) refusals(b *testing.B, via string, n int, f map[string]series) {
	tb := r.open("/classic")
	defer tb.close()
	for range n {
		for _, c := range []struct{ name, focus, service string }{
			{"refused wrong field", "user", "127.0.0.1"},
			{"refused wrong origin", "pw", "127.0.0.2"},
		} {
			tb.focus(c.focus)
			a := r.fill("--service", c.service, "--via", via)
			if res := a.result(b, r.ctx); res.Status != fill.StatusRefused {
				b.Fatalf("%s %s: %+v", via, c.name, res)
			}
			f[via+" "+c.name] = append(f[via+" "+c.name], ms(a.Ended.Sub(a.Started)))
		}
	}
}

// references times the bare CDP insert and Playwright's fresh connect and
// insert, into the same page.
func (r *rig) references(b *testing.B, n int, f map[string]series) {
	tb := r.open("/classic")
	defer tb.close()
	for range n {
		tb.focus("pw")
		t0 := time.Now()
		if _, err := chromedp.Call(tb.ctx, input.InsertText, input.InsertTextParams{Text: sample}); err != nil {
			b.Fatal(err)
		}
		f["ref bare insertText"] = append(f["ref bare insertText"], ms(time.Since(t0)))
	}
	tb.focus("pw")
	node, err := exec.LookPath("node")
	if err != nil {
		b.Fatal("node not found: run tests/setup")
	}
	cmd := exec.CommandContext(r.ctx, node, repo.Path("tests/bench/playwright-ref.mjs"),
		fmt.Sprintf("http://127.0.0.1:%d", r.chrome.Port), tb.mark, strconv.Itoa(n), sample)
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	out, err := cmd.Output()
	var got struct{ MS []float64 }
	if err != nil || json.Unmarshal(out, &got) != nil || len(got.MS) != n {
		b.Fatalf("the Playwright reference: %v: %s", err, out)
	}
	f["ref playwright connect+insert"] = got.MS
}

// process times the binary itself: `fillgate version` from exec to exit,
// a host's cold start (exec to the answer to the extension's hello), and
// a host's resident memory once idle.
func (r *rig) process(b *testing.B, n int, f map[string]series) {
	for range n {
		t0 := time.Now()
		if out, err := exec.Command(fillgateBin, "version").Output(); err != nil || !strings.HasPrefix(string(out), "fillgate ") {
			b.Fatalf("fillgate version: %v", err)
		}
		f["fill process start"] = append(f["fill process start"], ms(time.Since(t0)))
	}
	env := browser.BaseEnv(r.hostRoot)
	for i := range n {
		d, rss := r.coldHost(b, env, i == n-1)
		f["host cold start"] = append(f["host cold start"], ms(d))
		if rss > 0 {
			f["host idle RSS MB"] = append(f["host idle RSS MB"], rss)
		}
	}
}

// coldHost starts fillgate as Chromium starts a native host, says hello
// as the extension does, and times the wait for the host's answer. With
// idle it also reads the host's resident memory after a second idle.
func (r *rig) coldHost(b *testing.B, env []string, idle bool) (time.Duration, float64) {
	cmd := exec.CommandContext(r.ctx, fillgateBin, manifest.ExtensionOrigin)
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	hello := []byte(`{"type":"hello","version":"` + manifest.Version + `","user_agent":"bench","paused":false,"instance":"bench"}`)
	frame := binary.NativeEndian.AppendUint32(nil, uint32(len(hello)))
	if _, err := stdin.Write(append(frame, hello...)); err != nil {
		b.Fatal(err)
	}
	rd := bufio.NewReader(stdout)
	for {
		var size uint32
		if err := binary.Read(rd, binary.NativeEndian, &size); err != nil {
			b.Fatalf("the cold host said nothing: %v", err)
		}
		body := make([]byte, size)
		if _, err := io.ReadFull(rd, body); err != nil {
			b.Fatal(err)
		}
		if strings.Contains(string(body), `"type":"host"`) {
			break
		}
	}
	d := time.Since(t0)
	if !idle {
		return d, 0
	}
	time.Sleep(time.Second) // idle, on purpose: the figure is the idle host's memory
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return d, float64(kb) / 1024
		}
	}
	return d, 0
}

// table renders the figures as Markdown, with the targets of issue 12
// and the ratios to the references.
func (r *rig) table(f map[string]series, n int) string {
	var sb strings.Builder
	commit, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	uname, _ := exec.Command("uname", "-srm").Output()
	cpus := runtime.NumCPU()
	model := ""
	if cpu, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(cpu), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	bin, _ := browser.ChromiumBinary()
	chromium, _ := exec.Command(bin, "--version").Output()
	fmt.Fprintf(&sb, "# fillgate benchmark (tests/bench/run)\n\n")
	fmt.Fprintf(&sb, "%s, commit %s, %s, %d CPUs (%s), %s, load average %s; %d iterations per figure, milliseconds unless named.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), strings.TrimSpace(string(commit)), strings.TrimSpace(string(uname)),
		cpus, model, strings.TrimSpace(string(chromium)), loadavg(), n)
	bare, pw := f["ref bare insertText"].median(), f["ref playwright connect+insert"].median()
	row := func(name, key, target string, ref float64, refName string) {
		s := f[key]
		if len(s) == 0 {
			return
		}
		ratio := ""
		if ref > 0 {
			ratio = fmt.Sprintf("%.1f× %s", s.median()/ref, refName)
		}
		fmt.Fprintf(&sb, "| %s | %.1f | %.1f | %s | %s |\n", name, s.median(), s.pct(0.9), target, ratio)
	}
	fmt.Fprintf(&sb, "| figure | median | p90 | target | ratio |\n|---|---|---|---|---|\n")
	for _, via := range []string{fill.ViaExtension, fill.ViaCDP} {
		prompt, refuse := "≤ 60", "≤ 15"
		if via == fill.ViaCDP {
			prompt, refuse = "≤ 80", "≤ Playwright fresh connect"
		}
		row(via+": request → prompt painted", via+" to prompt", prompt, 0, "")
		row(via+": Enter in the prompt → agent result", via+" enter to result", "≤ 25", 0, "")
		row(via+": machine total", via+" machine total", "", bare, "bare insertText")
		row(via+": request → native dialog shown (pinentry)", via+" to dialog", "", f[via+" to prompt"].median(), "the page prompt")
		row(via+": Enter in the native dialog → agent result", via+" dialog enter to result", "", f[via+" enter to result"].median(), "the page prompt")
		none, noneRef, noneName := "≤ 3× bare insertText", bare, "bare insertText"
		if via == fill.ViaCDP {
			none, noneRef, noneName = "≤ Playwright fresh connect + insert", pw, "Playwright"
		}
		row(via+": fill with no human (approval none, in the clean room: request → session handed over), fresh `fillgate fill`", via+" no human", none, noneRef, noneName)
		inPage := f[via+" machine total"].median()
		row(via+": clean room: request → prompt painted", via+" room to prompt", "", f[via+" to prompt"].median(), "in the page")
		row(via+": clean room: Enter in the prompt → session handed over (result)", via+" room enter to result", "", f[via+" enter to result"].median(), "in the page")
		row(via+": clean room: machine total", via+" room machine total", "≤ in the page + 600", inPage, "in the page")
		if s := f[via+" room machine total"]; len(s) > 0 && inPage > 0 {
			fmt.Fprintf(&sb, "| %s: the clean room adds (medians) | %.1f | | ≤ 600 | |\n", via, s.median()-inPage)
		}
		row(via+": clean room: waiting for its browser (a spare, started after the last request, on the extension path)", via+" room start", "", 0, "")
		row(via+": clean room: the page opened there, field found and inspected", via+" room open", "", 0, "")
		row(via+": clean room: the login followed to its end (settled)", via+" room settled", "", 0, "")
		row(via+": clean room: the session read and handed to the tab (its navigation)", via+" room handover", "", 0, "")
		row(via+": refused at inspect (wrong field)", via+" refused wrong field", refuse, pw, "Playwright")
		row(via+": refused at inspect (wrong origin)", via+" refused wrong origin", refuse, pw, "Playwright")
	}
	row("reference: bare Input.insertText, open session", "ref bare insertText", "", 0, "")
	row("reference: Playwright connectOverCDP + find tab + insertText", "ref playwright connect+insert", "", bare, "bare insertText")
	row("`fillgate version`, exec → exit", "fill process start", "≤ 10", 0, "")
	row("host cold start, exec → hello answered", "host cold start", "≤ 20", 0, "")
	row("host idle RSS (MB)", "host idle RSS MB", "≤ 20", 0, "")
	return sb.String()
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
