package cdpe2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
	"github.com/fillgate/fillgate/tests/fakes/notifyd"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
)

// cli runs a fillgate command (not fill) with the scenario's environment.
func (sc *scene) cli(stdin []byte, args ...string) ([]byte, int) {
	sc.t.Helper()
	cmd := exec.CommandContext(sc.ctx, fillgateBin, args...)
	for k, v := range sc.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil && cmd.ProcessState == nil {
		sc.t.Fatalf("fillgate %s: %v", args[0], err)
	}
	sc.output = append(sc.output, out)
	return out, cmd.ProcessState.ExitCode()
}

// TestCDPLease: on the CDP path a lease lives in the state dir, so a
// second `fillgate fill` process fills under the lease the first one's
// approval started; its notice goes to the desktop's notification service
// (a stand-in on a private session bus), since no extension runs there.
func TestCDPLease(t *testing.T) {
	e := newEnvWithin(t, 5*time.Minute)
	secretservice.Start(t)
	notices := notifyd.Start(t)
	sc := e.scene(t)
	sc.vars["DBUS_SESSION_BUS_ADDRESS"] = os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	sc.policy("[service.\"127.0.0.1\"]\napproval = \"lease\"\nlease = \"10m\"\n")
	secret := sc.secret()
	if out, code := sc.cli(secret, "remember", "--service", "127.0.0.1", "--stdin"); code != 0 {
		t.Fatalf("fillgate remember: exit %d: %s", code, sc.safe(out))
	}
	tb := sc.passwordTab()

	r := sc.fill("--service", "127.0.0.1", "--via", "cdp", "--json")
	p := sc.openPrompt(sc.promptPage(r, 1), sc.originA)
	if o := p.Offers(); o.From != "from the OS keyring" {
		t.Fatalf("the prompt offers %+v", o)
	}
	if err := p.Approve(sc.ctx, fakehuman.ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
	// A saved value is submitted and cleared, whatever the agent asked
	// (sc.fill asks for --then none).
	r.wait().want(sc, fill.StatusOK, "the value came from the OS keyring, approved in the prompt", "without a prompt until",
		"fillgate leaves only a value the person typed")
	if !enteredIs(t, tb.ctx, secret) || !tb.evalBool(`document.getElementById("pw").value === ""`) {
		t.Fatal("the value submitted differed, or the field still holds something")
	}
	if len(notices.Notices()) != 0 {
		t.Errorf("a notice for a fill the person approved: %+v", notices.Notices())
	}

	tb.eval(`document.getElementById("pw").value = ""; window.entered = undefined; true`)
	tb.click(100, 95)
	o := sc.fill("--service", "127.0.0.1", "--via", "cdp", "--json").wait()
	o.want(sc, fill.StatusOK, "the value came from the OS keyring, under a lease, with a notice and no prompt")
	sc.wantOpened(1)
	if !enteredIs(t, tb.ctx, secret) || !tb.evalBool(`document.getElementById("pw").value === ""`) {
		t.Error("the value submitted differed, or the field still holds something")
	}
	got := notices.Notices()
	if len(got) != 1 || got[0].App != "fillgate" {
		t.Fatalf("the desktop got %+v", got)
	}
	for _, want := range []string{"127.0.0.1", sc.originA, "(pid ", "via fillgate fill", "from the OS keyring"} {
		if !strings.Contains(got[0].Summary+" "+got[0].Body, want) {
			t.Errorf("the notice %+v does not say %q", got[0], want)
		}
	}

	out, code := sc.cli(nil, "saved", "--json")
	var list struct {
		Leases []map[string]any `json:"leases"`
	}
	if code != 0 || json.Unmarshal(out, &list) != nil || len(list.Leases) != 1 || list.Leases[0]["via"] != "cdp" {
		t.Errorf("fillgate saved --json: exit %d, %s", code, sc.safe(out))
	}
}
