package cleanroom

import (
	"testing"

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
		r := &room{docs: map[network.RequestID]bool{}, kick: make(chan struct{})}
		r.listen(c.ev)
		if r.bound != c.want {
			t.Errorf("%s: bound = %v, want %v", c.name, r.bound, c.want)
		}
	}
}
