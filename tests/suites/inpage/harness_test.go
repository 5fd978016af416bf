package inpage

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/extension"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/poll"
)

// serve serves pages (path → body HTML, wrapped by pageHTML) on 127.0.0.1.
func serve(t testing.TB, pages map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(pageHTML(body)))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// startBrowser starts headless Chromium (with the unpacked extension when
// withExtension) and attaches chromedp to it.
func startBrowser(t testing.TB, ctx context.Context, withExtension bool) (*browser.Chromium, context.Context) {
	t.Helper()
	var o browser.ChromiumOptions
	if withExtension {
		o.Extensions = []string{extensionDir(t)}
	}
	c := browser.StartChromium(t, ctx, o)
	return c, c.Attach(t, ctx)
}

// tab is one page under test, with one isolated world per frame in which
// the in-page function runs, as the CDP fallback runs it.
type tab struct {
	t      testing.TB
	ctx    context.Context
	bctx   context.Context                            // the browser
	worlds map[cdp.FrameID]runtime.ExecutionContextID // this document's
	forms  map[string]json.RawMessage                 // the form each token's probe saw
	older  map[target.ID]bool                         // the iframe targets there were before this document
}

// openTab opens url in a new tab of its own, closed when t ends.
func openTab(t testing.TB, browserCtx context.Context, url string) *tab {
	t.Helper()
	older := iframeTargets(t, browserCtx)
	return newTab(t, browserCtx, browser.NewTab(t, browserCtx, url), older)
}

func newTab(t testing.TB, browserCtx, ctx context.Context, older map[target.ID]bool) *tab {
	return &tab{t: t, ctx: ctx, bctx: browserCtx, worlds: map[cdp.FrameID]runtime.ExecutionContextID{},
		forms: map[string]json.RawMessage{}, older: older}
}

// oneTab is a tab a table's cases take turns in, open for the whole test:
// navigating it costs a fraction of opening a tab for each case.
type oneTab struct {
	ctx, bctx context.Context
}

// shareTab opens the tab that visit navigates (at about:blank, brought to
// the front) for the whole of t.
func shareTab(t testing.TB, browserCtx context.Context) *oneTab {
	t.Helper()
	return &oneTab{ctx: browser.NewTab(t, browserCtx, "about:blank"), bctx: browserCtx}
}

// visit navigates the shared tab to url for the case t and hands back the
// case's tab. Nothing of the previous case's page reaches it: url is
// another document (no case URL has a fragment, so every navigation loads
// a new one: new script realm, focus, fields and frames), the tab starts
// with no isolated world or probed form of the old document, and frame
// skips the iframe targets that were there before.
func (o *oneTab) visit(t testing.TB, url string) *tab {
	t.Helper()
	if strings.Contains(url, "#") {
		t.Fatalf("visit %s: a fragment navigation would keep the document", url)
	}
	older := iframeTargets(t, o.bctx)
	if err := chromedp.Do(o.ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	return newTab(t, o.bctx, o.ctx, older)
}

// iframeTargets is the set of the browser's out-of-process iframes now.
func iframeTargets(t testing.TB, browserCtx context.Context) map[target.ID]bool {
	t.Helper()
	return browser.Targets(t, browserCtx, func(in *target.Info) bool { return in.Type == "iframe" })
}

// frame is a CDP session (main world) on this document's out-of-process
// iframe whose URL starts with prefix, for focusing and checking fields in
// it; it detaches when the tab's test ends (closing an iframe's target
// would close its page).
func (tb *tab) frame(prefix string) *tab {
	tb.t.Helper()
	var found target.ID
	err := poll.Until(tb.ctx, 100*time.Millisecond, func() (bool, error) {
		infos, err := chromedp.Targets(tb.bctx)
		for _, in := range infos {
			if in.Type == "iframe" && strings.HasPrefix(in.URL, prefix) && !tb.older[in.TargetID] {
				found = in.TargetID
			}
		}
		return found != "", err
	})
	if err != nil {
		tb.t.Fatalf("no iframe target at %s: %v", prefix, err)
	}
	fctx, cancel := chromedp.NewContext(tb.bctx, chromedp.WithTargetID(found), chromedp.WithDetachOnCancel())
	tb.t.Cleanup(cancel)
	return &tab{t: tb.t, ctx: fctx}
}

// frames lists the tab's frame ids, top first, depth first.
func (tb *tab) frames() []cdp.FrameID {
	tb.t.Helper()
	res, err := chromedp.Call(tb.ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		tb.t.Fatalf("frame tree: %v", err)
	}
	var ids []cdp.FrameID
	var walk func(*page.FrameTree)
	walk = func(ft *page.FrameTree) {
		ids = append(ids, ft.Frame.ID)
		for _, c := range ft.ChildFrames {
			walk(c)
		}
	}
	walk(res.FrameTree)
	return ids
}

func (tb *tab) top() cdp.FrameID { return tb.frames()[0] }

// world returns the fillgate isolated world of frame, creating it once.
func (tb *tab) world(frame cdp.FrameID) runtime.ExecutionContextID {
	tb.t.Helper()
	if id, ok := tb.worlds[frame]; ok {
		return id
	}
	res, err := chromedp.Call(tb.ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame, WorldName: "fillgate-test"})
	if err != nil {
		tb.t.Fatalf("create isolated world: %v", err)
	}
	tb.worlds[frame] = res.ExecutionContextID
	return res.ExecutionContextID
}

