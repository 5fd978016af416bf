package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
)

// firstRead is a stdin that says when the command first reads it: then
// the command has checked the keyring and waits for the secret.
type firstRead struct {
	r    io.Reader
	once sync.Once
	read chan struct{}
}

func (f *firstRead) Read(p []byte) (int, error) {
	f.once.Do(func() { close(f.read) })
	return f.r.Read(p)
}

// cliRun is one finished in-process run of the CLI.
type cliRun struct {
	code        int
	out, errOut string
}

// TestKeyringStopsMidway: the keyring daemon dies (SIGKILL) while
// `fillgate remember` waits for the secret, after it found the keyring
// usable. The secret is not stored anywhere, remember says the keyring
// is not running, and so do `saved` and `doctor`, each at once, and the
// goroutines they started end; nothing
// starts a keyring daemon on the bus behind the person's back (D-Bus
// activation would, and it would wait for an unlock forever). Once the
// daemon is back, the keyring holds exactly what it held before.
func TestKeyringStopsMidway(t *testing.T) {
	root := isolate(t)
	ss := secretservice.Start(t)
	kept := leakscan.NewSecret(t)
	lost := leakscan.NewSecret(t)
	var outputs []string
	cli := func(stdin io.Reader, args ...string) cliRun {
		var out, errb bytes.Buffer
		code := run(args, stdin, &out, &errb)
		outputs = append(outputs, out.String(), errb.String())
		return cliRun{code, out.String(), errb.String()}
	}
	if r := cli(bytes.NewReader(append(kept, '\n')), "remember", "--service", "github.com", "--stdin"); r.code != 0 {
		t.Fatalf("remember with the keyring up: exit %d, %q", r.code, r.errOut)
	}
	goroutines := runtime.NumGoroutine()

	pr, pw := io.Pipe()
	stdin := &firstRead{r: pr, read: make(chan struct{})}
	ended := make(chan cliRun, 1)
	go func() { ended <- cli(stdin, "remember", "--service", "gitlab.com", "--stdin") }()
	select {
	case <-stdin.read:
	case r := <-ended:
		t.Fatalf("remember ended before it read the secret: exit %d, %q", r.code, r.errOut)
	}
	ss.StopKeyring(t)
	start := time.Now()
	go func() {
		_, _ = pw.Write(append(lost, '\n'))
		_ = pw.Close()
	}()
	var r cliRun
	select {
	case r = <-ended:
	case <-time.After(time.Minute): // bounds the test; the answer comes at once
		t.Fatal("remember hangs after the keyring daemon died")
	}
	t.Logf("remember answered %v after the secret came", time.Since(start).Round(time.Millisecond))
	if r.code != 1 || !strings.Contains(r.errOut, "is not running") {
		t.Errorf("remember with the keyring gone: exit %d, %q; want exit 1 saying it is not running", r.code, r.errOut)
	}
	if r := cli(nil, "saved"); r.code != 1 || !strings.Contains(r.errOut, "is not running") {
		t.Errorf("saved with the keyring gone: exit %d, %q", r.code, r.errOut)
	}
	r = cli(nil, "doctor", "--json")
	var rep struct {
		Checks []struct{ Name, Status, Detail, Fix string } `json:"checks"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("doctor --json printed %q: %v", r.out, err)
	}
	found := false
	for _, c := range rep.Checks {
		if c.Name == "keyring" {
			found = true
			if c.Status != "warn" || !strings.Contains(c.Detail, "is not running") || c.Fix == "" {
				t.Errorf("doctor's keyring check with the keyring gone: %+v", c)
			}
		}
	}
	if !found {
		t.Errorf("doctor has no keyring check: %q", r.out)
	}
	if ss.Owned(t) {
		t.Fatal("a Secret Service runs on the bus again: something started one (D-Bus activation)")
	}
	// What remember, saved and doctor started has ended (the test's own
	// watch on the bus, for the restart below, stays until the test ends).
	waitGoroutines(t, goroutines)

	// Back up: the keyring holds what it held, and nothing of the lost one.
	ss.StartKeyring(t)
	r = cli(nil, "saved", "--json")
	var list struct {
		Items []keychain.Item `json:"items"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.out), &list) != nil {
		t.Fatalf("saved --json after the keyring came back: exit %d, %q", r.code, r.errOut)
	}
	items := list.Items
	if len(items) != 1 || items[0].Service != "github.com" {
		t.Errorf("the keyring lists %+v; want only the github.com password from before", items)
	}
	if v, ok := lookup(t, "password gitlab.com"); ok {
		clear(v)
		t.Error("the keyring holds the secret remember was given while the daemon was gone")
	}
	if v, ok := lookup(t, "password github.com"); !ok || !bytes.Equal(v, kept) {
		t.Error("the password remembered before: value differed (or is missing)")
	}

	for _, s := range [][]byte{kept, lost} {
		leakscan.Bytes(t, s, "the CLI's output", []byte(strings.Join(outputs, "\n")))
		leakscan.Dirs(t, s, root, ss.Data)
	}
}

// waitGoroutines waits until this process runs no more goroutines than
// before (the D-Bus connections' readers end when they are closed).
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for runtime.NumGoroutine() > before {
		select {
		case <-ctx.Done():
			t.Errorf("%d goroutines run, %d before", runtime.NumGoroutine(), before)
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}
