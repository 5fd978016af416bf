package bridge_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/nativemsg"
	"github.com/fillgate/fillgate/internal/secretjson"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
	"github.com/fillgate/fillgate/tests/fakes/fakepage"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

func inspect(t *testing.T, e *env) fill.Inspection {
	t.Helper()
	in, err := e.b.Inspect(e.ctx(t), fill.Request{Service: "example.test"})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestInsertInsertsAndRedactsRecord(t *testing.T) {
	e := setup(t, fakeext.Options{Page: loginPage})
	secret := leakscan.NewSecret(t)
	keep := bytes.Clone(secret)
	in := inspect(t, e)
	v, err := e.b.Insert(e.ctx(t), in, secret, fill.InsertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v != (fill.Verdict{Inserted: true, Matched: true, Submitted: true, Navigated: true, Cleared: true}) {
		t.Fatalf("verdict %+v", v)
	}
	if !e.ext.ValueEquals(keep) {
		t.Fatal("value differed in the page")
	}
	if !bytes.Equal(secret, keep) {
		t.Fatal("Insert modified the caller's value")
	}
	m, err := e.ext.Wait(e.ctx(t), fakeext.OfType("insert"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"value":"[redacted]"`, `"token":"` + in.Token + `"`, `"kind":"password"`, `"tab":12`, `"frame":0`,
		`"origins":["https://login.example.test"]`, `"then":"submit"`} {
		if !strings.Contains(string(m.Raw), want) {
			t.Fatalf("recorded insert lacks %s", want)
		}
	}
	leakscan.Bytes(t, secret, "the fake's record", m.Raw)
}

func TestInsertValueEscaping(t *testing.T) {
	e := setup(t, fakeext.Options{Page: loginPage})
	in := inspect(t, e)
	value := []byte("q\"b\\s/\n\t\x01 é 🙂 \u2028")
	if _, err := e.b.Insert(e.ctx(t), in, value, fill.InsertOptions{}); err != nil {
		t.Fatal(err)
	}
	if !e.ext.ValueEquals(value) {
		t.Fatal("value differed in the page")
	}
}

func TestInsertRefusals(t *testing.T) {
	// The extension walks the frame chain again only for a field in a
	// frame; in the top frame, focus gone into a frame is focus moved.
	framed := loginPage
	framed.Frame, framed.Origins = 4, []string{"https://login.example.test", "https://www.example.test"}
	cases := []struct {
		name   string
		page   *fakeext.Page // nil: loginPage
		change func(*fakeext.Page)
		pause  bool
		reason string
	}{
		{name: "focus moved", change: func(p *fakeext.Page) { p.Element = "input#username" }, reason: "focus_moved"},
		{name: "navigated", change: func(p *fakeext.Page) { p.Origins = []string{"https://evil.test"} }, reason: "origin_changed"},
		{name: "frame navigated", page: &framed, change: func(p *fakeext.Page) {
			p.Origins = []string{"https://ads.test", "https://www.example.test"}
		}, reason: "origin_changed"},
		{name: "other frame", page: &framed, change: func(p *fakeext.Page) { p.Frame = 9 }, reason: "frame_changed"},
		{name: "top frame's focus into a frame", change: func(p *fakeext.Page) {
			p.Frame, p.Origins = 9, []string{"https://ads.test", "https://login.example.test"}
		}, reason: "focus_moved"},
		{name: "element removed", change: func(p *fakeext.Page) { p.Detached = true }, reason: "element_gone"},
		{name: "kind changed", change: func(p *fakeext.Page) { p.Field.Kind = fill.FieldOther }, reason: "kind_changed"},
		{name: "hidden", change: func(p *fakeext.Page) { p.Field.Problem = "hidden" }, reason: "not_usable"},
		{name: "tab closed", change: func(p *fakeext.Page) { p.NoTab = true }, reason: "tab_gone"},
		{name: "insert failed", change: func(p *fakeext.Page) { p.RejectInsert = true }, reason: "insert_failed"},
		{name: "paused", pause: true, reason: "paused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			page := loginPage
			if c.page != nil {
				page = *c.page
			}
			e := setup(t, fakeext.Options{Page: page})
			in := inspect(t, e)
			if c.change != nil {
				e.ext.Update(c.change)
			}
			if c.pause {
				e.ext.SetPaused(true)
			}
			secret := leakscan.NewSecret(t)
			v, err := e.b.Insert(e.ctx(t), in, secret, fill.InsertOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if v != (fill.Verdict{Reason: c.reason}) {
				t.Fatalf("verdict %+v, want reason %s", v, c.reason)
			}
			if e.ext.Inserts() != 0 || e.ext.ValueEquals(secret) {
				t.Fatal("the fake kept a value it refused")
			}
		})
	}
}

func TestInsertWrongLength(t *testing.T) {
	e := setup(t, fakeext.Options{Page: loginPage})
	in := inspect(t, e)
	e.ext.Update(func(p *fakeext.Page) { p.WrongLength = true })
	v, err := e.b.Insert(e.ctx(t), in, []byte("abc"), fill.InsertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v != (fill.Verdict{Inserted: true, Cleared: true, Stopped: "not_matched"}) {
		t.Fatalf("verdict %+v", v)
	}
}

// TestInsertThenAndForm: the insert request carries then and the inspected
// form; the reply's account of the submit reaches the verdict whole.
func TestInsertThenAndForm(t *testing.T) {
	form := &fill.FormInfo{Destination: fill.Destination{Action: "https://login.example.test"},
		Submitter: &fill.Destination{Action: "https://login.example.test", Target: "_self"}}
	page := loginPage
	page.Form = form
	cases := []struct {
		name  string
		then  string
		after fakepage.Page
		want  fill.Verdict
		holds bool
	}{
		{"none", fill.ThenNone, fakepage.Page{}, fill.Verdict{Inserted: true, Matched: true, Remains: true}, true},
		{"script login", "", fakepage.Page{Submit: fakepage.Script},
			fill.Verdict{Inserted: true, Matched: true, Submitted: true, Cleared: true}, false},
		{"validation", fill.ThenSubmit, fakepage.Page{Submit: fakepage.Invalid, InvalidField: "I agree"},
			fill.Verdict{Inserted: true, Matched: true, Cleared: true, Stopped: "invalid", StoppedBy: "I agree"}, false},
		{"put back", fill.ThenSubmit, fakepage.Page{Submit: fakepage.KeepsValue},
			fill.Verdict{Inserted: true, Matched: true, Submitted: true, Cleared: true, Remains: true}, true},
		{"gone mid-call", fill.ThenSubmit, fakepage.Page{Submit: fakepage.GoesAway},
			fill.Verdict{Inserted: true, Matched: true, Navigated: true, Unconfirmed: true}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := page
			p.After = c.after
			e := setup(t, fakeext.Options{Page: p})
			in := inspect(t, e)
			if in.Form == nil || *in.Form.Submitter != *form.Submitter || in.Form.Action != form.Action {
				t.Fatalf("inspected form %+v", in.Form)
			}
			v, err := e.b.Insert(e.ctx(t), in, []byte("abc"), fill.InsertOptions{Then: c.then})
			if err != nil {
				t.Fatal(err)
			}
			if v != c.want || e.ext.FieldHolds() != c.holds {
				t.Fatalf("verdict %+v, field holds %v; want %+v, %v", v, e.ext.FieldHolds(), c.want, c.holds)
			}
			m, err := e.ext.Wait(e.ctx(t), fakeext.OfType("insert"))
			if err != nil {
				t.Fatal(err)
			}
			want := c.then
			if want == "" {
				want = fill.ThenSubmit
			}
			if !strings.Contains(string(m.Raw), `"then":"`+want+`"`) || !strings.Contains(string(m.Raw), `"form":{"action":"https://login.example.test","submitter":{`) {
				t.Fatalf("recorded insert %s", m.Raw)
			}
		})
	}

	t.Run("form changed before the insert", func(t *testing.T) {
		p := page
		e := setup(t, fakeext.Options{Page: p})
		in := inspect(t, e)
		e.ext.Update(func(p *fakeext.Page) {
			p.Form = &fill.FormInfo{Destination: fill.Destination{Action: "https://evil.test"}}
		})
		v, err := e.b.Insert(e.ctx(t), in, []byte("abc"), fill.InsertOptions{})
		if err != nil || v != (fill.Verdict{Reason: "form_changed"}) || e.ext.Inserts() != 0 {
			t.Fatalf("verdict %+v, %v", v, err)
		}
	})

	t.Run("unknown then", func(t *testing.T) {
		e := setup(t, fakeext.Options{Page: page})
		in := inspect(t, e)
		if _, err := e.b.Insert(e.ctx(t), in, []byte("abc"), fill.InsertOptions{Then: "later"}); err == nil || e.ext.Inserts() != 0 {
			t.Fatalf("an unknown then went out: %v", err)
		}
	})
}

func TestInsertWithStaleToken(t *testing.T) {
	e := setup(t, fakeext.Options{Page: loginPage})
	in := inspect(t, e)
	in.Token = "not-a-token"
	v, err := e.b.Insert(e.ctx(t), in, []byte("abc"), fill.InsertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Reason != "element_gone" {
		t.Fatalf("verdict %+v", v)
	}
}

func TestInsertRefusesInvalidUTF8WithoutSending(t *testing.T) {
	e := setup(t, fakeext.Options{Page: loginPage})
	in := inspect(t, e)
	if _, err := e.b.Insert(e.ctx(t), in, []byte{'a', 0xff}, fill.InsertOptions{}); !errors.Is(err, secretjson.ErrNotUTF8) {
		t.Fatalf("got %v, want ErrNotUTF8", err)
	}
	if err := e.b.Ping(e.ctx(t)); err != nil {
		t.Fatal(err)
	}
	if countType(e.ext.Received(), "insert") != 0 {
		t.Fatal("an insert was sent")
	}
}

func TestDisconnectMidCall(t *testing.T) {
	for _, typ := range []string{"inspect", "open_prompt", "insert", "ping"} {
		t.Run(typ, func(t *testing.T) {
			e := setup(t, fakeext.Options{Page: loginPage})
			in := inspect(t, e)
			e.ext.DisconnectOn(typ)
			var err error
			switch typ {
			case "inspect":
				_, err = e.b.Inspect(e.ctx(t), fill.Request{})
			case "open_prompt":
				_, err = e.b.OpenPrompt(e.ctx(t), "http://127.0.0.1:1/")
			case "insert":
				_, err = e.b.Insert(e.ctx(t), in, []byte("abc"), fill.InsertOptions{})
			case "ping":
				err = e.b.Ping(e.ctx(t))
			}
			if !errors.Is(err, nativemsg.ErrClosed) || !strings.Contains(err.Error(), "extension disconnected during "+typ) {
				t.Fatalf("got %v", err)
			}
			if e.b.Status().Connected {
				t.Fatal("still connected")
			}
			if _, err := e.b.Inspect(e.ctx(t), fill.Request{}); !errors.Is(err, nativemsg.ErrClosed) {
				t.Fatalf("a call after the disconnect: %v", err)
			}
		})
	}
}

func TestInsertNoReply(t *testing.T) {
	e := setup(t, fakeext.Options{Page: loginPage})
	in := inspect(t, e)
	e.ext.Ignore("insert")
	ctx, cancel := context.WithCancel(e.ctx(t))
	go func() {
		_, _ = e.ext.Wait(ctx, fakeext.OfType("insert"))
		cancel()
	}()
	_, err := e.b.Insert(ctx, in, []byte("abc"), fill.InsertOptions{})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "no reply from the extension to insert") {
		t.Fatalf("got %v", err)
	}
}

// frames splits what the host wrote into frame bodies.
func frames(t *testing.T, wire []byte) [][]byte {
	t.Helper()
	r := bytes.NewReader(wire)
	var out [][]byte
	for {
		body, err := nativemsg.ReadFrame(r)
		if err != nil {
			if r.Len() != 0 {
				t.Fatalf("the wire holds a broken frame: %v", err)
			}
			return out
		}
		out = append(out, body)
	}
}

// The secret passed to Insert appears nowhere but in the insert frames on
// the wire: not in logs, errors, verdicts, status or the fake's records.
func TestSecretOnlyInInsertFrame(t *testing.T) {
	type outcome struct {
		name    string
		prepare func(e *env)
		ctx     func(t *testing.T, e *env) context.Context
	}
	outcomes := []outcome{
		{name: "inserted"},
		{name: "refused", prepare: func(e *env) { e.ext.Update(func(p *fakeext.Page) { p.Element = "other" }) }},
		{name: "error reply", prepare: func(e *env) { e.ext.FailWith("insert", "internal", "boom") }},
		{name: "disconnect", prepare: func(e *env) { e.ext.DisconnectOn("insert") }},
		{name: "no reply", prepare: func(e *env) { e.ext.Ignore("insert") }, ctx: func(t *testing.T, e *env) context.Context {
			ctx, cancel := context.WithCancel(e.ctx(t))
			go func() {
				_, _ = e.ext.Wait(ctx, fakeext.OfType("insert"))
				cancel()
			}()
			return ctx
		}},
	}
	for _, o := range outcomes {
		t.Run(o.name, func(t *testing.T) {
			e := setup(t, fakeext.Options{Page: loginPage})
			secret := leakscan.NewSecret(t)
			in := inspect(t, e)
			if o.prepare != nil {
				o.prepare(e)
			}
			ctx := e.ctx(t)
			if o.ctx != nil {
				ctx = o.ctx(t, e)
			}
			v, err := e.b.Insert(ctx, in, secret, fill.InsertOptions{})
			if o.name == "inserted" && (err != nil || !e.ext.ValueEquals(secret)) {
				t.Fatalf("insert did not happen: %v", err)
			}
			if o.name != "inserted" && err == nil && v.Inserted {
				t.Fatal("inserted although it should not have been")
			}
			// Let later traffic happen (the outcome notice, a ping) so it is
			// scanned too.
			e.b.Outcome(fill.Result{Status: fill.StatusOK, Service: "example.test", Origin: in.Origin()})
			_ = e.b.Ping(e.ctx(t))

			if err != nil {
				leakscan.Bytes(t, secret, "the error", []byte(err.Error()))
			}
			leakscan.Bytes(t, secret, "the verdict", fmt.Appendf(nil, "%#v", v))
			leakscan.Bytes(t, secret, "the status", fmt.Appendf(nil, "%#v", e.b.Status()))
			leakscan.Bytes(t, secret, "the logs", e.logs.Bytes())
			for _, m := range e.ext.Received() {
				leakscan.Bytes(t, secret, "a recorded message", m.Raw)
			}
			inserts := 0
			for _, f := range frames(t, e.wire.Bytes()) {
				isInsert := bytes.Contains(f, []byte(`"type":"insert"`))
				if isInsert {
					inserts++
				}
				if leakscan.Contains(f, secret) != isInsert {
					t.Fatalf("secret in a frame: %v; frame is an insert: %v", !isInsert, isInsert)
				}
			}
			if inserts != 1 {
				t.Fatalf("%d insert frames on the wire, want 1", inserts)
			}
		})
	}
}
