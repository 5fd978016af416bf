package suite

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Microsoft/go-winio"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
	"github.com/fillgate/fillgate/tests/kit/child"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/windows/squat"
)

// callerArg is what Chrome passes the native host it starts for
// fillgate's extension.
const callerArg = "chrome-extension://eibglhghnpiamfbahofmkedefkffabnh/"

// host is fillgate.exe in host mode with the fake extension on its
// stdin and stdout, as Chrome starts it.
type host struct {
	cmd    *exec.Cmd
	ext    *fakeext.Ext
	stderr *bytes.Buffer
	done   chan error
}

// startHost writes the person's policy and starts the host with a login
// page on https://example.com focused. human answers each prompt the
// extension opens. The policy asks for the loopback page (there is no
// display for a native dialog under this Wine) and fills in the page:
// Wine cannot tell the host its browser's command line, so the host
// counts its browser as driven, and there is no Windows Chromium in the
// prefix for a clean room; these tests are of the host's pipe and the
// extension's path (the clean room is tested on Linux, tests/suites/cleanroom).
func startHost(t *testing.T, ctx context.Context, w world, human func(url string)) *host {
	t.Helper()
	policy, err := dirs.PolicyFile(envOf(w.env()))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(policy), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policy, []byte("prompt = \"browser\"\ndriven = \"in-page\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, callerArg)
	cmd.Env = w.env()
	cmd.Dir = w.profile
	stdin, stdout := child.Pipes(t, cmd)
	h := &host{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = h.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the host: %v", err)
	}
	go func() { h.done <- cmd.Wait() }()
	h.ext = fakeext.New(stdout, stdin, fakeext.Options{
		Page: fakeext.Page{Tab: 7, Origins: []string{"https://example.com"},
			Field: fill.FieldInfo{Kind: fill.FieldPassword}, Element: "password-input"},
		OnOpenPrompt: func(url string, _ int64) { human(url) },
	})
	go func() { _ = h.ext.Run(ctx) }()
	t.Cleanup(func() {
		h.ext.Disconnect()
		select {
		case <-h.done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-h.done
			t.Errorf("the host did not end within 20s of the extension hanging up")
		}
	})
	if _, err := h.ext.Wait(ctx, fakeext.OfType("host")); err != nil {
		t.Fatalf("the host never answered the extension's hello: %v\n%s", err, h.stderr)
	}
	return h
}

// stop hangs up as the browser does and waits for the host's clean exit.
func (h *host) stop(t *testing.T) {
	t.Helper()
	h.ext.Disconnect()
	select {
	case err := <-h.done:
		h.done <- err
		if err != nil {
			t.Errorf("the host ended with %v once the extension hung up\n%s", err, h.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("the host did not end within 20s of the extension hanging up")
	}
}

// envOf is the environment env as a dirs.Env.
func envOf(env []string) dirs.Env {
	return func(k string) string {
		for _, kv := range env {
			if name, v, ok := strings.Cut(kv, "="); ok && strings.EqualFold(name, k) {
				return v
			}
		}
		return ""
	}
}

// statuses runs fillgate status --json (with args) and reads the hosts.
func statuses(t *testing.T, w world, args ...string) ([]agentsock.HostStatus, result) {
	t.Helper()
	r := w.run(t, nil, append([]string{"status", "--json"}, args...)...)
	var hs []agentsock.HostStatus
	if r.code == 0 {
		if err := json.Unmarshal(r.stdout, &hs); err != nil {
			t.Fatalf("status --json: %v: %s", err, r)
		}
	}
	return hs, r
}

// TestHostModeEndToEnd: fillgate.exe runs as Chrome starts a native host,
// the fake extension speaking native-messaging frames on its stdin and
// stdout. fillgate status from another process lists it over its pipe;
// fillgate fill from another process reaches it, the person answers the
// loopback prompt over HTTP, the value goes to the extension, and the
// agent gets the status. The value is nowhere else: not in any output,
// not in any file of the test's user, not anywhere in the Wine prefix.
func TestHostModeEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	w := newWorld(t)
	secret := leakscan.NewSecret(t)
	var mu sync.Mutex
	var pages []string
	humanErr := make(chan error, 1)
	h := startHost(t, ctx, w, func(url string) {
		p, err := fakehuman.Open(ctx, url)
		if err == nil {
			mu.Lock()
			pages = append(pages, p.HTML())
			mu.Unlock()
			err = p.Submit(ctx, secret)
		}
		humanErr <- err
	})

	hs, r := statuses(t, w)
	if r.code != 0 || len(hs) != 1 || hs[0].PID != h.cmd.Process.Pid || !hs[0].Extension.Connected {
		t.Fatalf("status lists %+v; want the host, pid %d, connected: %s", hs, h.cmd.Process.Pid, r)
	}
	st := hs[0]
	if !strings.HasPrefix(st.Socket, `\\.\pipe\fillgate-`) {
		t.Errorf("the host's endpoint is %q, not a fillgate pipe", st.Socket)
	}
	if st.Drive == nil {
		t.Error("the host says nothing of whether its browser can be driven")
	} else {
		t.Logf("drivability as the host sees it under Wine: driven %v, %q", st.Drive.Driven, st.Drive.Reasons)
	}

	f := w.run(t, nil, "fill", "--service", "example.com", "--json")
	var res fill.Result
	if err := json.Unmarshal(f.stdout, &res); err != nil || f.code != 0 || res.Status != fill.StatusOK || res.Via != fill.ViaExtension {
		t.Fatalf("fill: %+v, %v: %s", res, err, f)
	}
	if err := <-humanErr; err != nil {
		t.Fatalf("the person at the prompt: %v", err)
	}
	if !h.ext.ValueEquals(secret) || h.ext.Submits() != 1 {
		t.Errorf("the extension did not get the typed value and submit it (submits %d)", h.ext.Submits())
	}

	// Through the host's own pipe by name, as --socket does.
	if hs, r := statuses(t, w, "--socket", st.Socket); r.code != 0 || len(hs) != 1 {
		t.Errorf("status --socket %s: %+v: %s", st.Socket, hs, r)
	}
	h.stop(t)
	if hs, r := statuses(t, w); r.code != 1 || len(hs) != 0 {
		t.Errorf("status after the host ended: %s", r)
	}
	runDir, _ := dirs.Runtime(envOf(w.env()))
	for _, p := range []string{agentsock.SocketPath(runDir), st.Socket} {
		dctx, dcancel := context.WithTimeout(ctx, time.Second)
		if c, err := winio.DialPipeContext(dctx, p); err == nil {
			c.Close()
			t.Errorf("the host's pipe %s outlived it", p)
		}
		dcancel()
	}

	mu.Lock()
	outs := map[string][]byte{
		"fill's stdout": f.stdout, "fill's stderr": f.stderr, "status's output": r.stdout,
		"the host's stderr": h.stderr.Bytes(), "the result": []byte(fmt.Sprintf("%+v", res)),
		"the prompt page": []byte(strings.Join(pages, "\n")),
	}
	mu.Unlock()
	for name, b := range outs {
		leakscan.Agent(t, secret, name, b)
	}
	scanPrefix(t, secret, w.root, began)
}

// scanPrefix looks for the secret in every file the test's user has
// (root) and in every file of the Wine prefix (drive C: and the registry
// files) written since the test began: a file last written before the
// secret existed cannot hold it, and reading the prefix's 700 MB of
// Windows DLLs under Wine takes minutes.
func scanPrefix(t *testing.T, secret []byte, root string, since time.Time) {
	t.Helper()
	start := time.Now()
	n := leakscan.Dirs(t, secret, root)
	prefix := os.Getenv("WINEPREFIX")
	if prefix == "" {
		t.Log("not under Wine (no WINEPREFIX): the leak scan covers the test's own folders only")
		return
	}
	win := "Z:" + strings.ReplaceAll(prefix, "/", `\`)
	regs, _ := filepath.Glob(filepath.Join(win, "*.reg"))
	// Timestamps may be coarse: a second of slack.
	since = since.Add(-time.Second)
	var old int
	for _, dir := range append([]string{filepath.Join(win, "drive_c")}, regs...) {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if fi.ModTime().Before(since) {
				old++
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("leak scan: %v", err)
				return nil
			}
			leakscan.Bytes(t, secret, path, b)
			n++
			return nil
		})
		if err != nil {
			t.Errorf("leak scan of %s: %v", dir, err)
		}
	}
	t.Logf("leak scan: %d files read, %d in the prefix unchanged since before the secret, in %v", n, old, time.Since(start).Round(time.Millisecond))
	if n == 0 {
		t.Error("the leak scan read no file")
	}
}

// squatPipe serves SUITE_PIPE as any other program could (go-winio's
// listener, the default security descriptor): it reads what clients
// send, answers nothing, and reports at the end of its stdin.
func squatPipe() int {
	l, err := winio.ListenPipe(os.Getenv("SUITE_PIPE"), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "squat:", err)
		return 1
	}
	squat.Serve(l, os.Stdin, os.Stdout)
	return 0
}

// TestSquatterOnTheAgentPipe: another program makes the stable agent pipe
// before the host starts (pipe names are global on Windows). The host
// does not take it; fillgate status and fill refuse the squatter before
// sending it anything (its server is not fillgate) and reach the host
// through its own pipe.
func TestSquatterOnTheAgentPipe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := newWorld(t)
	runDir, err := dirs.Runtime(envOf(w.env()))
	if err != nil {
		t.Fatal(err)
	}
	pipe := agentsock.SocketPath(runDir)

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sq := exec.Command(self)
	sq.Env = append(os.Environ(), helperEnv+"=squat", "SUITE_PIPE="+pipe)
	sq.Stderr = os.Stderr
	sqOut, sqIn := child.Start(t, sq)
	out := bufio.NewReader(sqOut)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the squatter did not start: %q %v", line, err)
	}

	secret := leakscan.NewSecret(t)
	humanErr := make(chan error, 1)
	h := startHost(t, ctx, w, func(url string) {
		p, err := fakehuman.Open(ctx, url)
		if err == nil {
			err = p.Submit(ctx, secret)
		}
		humanErr <- err
	})
	if _, r := statuses(t, w, "--socket", pipe); r.code != 1 {
		t.Errorf("status on the squatted pipe: %s; want exit 1 (no fillgate host there)", r)
	}
	hs, r := statuses(t, w)
	if r.code != 0 || len(hs) != 1 || hs[0].PID != h.cmd.Process.Pid {
		t.Fatalf("status past the squatter: %+v: %s", hs, r)
	}
	f := w.run(t, nil, "fill", "--service", "example.com", "--json")
	var res fill.Result
	if err := json.Unmarshal(f.stdout, &res); err != nil || f.code != 0 || res.Status != fill.StatusOK {
		t.Fatalf("fill past the squatter: %+v, %v: %s", res, err, f)
	}
	if err := <-humanErr; err != nil {
		t.Fatalf("the person at the prompt: %v", err)
	}
	sqIn.Close()
	var rep squat.Report
	if err := json.NewDecoder(out).Decode(&rep); err != nil {
		t.Fatalf("the squatter's report: %v", err)
	}
	t.Logf("the squatter accepted %d connections", rep.Conns)
	if rep.Bytes != 0 {
		t.Errorf("clients sent the squatter %d bytes", rep.Bytes)
	}
	leakscan.Agent(t, secret, "fill's output", append(f.stdout, f.stderr...))
}
