package inpage

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/loginserver"
)

// methods is what the probe's form says of how it sends the value: the
// form's own method and its default submit button's ("-" for none).
type methods struct{ form, button string }

// methodsOf decodes the methods from a probe's (or an inspect reply's)
// form. A form whose method is not there at all fails the test: the probe
// reports it for every destination, "" included.
func methodsOf(t *testing.T, raw json.RawMessage) methods {
	t.Helper()
	var f struct {
		Method    *string `json:"method"`
		Submitter *struct {
			Method *string `json:"method"`
		} `json:"submitter"`
	}
	if err := json.Unmarshal(raw, &f); err != nil || f.Method == nil {
		t.Fatalf("form %s: no method (%v)", raw, err)
	}
	m := methods{form: *f.Method, button: "-"}
	if f.Submitter != nil {
		if f.Submitter.Method == nil {
			t.Fatalf("form %s: the submitter has no method", raw)
		}
		m.button = *f.Submitter.Method
	}
	return m
}

// urlCleanFn is a page check: neither the page's URL nor an input holds
// the value v, and the field pw is empty.
const urlCleanFn = `function (v) {
	const h = location.href;
	return !h.includes(v) && !h.includes(encodeURIComponent(v)) && !fg.holds(v) && fg.left("pw");
}`

// urlClean checks, in the page, that its URL does not hold value (raw or
// URL-encoded) and that the field pw is empty or gone.
func urlClean(t *testing.T, tb *tab, value []byte) {
	t.Helper()
	if !tb.callMain(urlCleanFn, string(value)) {
		t.Error("the page's URL or a field holds the value")
	}
}

