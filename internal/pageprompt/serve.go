package pageprompt

import (
	"crypto/subtle"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// maxBody caps a POST body. An answer has three short fields; a value
// whose encrypted answer is longer than this is no password.
const maxBody = 16 << 10

// cookieName is the name of the cookie that binds a prompt to the client
// that loaded it first. Its path is the prompt's own, so no other page on
// 127.0.0.1 (cookies ignore the port) ever gets it.
const cookieName = "fillgate-prompt"

// ServeHTTP is the prompt's only handler. Its checks run in order: after
// an outcome everything is 410; then Host, path, query string, the
// Sec-Fetch-* headers, method; for GET the binding cookie; for POST
// Origin, the binding cookie, content type, size, form syntax and CSRF
// token. A refusal leaves the prompt open, except a query string on the
// prompt's path and a GET of the form by a second client, which burn it.
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
		p.burn(w, r, ErrBurned, "a request carried a query string", http.StatusBadRequest, pageBurned)
	case !fetchSiteOK(r):
		p.refuse(w, r, http.StatusForbidden, "cross-site request")
	case r.Method == http.MethodGet:
		p.serveForm(w, r)
	case r.Method == http.MethodPost:
		p.serveAnswer(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		p.refuse(w, r, http.StatusMethodNotAllowed, "wrong method")
	}
}

// fetchSiteOK checks Sec-Fetch-Site when the browser sends it. The page
// may be opened directly ("none": the extension's popup, a CDP tab, a
// typed URL) or from itself. The system opener's page is a local file
// whose meta refresh leads here, and browsers mark that navigation, and
// a reload of its result, "cross-site" (Chromium and Firefox both do): so
// a cross-site GET is let in when it is a top-level navigation to a
// document, and nothing else. The form posts only from itself.
func fetchSiteOK(r *http.Request) bool {
	if len(r.Header.Values("Sec-Fetch-Site")) == 0 {
		return true // not a browser that sends it
	}
	site, ok := single(r.Header, "Sec-Fetch-Site")
	switch {
	case !ok:
		return false
	case site == "same-origin":
		return true
	case r.Method != http.MethodGet:
		return false
	case site == "none":
		return true
	case site == "cross-site":
		mode, ok1 := single(r.Header, "Sec-Fetch-Mode")
		dest, ok2 := single(r.Header, "Sec-Fetch-Dest")
		return ok1 && ok2 && mode == "navigate" && dest == "document"
	}
	return false
}

// single is the value of header key, "" when it is absent; ok is false
// when the header appears more than once.
func single(h http.Header, key string) (string, bool) {
	v := h.Values(key)
	switch len(v) {
	case 0:
		return "", true
	case 1:
		return v[0], true
	}
	return "", false
}

// serveForm answers a GET of the form. The first one binds the prompt to
// its client with a cookie; a later one gets the form again only with
// that cookie, and without it burns the prompt.
func (p *prompt) serveForm(w http.ResponseWriter, r *http.Request) {
	switch p.bind(p.cookieOK(r)) {
	case bindFirst:
		// The response is no-store (setSecurityHeaders), so no cache
		// keeps the cookie for another client.
		http.SetCookie(w, &http.Cookie{
			Name:     cookieName,
			Value:    string(p.cookie),
			Path:     p.path,
			HttpOnly: true,
			// Lax, not Strict: the system opener's file and a reload of
			// what it led to are cross-site navigations, and browsers
			// send no Strict cookie with those, so a reload would burn
			// the prompt. The POST needs the exact Origin and
			// Sec-Fetch-Site same-origin besides the cookie.
			SameSite: http.SameSiteLaxMode,
			// No Secure: the prompt is http on loopback.
		})
		p.log.Info("prompt bound to its first client")
		p.serveFormPage(w)
	case bindSame:
		p.serveFormPage(w)
	default:
		p.burn(w, r, ErrSecondClient, "a second client loaded the form", http.StatusForbidden, pageSecondClient)
	}
}

