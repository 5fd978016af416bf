package hostcore

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// recorder is a testing.TB that records failures instead of failing, so
// a test can check that a check fails.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Error(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprint(args...))
}

func (r *recorder) Logf(string, ...any) {}

// found reports whether a recorded failure mentions s.
func (r *recorder) found(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.errs {
		if strings.Contains(e, s) {
			return true
		}
	}
	return false
}

// TestLeakScanFindsPlantedSecrets shows that the scenarios' scan can
// fail: after a real fill, the secret is planted where the scan must
// look, raw or encoded, and each place must be reported.
func TestLeakScanFindsPlantedSecrets(t *testing.T) {
	r := newRig(t, setup{page: loginPage("https://github.com")})
	r.behave(answers(r.secret))
	r.expect(r.fill("github.com"), fill.StatusOK, "inserted")
	r.hooks.Wait() // the human is done

	state := r.dirs.stateDir(t)
	planted := map[string][]byte{
		filepath.Join(state, "fillgate.log"):                   r.secret,
		filepath.Join(state, "audit.jsonl"):                    []byte(hex.EncodeToString(r.secret)),
		filepath.Join(r.dirs.data, "fillgate", "stray"):        r.secret,
		filepath.Join(r.dirs.home, ".cache", "deep", "a-file"): r.secret,
	}
	var restore []func()
	for path, data := range planted {
		old, err := os.ReadFile(path)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		f, ferr := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if ferr != nil {
			t.Fatal(ferr)
		}
		_, werr := f.Write(append([]byte("\n"), data...))
		if cerr := f.Close(); werr != nil || cerr != nil {
			t.Fatal(werr, cerr)
		}
		if err == nil {
			restore = append(restore, func() { _ = os.WriteFile(path, old, 0o600) })
		} else {
			restore = append(restore, func() { _ = os.Remove(path) })
		}
	}
	r.keep("planted output", append([]byte("result: "), r.secret...))

	rec := &recorder{TB: t}
	r.t = rec
	r.scanAll()
	r.t = t
	for path := range planted {
		if !rec.found("leak: the secret appears in " + path) {
			t.Errorf("the scan did not report the secret planted in %s", path)
		}
	}
	if !rec.found("leak: the secret appears in planted output") {
		t.Error("the scan did not report the secret planted in an output")
	}

	// Undo it, so the scenario's own scan at the end passes.
	for _, f := range restore {
		f()
	}
	r.mu.Lock()
	r.outputs = r.outputs[:len(r.outputs)-1]
	r.mu.Unlock()
}

// TestFrameCheckFinds shows that the check of the host's stdout fails on
// bytes that are not frames, on unknown messages and on a secret outside
// an insert request.
func TestFrameCheckFinds(t *testing.T) {
	secret := leakscan.NewSecret(t)
	defer clear(secret)
	frame := func(body string) []byte {
		return append(binary.NativeEndian.AppendUint32(nil, uint32(len(body))), body...)
	}
	good := append(frame(`{"type":"host","version":"0.1.0","pid":1}`),
		frame(`{"id":1,"type":"insert","value":"`+string(secret)+`"}`)...)
	cases := map[string]struct {
		data []byte
		want string
	}{
		"trailing bytes":   {append(good, 'x'), "bytes that are not a whole frame"},
		"cut-off frame":    {append(good, frame(`{"id":2,"type":"ping"}`)[:9]...), "bytes that are not a whole frame"},
		"not JSON":         {append(good, frame(`hello`)...), "is not a JSON object"},
		"unknown message":  {append(good, frame(`{"id":2,"type":"eval"}`)...), "which is no host message"},
		"notice with id":   {append(good, frame(`{"id":2,"type":"outcome"}`)...), "the wrong kind of id"},
		"secret elsewhere": {append(good, frame(`{"type":"outcome","service":"`+string(secret)+`"}`)...), "leak: the secret appears in host stdout frame 3 (outcome)"},
		"nothing":          {nil, "no frames at all"},
	}
	for name, c := range cases {
		rec := &recorder{TB: t}
		checkFrames(rec, c.data, [][]byte{secret})
		if !rec.found(c.want) {
			t.Errorf("%s: the check did not report %q", name, c.want)
		}
	}
	rec := &recorder{TB: t}
	checkFrames(rec, good, [][]byte{secret})
	if len(rec.errs) != 0 {
		t.Errorf("well-formed output with the secret only in an insert was reported: %d findings", len(rec.errs))
	}
}
