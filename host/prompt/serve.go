package prompt

import (
	"crypto/subtle"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/fillgate/fillgate/host/fill"
)

// maxBody caps a POST body. The form has three short fields; a value
// longer than this is no password.
const maxBody = 16 << 10

// ServeHTTP is the prompt's only handler. Its checks run in order: after
// an outcome everything is 410; then Host, path, query string,
// Sec-Fetch-Site, method, and for POST Origin, content type, size, form
// syntax and CSRF token. A refusal leaves the prompt open, except a query
// string on the prompt's path, which burns it.
func (p *prompt) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	switch {
	case p.isEnded():
		p.refusePage(w, r, http.StatusGone, "answered or closed", pageGone)
	case r.Host != p.host || !strings.HasPrefix(r.RequestURI, "/"):
		// A DNS-rebinding page reaches us under its own host name; an
		// absolute-form request line could override Host.
		p.refuse(w, r, http.StatusForbidden, "wrong host")
	case subtle.ConstantTimeCompare([]byte(r.URL.EscapedPath()), []byte(p.path)) != 1:
		p.refuse(w, r, http.StatusNotFound, "wrong path")
	case r.URL.RawQuery != "":
		p.burn(w, r)
	case !fetchSiteOK(r):
		p.refuse(w, r, http.StatusForbidden, "cross-site request")
	case r.Method == http.MethodGet:
		writeForm(w, http.StatusOK, p.page)
	case r.Method == http.MethodPost:
		p.serveAnswer(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		p.refuse(w, r, http.StatusMethodNotAllowed, "wrong method")
	}
}

// fetchSiteOK checks Sec-Fetch-Site when the browser sends it: the page
// may be opened directly ("none": the extension, the system opener, a
// typed URL) or from itself; the form posts only from itself.
func fetchSiteOK(r *http.Request) bool {
	v := r.Header.Values("Sec-Fetch-Site")
	switch {
	case len(v) == 0:
		return true
	case len(v) > 1:
		return false
	case v[0] == "same-origin":
		return true
	}
	return v[0] == "none" && r.Method != http.MethodPost
}

// serveAnswer handles the form's POST.
func (p *prompt) serveAnswer(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Values("Origin"); len(o) != 1 || o[0] != p.origin {
		p.refuse(w, r, http.StatusForbidden, "wrong or missing origin")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		p.refuse(w, r, http.StatusUnsupportedMediaType, "wrong content type")
		return
	}
	if r.ContentLength > maxBody {
		p.refuse(w, r, http.StatusRequestEntityTooLarge, "body too large")
		return
	}
	buf := make([]byte, maxBody+1)
	defer clear(buf)
	n, err := io.ReadFull(r.Body, buf)
	switch {
	case n > maxBody:
		p.refuse(w, r, http.StatusRequestEntityTooLarge, "body too large")
		return
	case err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF):
		p.refuse(w, r, http.StatusBadRequest, "body unreadable")
		return
	}
	f, err := parseForm(buf[:n])
	if err != nil {
		p.refuse(w, r, http.StatusBadRequest, "malformed form: "+err.Error())
		return
	}
	if !p.tokenOK(f.csrf) {
		p.refuse(w, r, http.StatusForbidden, "wrong or missing csrf token")
		return
	}
	switch action, _ := percentDecode(f.action.b); string(action) {
	case actionCancel:
		p.answerWith(w, r, fill.Answer{Cancelled: true}, pageCancelled)
	case actionSubmit:
		if len(f.value.b) == 0 {
			d := p.page
			d.Message = "Nothing was typed. Type the " + d.Noun + ", or choose Cancel."
			writeForm(w, http.StatusUnprocessableEntity, d)
			p.log.Info("prompt refused", "reason", "empty value", "method", r.Method)
			return
		}
		value, err := percentDecode(f.value.b)
		if err != nil {
			p.refuse(w, r, http.StatusBadRequest, "malformed form: "+err.Error())
			return
		}
		p.answerWith(w, r, fill.Answer{Value: value}, pageSent)
	default:
		p.refuse(w, r, http.StatusBadRequest, "unknown action")
	}
}

// tokenOK compares the posted CSRF token with the prompt's in constant
// time.
func (p *prompt) tokenOK(f rawField) bool {
	if !f.ok {
		return false
	}
	got, err := percentDecode(f.b)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(got, p.csrf) == 1
}

// answerWith makes a the prompt's outcome, sends the final page and only
// then wakes Wait, so the caller's Close cannot cut the page off. If the
// prompt ended meanwhile, a's value is zeroed and the request gets 410.
func (p *prompt) answerWith(w http.ResponseWriter, r *http.Request, a fill.Answer, page doneData) {
	if !p.settle(&a, nil) {
		clear(a.Value)
		p.refusePage(w, r, http.StatusGone, "answered or closed", pageGone)
		return
	}
	outcome := "submitted"
	if a.Cancelled {
		outcome = "cancelled"
	}
	p.log.Info("prompt answered", "outcome", outcome)
	w.Header().Set("Connection", "close")
	writeDone(w, http.StatusOK, page)
	_ = http.NewResponseController(w).Flush()
	p.publish()
	go p.drain()
}

// burn ends the prompt because a request carried a query string. The
// query is never parsed or read: whatever it holds is dropped with the
// request.
func (p *prompt) burn(w http.ResponseWriter, r *http.Request) {
	if !p.settle(nil, ErrBurned) {
		p.refusePage(w, r, http.StatusGone, "answered or closed", pageGone)
		return
	}
	p.log.Warn("prompt burned: a request carried a query string", "method", r.Method)
	w.Header().Set("Connection", "close")
	writeDone(w, http.StatusBadRequest, pageBurned)
	_ = http.NewResponseController(w).Flush()
	p.publish()
	go p.drain()
}

// refuse logs and answers a refused request with a short text.
func (p *prompt) refuse(w http.ResponseWriter, r *http.Request, code int, reason string) {
	p.log.Info("prompt refused", "reason", reason, "method", r.Method, "status", code)
	writeText(w, code, http.StatusText(code)+": "+reason)
}

// refusePage logs and answers a refused request with a page a human may
// see.
func (p *prompt) refusePage(w http.ResponseWriter, r *http.Request, code int, reason string, page doneData) {
	p.log.Info("prompt refused", "reason", reason, "method", r.Method, "status", code)
	writeDone(w, code, page)
}