// serveFormPage sends the form page, with the time it has left.
func (p *prompt) serveFormPage(w http.ResponseWriter) {
	d := p.page
	d.ClosesIn = closesIn(p.deadline)
	d.ClosesAt = closesAt(p.deadline)
	writeForm(w, http.StatusOK, d)
}

// cookieOK reports whether r carries the prompt's binding cookie,
// compared in constant time. Another cookie of the same name (a page on
// 127.0.0.1 may set one for its own path) does not count against it.
func (p *prompt) cookieOK(r *http.Request) bool {
	ok := false
	for _, c := range r.Cookies() {
		if c.Name == cookieName && subtle.ConstantTimeCompare([]byte(c.Value), p.cookie) == 1 {
			ok = true
		}
	}
	return ok
}

// serveAnswer handles a POST: the page's script sends its answer, a
// cancel or its watch this way, and the Cancel form posts here without
// the script.
func (p *prompt) serveAnswer(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Values("Origin"); len(o) != 1 || o[0] != p.origin {
		p.refuse(w, r, http.StatusForbidden, "wrong or missing origin")
		return
	}
	if !p.cookieOK(r) {
		// Checked before the body is read: a client the prompt is not
		// bound to gets nothing read.
		p.refusePage(w, r, http.StatusForbidden, "wrong or missing cookie", pageNoCookie)
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
	if p.isEnded() {
		// The prompt ended while the body was on its way.
		p.refusePage(w, r, http.StatusGone, "answered or closed", pageGone)
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
	if f.value.ok {
		// The page never sends the value in the clear; whoever did is not
		// the page. Nothing of it is read.
		p.refuse(w, r, http.StatusBadRequest, "a plaintext value was sent; the page sends only an encrypted answer")
		return
	}
	switch action, _ := percentDecode(f.action.b); string(action) {
	case actionCancel:
		p.answerWith(w, r, fill.Answer{Cancelled: true}, pageCancelled)
	case actionSubmit:
		p.serveSubmit(w, r, f.answer)
	case actionApprove:
		p.serveApprove(w, r, f.answer)
	case actionWatch:
		p.watch(w, r)
	default:
		p.refuse(w, r, http.StatusBadRequest, "unknown action")
	}
}

// serveSubmit takes the encrypted answer of a submit: the typed value
// and, when the prompt offered them, the choice to remember it and the
// account picked. One that does not decrypt, holds no value or a choice
// the prompt did not offer, leaves the prompt open.
func (p *prompt) serveSubmit(w http.ResponseWriter, r *http.Request, sealed rawField) {
	pl, ok := p.openAnswer(w, r, sealed, actionSubmit)
	if !ok {
		return
	}
	clear(pl.Ask)
	account, err := p.offer.pick(pl.Account, false)
	switch {
	case len(pl.Value) == 0:
		d := p.page
		d.Message = "Nothing was typed. Type the " + d.Noun + ", or choose Cancel."
		d.ClosesIn = closesIn(p.deadline)
		d.ClosesAt = closesAt(p.deadline)
		writeForm(w, http.StatusUnprocessableEntity, d)
		p.log.Info("prompt refused", "reason", "empty value", "method", r.Method)
		return
	case pl.Remember && !p.offer.remember:
		err = errors.New("the answer asks to remember the value, which this prompt did not offer")
	}
	if err != nil {
		clear(pl.Value)
		p.refuse(w, r, http.StatusBadRequest, err.Error())
		return
	}
	p.answerWith(w, r, fill.Answer{Value: pl.Value, Remember: pl.Remember, Account: account}, pageSent)
}

// serveApprove takes the encrypted answer of an approve: the saved value
// is to be used, for the account picked, with what its store needs.
func (p *prompt) serveApprove(w http.ResponseWriter, r *http.Request, sealed rawField) {
	if !p.offer.from {
		p.refuse(w, r, http.StatusBadRequest, "this prompt offers no saved value to approve")
		return
	}
	pl, ok := p.openAnswer(w, r, sealed, actionApprove)
	if !ok {
		return
	}
	clear(pl.Value)
	account, err := p.offer.pick(pl.Account, true)
	switch {
	case err != nil:
	case p.offer.ask && len(pl.Ask) == 0:
		err = errors.New("the answer holds nothing for what the store needs")
	case !p.offer.ask && pl.Ask != nil:
		err = errors.New("the answer holds something the prompt did not ask for")
	case pl.Remember:
		err = errors.New("an approval remembers nothing")
	}
	if err != nil {
		clear(pl.Ask)
		p.refuse(w, r, http.StatusBadRequest, err.Error())
		return
	}
	p.answerWith(w, r, fill.Answer{Approved: true, Account: account, Asked: pl.Ask}, pageApproved)
}

// openAnswer decrypts an answer for action and reads its payload; on a
// refusal it has answered the request.
func (p *prompt) openAnswer(w http.ResponseWriter, r *http.Request, sealed rawField, action string) (payload, bool) {
	key := p.answerKey()
	switch {
	case key == nil:
		p.refusePage(w, r, http.StatusGone, "answered or closed", pageGone)
		return payload{}, false
	case !sealed.ok || len(sealed.b) == 0:
		p.refuse(w, r, http.StatusBadRequest, "no encrypted answer")
		return payload{}, false
	}
	// base64url needs no percent-decoding; anything else is malformed.
	plain, err := key.open(sealed.b, p.path, action)
	if err != nil {
		p.refuse(w, r, http.StatusBadRequest, err.Error())
		return payload{}, false
	}
	if len(plain)%answerPad != 0 {
		clear(plain)
		p.refuse(w, r, http.StatusBadRequest, errNotPadded.Error())
		return payload{}, false
	}
	pl, err := readPayload(plain)
	clear(plain)
	if err != nil {
		p.refuse(w, r, http.StatusBadRequest, err.Error())
		return payload{}, false
	}
	return pl, true
}

// watch answers the page's watch request: it holds the response open
// until the prompt has an outcome (or the page goes), then ends it. The
// page disables itself when its watch ends, whether this process ended it
// or died.
func (p *prompt) watch(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	// The server's read and write timeouts bound requests, not this wait.
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	select {
	case <-p.done:
		_, _ = io.WriteString(w, "ended\n")
	case <-r.Context().Done():
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
		a.Zero()
		p.refusePage(w, r, http.StatusGone, "answered or closed", pageGone)
		return
	}
	outcome := "submitted"
	switch {
	case a.Cancelled:
		outcome = "cancelled"
	case a.Approved:
		outcome = "approved"
	}
	p.log.Info("prompt answered", "outcome", outcome)
	w.Header().Set("Connection", "close")
	writeDone(w, http.StatusOK, page)
	_ = http.NewResponseController(w).Flush()
	p.publish()
	// The port stays bound, answering 410, until Close: the caller closes
	// the page's window first, so nobody else can take the port while the
	// page may still be on screen.
}

// burn ends the prompt with err (what Wait returns) because of why, and
// answers with page. A query string that caused it is never parsed or
// read: whatever it holds is dropped with the request. Like every end
// without an answer, it keeps the port until the budget ends.
func (p *prompt) burn(w http.ResponseWriter, r *http.Request, err error, why string, code int, page doneData) {
	if !p.settle(nil, err) {
		p.refusePage(w, r, http.StatusGone, "answered or closed", pageGone)
		return
	}
	p.log.Warn("prompt burned: "+why, "method", r.Method)
	w.Header().Set("Connection", "close")
	writeDone(w, code, page)
	_ = http.NewResponseController(w).Flush()
	p.publish()
	p.stopWatching(false) // no answer: the port is held until the budget ends
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