// inpage calls fillgateInPage(op, arg) in frame's isolated world and returns
// the raw result object. An exception fails the test; for insert its
// description (which could in theory quote an argument) is not printed.
func (tb *tab) inpage(frame cdp.FrameID, op string, arg any, byValue bool) *runtime.RemoteObject {
	tb.t.Helper()
	res, err := tb.call(frame, op, arg, byValue)
	return tb.checked(res, err, op)
}

// call calls fillgateInPage(op, arg) in frame's isolated world.
func (tb *tab) call(frame cdp.FrameID, op string, arg any, byValue bool) (runtime.CallFunctionOnResult, error) {
	tb.t.Helper()
	opJSON, _ := json.Marshal(op)
	argJSON, err := json.Marshal(arg)
	if err != nil {
		tb.t.Fatalf("marshal %s argument: %v", op, err)
	}
	res, err := chromedp.Call(tb.ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: extension.InPageJS,
		ExecutionContextID:  tb.world(frame),
		Arguments:           []*runtime.CallArgument{{Value: opJSON}, {Value: argJSON}},
		ReturnByValue:       &byValue,
		AwaitPromise:        new(true),
	})
	clear(argJSON)
	return res, err
}

// checked fails the test when a call of op failed or threw, and returns
// its result.
func (tb *tab) checked(res runtime.CallFunctionOnResult, err error, op string) *runtime.RemoteObject {
	tb.t.Helper()
	if err != nil {
		tb.t.Fatalf("call fillgateInPage(%s): %v", op, err)
	}
	if ex := res.ExceptionDetails; ex != nil {
		detail := ex.Text
		if ex.Exception != nil && op != "insert" {
			detail = ex.Exception.Description
		}
		tb.t.Fatalf("fillgateInPage(%s) threw: %s", op, detail)
	}
	return res.Result
}

// probeResult is what fillgateInPage("probe") returns.
type probeResult struct {
	Origin        string          `json:"origin"`
	Top           bool            `json:"top"`
	Path          []int           `json:"path"`
	ActiveIsFrame bool            `json:"activeIsFrame"`
	ChildIndex    int             `json:"childIndex"`
	Field         fieldInfo       `json:"field"`
	Form          json.RawMessage `json:"form"`
	Account       string          `json:"account"`
	ClosedHost    bool            `json:"closedHost"`
}

// fieldInfo is what the probe, and the extension's inspect, say of the
// focused field.
type fieldInfo struct {
	Kind    string `json:"kind"`
	Split   int    `json:"split"`
	Problem string `json:"problem"`
}

