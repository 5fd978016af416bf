package inpage

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// bidiValue is a WebDriver BiDi remote value.
type bidiValue struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// firefoxTab is the first browsing context of a BiDi session.
type firefoxTab struct {
	t   *testing.T
	ctx context.Context
	ff  *browser.Firefox
	id  string
}

func firstFirefoxTab(t *testing.T, ctx context.Context, ff *browser.Firefox) *firefoxTab {
	t.Helper()
	var tree struct {
		Contexts []struct {
			Context string `json:"context"`
		} `json:"contexts"`
	}
	if err := ff.Call(ctx, "browsingContext.getTree", map[string]any{}, &tree); err != nil || len(tree.Contexts) == 0 {
		t.Fatalf("firefox tabs: %v", err)
	}
	return &firefoxTab{t: t, ctx: ctx, ff: ff, id: tree.Contexts[0].Context}
}

// navigate loads url in the tab and waits for it to load. The page is a
// new document, its frames new browsing contexts: a case that navigates
// the tab sees nothing of the one before.
func (ft *firefoxTab) navigate(url string) {
	ft.t.Helper()
	if err := ft.ff.Call(ft.ctx, "browsingContext.navigate", map[string]any{"context": ft.id, "url": url, "wait": "complete"}, nil); err != nil {
		ft.t.Fatal(err)
	}
}

// callBool calls the function declaration fn with string arguments in the
// top page's own world and returns its boolean result.
func (ft *firefoxTab) callBool(fn string, args ...string) bool {
	ft.t.Helper()
	return ft.callIn(ft.id, fn, args...)
}

// callIn calls the function declaration fn (which may return a promise)
// with string arguments in the browsing context id's page world and
// returns its boolean result.
func (ft *firefoxTab) callIn(id, fn string, args ...string) bool {
	ft.t.Helper()
	bidiArgs := []map[string]string{}
	for _, a := range args {
		bidiArgs = append(bidiArgs, map[string]string{"type": "string", "value": a})
	}
	var res struct {
		Type   string    `json:"type"`
		Result bidiValue `json:"result"`
	}
	err := ft.ff.Call(ft.ctx, "script.callFunction", map[string]any{
		"functionDeclaration": fn, "arguments": bidiArgs, "awaitPromise": true,
		"target": map[string]string{"context": id},
	}, &res)
	if err != nil || res.Type != "success" || res.Result.Type != "boolean" {
		ft.t.Fatalf("call in the page: %v (%s)", err, res.Type)
	}
	return string(res.Result.Value) == "true"
}

// firefoxHosted is Firefox ESR with the extension and this test as its
// native host.
type firefoxHosted struct {
	ctx  context.Context
	ff   *browser.Firefox
	root string      // the browser's home and XDG directories
	h    *hostConn   // the extension's connection, greeted
	tab  *firefoxTab // the browser's first tab
}

// startFirefox starts Firefox ESR with the fake native host installed for
// the extension, installs the extension as a temporary add-on over
// WebDriver BiDi and waits for its hello.
func startFirefox(t *testing.T) *firefoxHosted {
	t.Helper()
	ctx := testContext(t)
	sock, ln := listenHost(t)
	hosts := acceptHosts(t, ctx, ln)
	root := t.TempDir()
	env := append(browser.BaseEnv(root), fakeHostEnv+"="+sock)
	// Firefox on Linux reads per-user hosts from ~/.mozilla/native-messaging-hosts.
	installFakeHost(t, filepath.Join(root, "home", ".mozilla", "native-messaging-hosts"), "allowed_extensions", manifest.FirefoxID)
	ff := browser.StartFirefox(t, ctx, browser.FirefoxOptions{Env: env})
	var installed struct {
		Extension string `json:"extension"`
	}
	dir, err := filepath.Abs(extensionDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := ff.Call(ctx, "webExtension.install", map[string]any{
		"extensionData": map[string]string{"type": "path", "path": dir},
	}, &installed); err != nil {
		t.Fatalf("install the extension: %v", err)
	}
	if installed.Extension != manifest.FirefoxID {
		t.Fatalf("installed as %q, want %q", installed.Extension, manifest.FirefoxID)
	}
	return &firefoxHosted{ctx: ctx, ff: ff, root: root, h: greeted(t, ctx, hosts, "Firefox/"), tab: firstFirefoxTab(t, ctx, ff)}
}

// TestFirefox installs the extension into Firefox ESR as a temporary add-on
// over WebDriver BiDi and plays its native host: Firefox runs
// background.scripts (inpage.js, sw.js), which connect, answer an inspect
// and insert into the focused field.
func TestFirefox(t *testing.T) {
	x := startFirefox(t)
	ff, h, tab := x.ff, x.h, x.tab
	srv := serve(t, testPages)
	secret := leakscan.NewSecret(t)
	defer clear(secret)

	h.send(map[string]any{"id": 1, "type": "ping"})
	h.expect(map[string]any{"id": 1, "type": "pong"})

	tab.navigate(srv.URL + "/password")
	if !tab.callBool(`function () { f.focus(); return document.activeElement === f; }`) {
		t.Fatal("could not focus the field")
	}
	h.send(map[string]any{"id": 2, "type": "inspect"})
	in := h.expect(map[string]any{"id": 2, "type": "inspected", "frame": 0})
	field, _ := in["field"].(map[string]any)
	if field["kind"] != "password" || field["problem"] != "" {
		t.Fatalf("inspect = %v; want a usable password field", in)
	}
	h.send(map[string]any{"id": 3, "type": "insert", "tab": in["tab"], "frame": in["frame"], "token": in["token"],
		"origins": in["origins"], "kind": "password", "form": in["form"], "then": "none", "value": string(secret)})
	h.expect(map[string]any{"id": 3, "type": "inserted", "matched": true})
	if !tab.callBool(`function (v) { return fg.is(f, v); }`, string(secret)) {
		t.Fatal("value differed")
	}
	// The notice of a fill with no prompt: browser.notifications shows it
	// (the "notifications" permission), and only then is it answered.
	h.send(map[string]any{"id": 4, "type": "notify", "title": "fillgate is filling the password for 127.0.0.1", "message": "Asked by claude."})
	h.expect(map[string]any{"id": 4, "type": "notified"})

	ff.Stop()
	leakscan.Bytes(t, secret, "the browser's output", []byte(ff.Output()))
	leakscan.Dirs(t, secret, ff.Profile, x.root)
}
