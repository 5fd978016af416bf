package inpage

import (
	"encoding/json"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/loginserver"
)

// TestFirefoxFormMethod runs the form-method checks in Firefox ESR's
// content-script world (the extension as a temporary add-on, this test as
// its native host): the inspect reports each destination's method, a form
// that names no method is not submitted with GET, and a method=dialog
// submit is no submit.
func TestFirefoxFormMethod(t *testing.T) {
	x := startFirefox(t)
	ff, h, tab := x.ff, x.h, x.tab
	login := loginserver.Start(t, "127.0.0.1")
	id := 0
	inspect := func(path string) map[string]any {
		t.Helper()
		tab.navigate(login.URL + path)
		if !tab.callBool(`function () { pw.focus(); return document.activeElement === pw; }`) {
			t.Fatalf("%s: could not focus the field", path)
		}
		id++
		h.send(map[string]any{"id": id, "type": "inspect"})
		in := h.expect(map[string]any{"id": id, "type": "inspected", "frame": 0})
		if field, _ := in["field"].(map[string]any); field["kind"] != "password" || field["problem"] != "" {
			t.Fatalf("%s: inspect = %v; want a usable password field", path, in)
		}
		return in
	}
	var secrets [][]byte
	submit := func(in map[string]any, want map[string]any) {
		t.Helper()
		secret := leakscan.NewSecret(t)
		secrets = append(secrets, secret)
		id++
		h.send(map[string]any{"id": id, "type": "insert", "tab": in["tab"], "frame": in["frame"], "token": in["token"],
			"origins": in["origins"], "kind": "password", "form": in["form"], "then": "submit", "value": string(secret)})
		want["id"] = id
		h.expect(want)
		if login.Carrying(secret) != 0 {
			t.Error("the service got the value")
		}
		if !tab.callBool(urlCleanFn, string(secret)) {
			t.Error("the page's URL or a field holds the value")
		}
	}

	for path, want := range map[string]methods{
		"/get-form":       {"get", "get"},
		"/formmethod-get": {"post", "get"},
		"/dialog":         {"dialog", "dialog"},
		"/no-method":      {"", ""},
	} {
		form, _ := json.Marshal(inspect(path)["form"])
		if got := methodsOf(t, form); got != want {
			t.Errorf("%s: methods %+v; want %+v", path, got, want)
		}
	}
	submit(inspect("/no-method"), map[string]any{"type": "inserted", "stopped": "method_get", "cleared": true, "submitted": nil})
	if login.Requests("/classic/login") != 0 {
		t.Error("the form's navigation was not cancelled")
	}
	if !tab.callBool(`function () { return sentEntries() === 0; }`) {
		t.Error("the submission's entry list was not emptied")
	}
	submit(inspect("/dialog"), map[string]any{"type": "inserted", "stopped": "method_dialog", "cleared": true, "submitted": nil})
	if !tab.callBool(`function () { return closedWith() === "signin"; }`) {
		t.Error("the dialog did not close with its button's value")
	}

	ff.Stop()
	for _, s := range secrets {
		leakscan.Bytes(t, s, "the browser's output", []byte(ff.Output()))
		leakscan.Dirs(t, s, ff.Profile, x.root)
	}
}