// TestFormMethod: the probe reports how each destination sends the value,
// the insert refuses a form that changed its method, fillgate's own
// submit never puts the value into a URL, and a method=dialog submit is
// no submit.
func TestFormMethod(t *testing.T) {
	s := newSite(t)

	t.Run("reported methods", func(t *testing.T) {
		tabs := shareTab(t, s.bctx)
		for _, c := range []struct {
			path  string
			focus string
			want  methods
		}{
			{"/classic", "pw", methods{"post", "post"}},
			{"/get-form", "pw", methods{"get", "get"}},
			{"/formmethod-get", "pw", methods{"post", "get"}},
			{"/dialog", "pw", methods{"dialog", "dialog"}},
			// No method on a page with script: "", left to the submit.
			{"/no-method", "pw", methods{"", ""}},
			{"/react", "pw", methods{"", ""}},
			{"/click-login", "pw", methods{"", ""}},
			{"/split-auto", "b0", methods{"", "-"}},
		} {
			tb := tabs.visit(t, s.login.URL+c.path)
			if c.path == "/react" {
				waitFor(t, tb, `document.getElementById("pw") !== null`)
			}
			tb.focus(`document.getElementById("` + c.focus + `")`)
			if got := methodsOf(t, tb.probe(tb.top(), "tok").Form); got != c.want {
				t.Errorf("%s: methods %+v; want %+v", c.path, got, c.want)
			}
		}
	})

	t.Run("a page without script", func(t *testing.T) {
		// Served as written, without the harness's script.
		pages := map[string]string{
			"/none":       `<form action=/x><input id=pw name=p type=password><button>Go</button></form>`,
			"/invalid":    `<form method=put action=/x><input id=pw name=p type=password><button>Go</button></form>`,
			"/post":       `<form method=POST action=/x><input id=pw name=p type=password><button>Go</button></form>`,
			"/formmethod": `<form method=post action=/x><input id=pw name=p type=password><button formmethod=GET>Go</button></form>`,
			"/no-button":  `<form action=/x><input id=pw name=p type=password></form>`,
			"/onsubmit":   `<form action=/x onsubmit="return false"><input id=pw name=p type=password><button>Go</button></form>`,
			"/onclick":    `<form action=/x><input id=pw name=p type=password><button onclick="return false">Go</button></form>`,
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<!doctype html><title>bare</title>" + pages[r.URL.Path]))
		}))
		t.Cleanup(srv.Close)
		tabs := shareTab(t, s.bctx)
		for path, want := range map[string]methods{
			"/none":       {"get", "get"},
			"/invalid":    {"get", "get"},
			"/post":       {"post", "post"},
			"/formmethod": {"post", "get"},
			"/no-button":  {"get", "-"},
			// An inline handler is script: it may take the submit.
			"/onsubmit": {"", ""},
			"/onclick":  {"", ""},
		} {
			tb := tabs.visit(t, srv.URL+path)
			tb.focus(`document.getElementById("pw")`)
			if got := methodsOf(t, tb.probe(tb.top(), "tok").Form); got != want {
				t.Errorf("%s: methods %+v; want %+v", path, got, want)
			}
		}
	})

	t.Run("a form that names no method is not submitted with GET", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		s.login.SetRight(secret)
		before := s.login.Requests("/classic/login")
		tb, v := s.fill(t, "/no-method", "pw", "password", "submit", secret)
		wantVerdict(t, v, false, false, true, "method_get")
		if !tb.eval(`sentEntries() === 0`) {
			t.Error("the submission's entry list was not emptied")
		}
		if s.login.Carrying(secret) != 0 {
			t.Fatal("the service got the value")
		}
		if n := s.login.Requests("/classic/login") - before; n != 0 {
			t.Errorf("the form's navigation was not cancelled: %d requests to its action", n)
		}
		urlClean(t, tb, secret)
	})

	t.Run("a submit handler that stops the event on its way", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		before := s.login.Requests("/classic/login")
		tb, v := s.fill(t, "/no-method-stopped", "pw", "password", "submit", secret)
		wantVerdict(t, v, false, false, true, "method_get")
		if s.login.Carrying(secret) != 0 || s.login.Requests("/classic/login") != before {
			t.Fatal("the form was submitted")
		}
		urlClean(t, tb, secret)
	})

	t.Run("boxes that submit themselves with GET", func(t *testing.T) {
		code := otpCode(t)
		s.login.SetRight(code)
		_, v := s.fill(t, "/split-get", "b0", "one-time-code", "submit", code)
		// The page's own submit may have left already, its entry list
		// emptied: then the page had nothing left to clear.
		if v.Submitted || v.Stopped != "method_get" || v.Remains {
			t.Fatalf("verdict %+v; want not submitted, stopped method_get, nothing remaining", v)
		}
		if s.login.Carrying(code) != 0 {
			t.Fatal("the service got the code")
		}
	})

	for _, later := range []bool{false, true} {
		name, query := "a FormData the submit handler builds is the page's", ""
		if later {
			name, query = "a FormData built after the submit was cancelled is the page's", "?later"
		}
		t.Run(name, func(t *testing.T) {
			secret := leakscan.NewSecret(t)
			s.login.SetRight(secret)
			tb, v := s.fill(t, "/formdata-login"+query, "pw", "password", "submit", secret)
			// Whether the page left within fillgate's wait depends on the
			// machine's load: navigated, or cleared, either is right; so
			// is a page gone before the call could answer (unconfirmed).
			if !(v.Submitted || v.Unconfirmed) || v.Stopped != "" || v.Remains {
				t.Fatalf("verdict %+v; want submitted, nothing remaining", v)
			}
			s.loggedIn(t, tb, "/api/login", secret, true)
		})
	}

	flips := shareTab(t, s.bctx)
	for _, c := range []struct{ name, flip string }{
		{"the form switched to GET between probe and insert", `document.getElementById("login").method = "get"`},
		{"the button got formmethod=get between probe and insert", `document.getElementById("go").setAttribute("formmethod", "get")`},
		{"the form switched to dialog between probe and insert", `document.getElementById("login").method = "dialog"`},
		{"the form lost its method between probe and insert", `document.getElementById("login").removeAttribute("method")`},
	} {
		t.Run(c.name, func(t *testing.T) {
			secret := leakscan.NewSecret(t)
			tb := flips.visit(t, s.login.URL+"/classic")
			tb.focus("pw")
			tb.probe(tb.top(), "tok")
			tb.eval(c.flip + `, true`)
			v := tb.insertThen(tb.top(), "tok", s.login.URL, "password", "submit", secret)
			if v.Inserted || v.Reason != "form_changed" {
				t.Fatalf("verdict %+v; want not inserted, form_changed", v)
			}
			if !tb.eval(`document.getElementById("pw").value === ""`) || s.login.Carrying(secret) != 0 {
				t.Error("the field was filled, or the value was sent")
			}
		})
	}

	s.submits(t, []submitCase{
		{"the page switches to GET after the insert", "/method-changes", "pw", "password", false, verdict{Cleared: true, Stopped: "form_changed"},
			func(t *testing.T, tb *tab, value []byte) {
				s.notSent(t, value)
				urlClean(t, tb, value)
			}},
		{"method=dialog is no submit", "/dialog", "pw", "password", false, verdict{Cleared: true, Stopped: "method_dialog"},
			func(t *testing.T, tb *tab, value []byte) {
				if !tb.eval(`closedWith() === "signin"`) {
					t.Error("the dialog did not close with its button's value: fillgate did not submit as a person would")
				}
				s.notSent(t, value)
				urlClean(t, tb, value)
			}},
	})

	t.Run("method=dialog with then none keeps the value, unsubmitted", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		tb, v := s.fill(t, "/dialog", "pw", "password", "none", secret)
		if !v.Remains || v.Submitted || v.Stopped != "" {
			t.Fatalf("verdict %+v; want the value left in the field", v)
		}
		if !tb.holds("document.getElementById('pw')", secret) || !tb.eval(`closedWith() === ""`) {
			t.Fatal("the value is not in the field, or the dialog closed")
		}
		tb.eval(`document.getElementById("pw").value = "", true`)
	})
}

