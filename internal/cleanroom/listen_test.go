package cleanroom

import (
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
)

// TestListenNotesBoundSession: a response that starts a device-bound
// session is noted whichever event brings its headers first. A login's
// answer is often a redirect (303 to the signed-in page), whose response
// Chromium gives only with the next request (requestWillBeSent's
// redirectResponse) and in responseReceivedExtraInfo, which may come
// after the login has settled: a room that waited for that one handed a
// bound session over (a CI run on a loaded machine).
func TestListenNotesBoundSession(t *testing.T) {
	dbsc := network.Headers{"Secure-Session-Registration": `(ES256);path="/dbsc/register";challenge="c1"`}
	plain := network.Headers{"Location": "/home"}
	for _, c := range []struct {
		name string
		ev   any
		want bool
	}{
		{"a redirect's response, with the request it leads to", &network.EventRequestWillBeSent{RequestID: "2", Type: network.ResourceTypeDocument,
			Request: &network.Request{URL: "http://127.0.0.1/home"}, RedirectResponse: &network.Response{Status: 303, Headers: dbsc}}, true},
		{"a response", &network.EventResponseReceived{RequestID: "1", Response: &network.Response{Status: 200, Headers: dbsc}}, true},
		{"a response's raw headers", &network.EventResponseReceivedExtraInfo{RequestID: "1", Headers: dbsc}, true},
		{"a plain redirect", &network.EventRequestWillBeSent{RequestID: "2", Type: network.ResourceTypeDocument,
			Request: &network.Request{URL: "http://127.0.0.1/home"}, RedirectResponse: &network.Response{Status: 303, Headers: plain}}, false},
		{"a first request", &network.EventRequestWillBeSent{RequestID: "1", Type: network.ResourceTypeDocument,
			Request: &network.Request{URL: "http://127.0.0.1/login"}}, false},
	} {
		r := &room{docs: map[network.RequestID]bool{}, rawDue: map[network.RequestID]int{}, kick: make(chan struct{})}
		r.listen(c.ev)
		if r.bound != c.want {
			t.Errorf("%s: bound = %v, want %v", c.name, r.bound, c.want)
		}
	}
}

// TestNotSettledWhileRawHeadersAreDue: a document's response whose raw
// headers Chromium said will come keeps the login unsettled until they
// come, in whichever order the events arrive, so a device-bound session
// that shows only in them is seen before anything is handed over (a CI
// run on a loaded machine handed one over: they came after the settle).
func TestNotSettledWhileRawHeadersAreDue(t *testing.T) {
	dbsc := network.Headers{"Secure-Session-Registration": `(ES256);path="/dbsc/register";challenge="c1"`}
	redirect := &network.EventRequestWillBeSent{RequestID: "2", Type: network.ResourceTypeDocument, RedirectHasExtraInfo: true,
		Request: &network.Request{URL: "http://127.0.0.1/home"}, RedirectResponse: &network.Response{Status: 303, Headers: network.Headers{"Location": "/home"}}}
	finished := &network.EventLoadingFinished{RequestID: "2"}
	raw := &network.EventResponseReceivedExtraInfo{RequestID: "2", Headers: dbsc}
	for _, c := range []struct {
		order []any
		quiet []bool // after each event
	}{
		{[]any{redirect, finished, raw}, []bool{false, false, true}},
		{[]any{raw, redirect, finished}, []bool{true, false, true}}, // nothing open or due yet after the first
	} {
		r := &room{docs: map[network.RequestID]bool{}, rawDue: map[network.RequestID]int{}, kick: make(chan struct{})}
		for i, ev := range c.order {
			r.listen(ev)
			r.last = r.last.Add(-time.Hour) // quiet for long enough but for what is open or due
			if r.quiet() != c.quiet[i] {
				t.Errorf("after %T (event %d of %d): quiet = %v, want %v", ev, i+1, len(c.order), r.quiet(), c.quiet[i])
			}
		}
		if !r.bound {
			t.Error("the device-bound session in the raw headers was not noted")
		}
	}
	// A response Chromium gives no raw headers for is settled without them.
	r := &room{docs: map[network.RequestID]bool{}, rawDue: map[network.RequestID]int{}, kick: make(chan struct{})}
	r.listen(&network.EventResponseReceived{RequestID: "3", Type: network.ResourceTypeDocument, Response: &network.Response{Status: 200}})
	r.last = r.last.Add(-time.Hour)
	if !r.quiet() {
		t.Error("a response with no raw headers due keeps the login unsettled")
	}
}
