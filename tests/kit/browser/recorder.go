package browser

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Recorder is a DevTools client recording what a tab sends, as a HAR or
// trace recorder (or an agent's own browser tools) attached to the tab
// would: the Network domain's view of every request, POST bodies
// included.
type Recorder struct {
	ctx  context.Context
	mu   sync.Mutex
	reqs []Recorded
	ids  []network.RequestID // requests whose body came without data
}

// Recorded is one request the tab sent.
type Recorded struct {
	Method string
	URL    string
	Body   []byte // the POST body as DevTools reports it
}

// Record enables the Network domain on tab (a chromedp context of one
// target) and records every request from now on.
func Record(t testing.TB, tab context.Context) *Recorder {
	t.Helper()
	r := &Recorder{ctx: tab}
	err := chromedp.Listen(tab, func(ev any) {
		e, ok := ev.(*network.EventRequestWillBeSent)
		if !ok || e.Request == nil {
			return
		}
		var body []byte
		for _, p := range e.Request.PostDataEntries {
			body = append(body, p.Bytes...)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.reqs = append(r.reqs, Recorded{Method: e.Request.Method, URL: e.Request.URL, Body: body})
		if e.Request.HasPostData && len(body) == 0 {
			r.ids = append(r.ids, e.RequestID)
		}
	})
	if err != nil {
		t.Fatalf("listen to the tab: %v", err)
	}
	if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("record the tab's network: %v", err)
	}
	return r
}

// Posts is every POST recorded so far. Bodies DevTools left out of the
// event are asked for with Network.getRequestPostData.
func (r *Recorder) Posts(t testing.TB) []Recorded {
	t.Helper()
	r.mu.Lock()
	ids := r.ids
	r.ids = nil
	r.mu.Unlock()
	var extra []byte
	for _, id := range ids {
		if res, err := chromedp.Call(r.ctx, network.GetRequestPostData, network.GetRequestPostDataParams{RequestID: id}); err == nil {
			extra = append(extra, res.PostData...)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Recorded
	for _, q := range r.reqs {
		if q.Method == "POST" {
			out = append(out, q)
		}
	}
	if len(extra) > 0 {
		out = append(out, Recorded{Method: "POST", URL: "(asked for)", Body: extra})
	}
	return out
}

// All is every recorded request, method, URL and body, for leak scans.
func (r *Recorder) All(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	posts := r.Posts(t)
	r.mu.Lock()
	for _, q := range r.reqs {
		b.WriteString(q.Method + " " + q.URL + "\n")
	}
	r.mu.Unlock()
	for _, q := range posts {
		b.WriteString(q.Method + " " + q.URL + "\n")
		b.Write(q.Body)
		b.WriteString("\n")
	}
	return b.Bytes()
}