// waitFor polls the main-world expression cond until it holds.
func waitFor(t *testing.T, tb *tab, cond string) {
	t.Helper()
	for range 200 {
		if tb.eval(`(() => { try { return Boolean(` + cond + `); } catch { return false; } })()`) {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("%s never held", cond)
}

// TestFormMethodExtension runs the same through the extension's service
// worker, in the extension's own isolated world: the inspect reply carries
// the methods, and a form that names no method is not submitted with GET.
func TestFormMethodExtension(t *testing.T) {
	ctx := testContext(t)
	login := loginserver.Start(t, "127.0.0.1")
	_, bctx := startBrowser(t, ctx, true)
	w := attachWorker(t, ctx, bctx)
	tabs := shareTab(t, bctx)
	type answer struct {
		reply
		Submitted bool   `json:"submitted"`
		Navigated bool   `json:"navigated"`
		Cleared   bool   `json:"cleared"`
		Remains   bool   `json:"remains"`
		Stopped   string `json:"stopped"`
	}
	ask := func(msg map[string]any) answer {
		t.Helper()
		var a answer
		w.call(&a, "function (msg) { return answer(msg); }", msg)
		return a
	}
	inspect := func(t *testing.T, path string) (*tab, answer) {
		t.Helper()
		tb := tabs.visit(t, login.URL+path)
		tb.focus(`document.getElementById("pw")`)
		r := ask(map[string]any{"id": 1, "type": "inspect"})
		if r.Type != "inspected" || r.Field.Kind != "password" || r.Field.Problem != "" {
			t.Fatalf("inspect %s = %+v; want a usable password field", path, r.reply)
		}
		return tb, r
	}

	for path, want := range map[string]methods{
		"/get-form":       {"get", "get"},
		"/formmethod-get": {"post", "get"},
		"/dialog":         {"dialog", "dialog"},
		"/no-method":      {"", ""},
	} {
		if _, r := inspect(t, path); methodsOf(t, r.Form) != want {
			t.Errorf("%s: methods %+v; want %+v", path, methodsOf(t, r.Form), want)
		}
	}

	submit := func(t *testing.T, r answer, value []byte) answer {
		t.Helper()
		v := ask(map[string]any{"id": 9, "type": "insert", "tab": r.Tab, "frame": r.Frame, "form": r.Form, "then": "submit",
			"token": r.Token, "origins": r.Origins, "kind": r.Field.Kind, "value": string(value)})
		out, _ := json.Marshal(v)
		leakscan.Bytes(t, value, "the insert reply", out)
		return v
	}
	for _, c := range []struct{ name, path, stopped, page, pageFails string }{
		{"no method", "/no-method", "method_get", `sentEntries() === 0`, "the submission's entry list was not emptied"},
		{"dialog", "/dialog", "method_dialog", `closedWith() === "signin"`, "the dialog did not close with its button's value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			secret := leakscan.NewSecret(t)
			tb, r := inspect(t, c.path)
			v := submit(t, r, secret)
			if v.Type != "inserted" || v.Submitted || !v.Cleared || v.Stopped != c.stopped || v.Remains {
				t.Fatalf("insert = %+v; want inserted, not submitted, cleared, stopped %s", v, c.stopped)
			}
			if !tb.eval(c.page) {
				t.Error(c.pageFails)
			}
			if login.Carrying(secret) != 0 || login.Requests("/classic/login") != 0 {
				t.Fatal("the form was submitted")
			}
			urlClean(t, tb, secret)
		})
	}
	t.Run("the form switched to GET between inspect and insert", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		tb, r := inspect(t, "/classic")
		tb.eval(`document.getElementById("login").method = "get", true`)
		if v := submit(t, r, secret); v.Type != "not_inserted" || v.Reason != "form_changed" {
			t.Fatalf("insert = %+v; want not_inserted, form_changed", v)
		}
		if !tb.eval(`document.getElementById("pw").value === ""`) || login.Carrying(secret) != 0 {
			t.Error("the field was filled, or the value was sent")
		}
	})
}