// verdict is what fillgateInPage("insert") returns.
type verdict struct {
	Inserted  bool   `json:"inserted"`
	Matched   bool   `json:"matched"`
	Reason    string `json:"reason"`
	Submitted bool   `json:"submitted"`
	Navigated bool   `json:"navigated"`
	Cleared   bool   `json:"cleared"`
	Remains   bool   `json:"remains"`
	Stopped   string `json:"stopped"`
	StoppedBy string `json:"stoppedBy"`
	// Unconfirmed: the document went away before the call could answer
	// (as the CDP fallback and the extension report it).
	Unconfirmed bool `json:"-"`
}

func (tb *tab) probe(frame cdp.FrameID, token string) probeResult {
	tb.t.Helper()
	var p probeResult
	tb.decode(tb.inpage(frame, "probe", map[string]string{"token": token}, true), &p)
	tb.forms[token] = p.Form
	return p
}

// insert inserts value with then none (the value stays in the field),
// handing back the form the token's probe saw.
func (tb *tab) insert(frame cdp.FrameID, token, origin, kind string, value []byte) verdict {
	tb.t.Helper()
	return tb.insertThen(frame, token, origin, kind, "none", value)
}

// insertThen inserts value and does what then says after it.
func (tb *tab) insertThen(frame cdp.FrameID, token, origin, kind, then string, value []byte) verdict {
	tb.t.Helper()
	arg := map[string]any{"token": token, "origin": origin, "kind": kind, "form": tb.forms[token], "then": then, "value": string(value)}
	res, err := tb.call(frame, "insert", arg, true)
	if leftMidCall(err) {
		// The page left while the call awaited its answer: the insert
		// ran, so the value went with the page, as internal/cdp and the
		// extension report it. Chromium drops the answer of a call whose
		// frame host a navigation replaces, even one the in-page function
		// gave at beforeunload, before the navigation's request went out
		// (measured: 1 in 120 such calls under a loaded run's browsers).
		tb.t.Logf("the page left before the insert's answer came: %v", err)
		return verdict{Inserted: true, Matched: true, Navigated: true, Unconfirmed: true}
	}
	var v verdict
	tb.decode(tb.checked(res, err, "insert"), &v)
	return v
}

// leftMidCall reports whether err says the page's document went away
// while a call awaited its promise.
func leftMidCall(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "navigated or closed") || strings.Contains(err.Error(), "context was destroyed"))
}

func (tb *tab) decode(obj *runtime.RemoteObject, out any) {
	tb.t.Helper()
	if err := json.Unmarshal(obj.Value, out); err != nil {
		tb.t.Fatalf("decode in-page result: %v", err)
	}
}

// eval runs expr in the page's main world (the page's own world) and
// returns its boolean value.
func (tb *tab) eval(expr string) bool {
	tb.t.Helper()
	ok, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](expr))
	if err != nil {
		tb.t.Fatalf("evaluate %q: %v", expr, err)
	}
	return ok
}

// holds reports whether the main-world expression field (an input element)
// holds exactly value. The comparison runs in the page: only a boolean comes
// back.
func (tb *tab) holds(field string, value []byte) bool {
	tb.t.Helper()
	fn := "function (v) { return fg.is(" + field + ", v); }"
	return tb.callMain(fn, string(value))
}

// callMain calls the function declaration fn with args in the main world
// of the top frame and returns its boolean result.
func (tb *tab) callMain(fn string, args ...any) bool {
	tb.t.Helper()
	win, err := chromedp.Run(tb.ctx, chromedp.Evaluate[*runtime.RemoteObject]("window"))
	if err != nil {
		tb.t.Fatalf("main world: %v", err)
	}
	ok, err := chromedp.Run(tb.ctx, chromedp.CallFunctionOn[bool](fn, func(p *runtime.CallFunctionOnParams) {
		p.ObjectID = win.ObjectID
	}, args...))
	if err != nil {
		tb.t.Fatalf("call in page: %v", err)
	}
	return ok
}

// focus focuses the main-world expression el without scrolling.
func (tb *tab) focus(el string) {
	tb.t.Helper()
	if !tb.eval("(" + el + ").focus({preventScroll: true}), true") {
		tb.t.Fatalf("focus %s", el)
	}
}

// testContext is a context for one browser test, with a generous deadline
// for a slow, shared machine.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
