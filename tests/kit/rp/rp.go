// Package rp is the WebAuthn relying party of fillgate's passkey tests: a
// loopback HTTP login site whose registration and login ceremonies are
// go-webauthn's (github.com/go-webauthn/webauthn), so that every passkey
// fillgate makes and every assertion it signs is checked by a verifier
// fillgate did not write. Its page has "Add a passkey" and "Sign in with
// a passkey" buttons that call navigator.credentials.create and get, as a
// site's own buttons do; its JSON endpoints take what the browser (or a
// test standing in for it) sends.
//
// The site serves http://localhost:port, a secure context with the
// relying party id "localhost", and may serve the same accounts on more
// loopback ports (Mirror), origins that may claim that id too, which it
// takes or refuses as AcceptOrigins says. It keeps what a test asks
// about: who registered and logged in with which credential, at which
// signature count, and why each refused ceremony was refused.
package rp

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
)

// Options are one relying party's choices.
type Options struct {
	// UserVerification is what both ceremonies ask for and check:
	// protocol.VerificationPreferred when empty, or
	// protocol.VerificationRequired, which refuses a response without UV.
	UserVerification protocol.UserVerificationRequirement
	// A ceremony's page may ask for another (the page's ?uv=).
	// Discoverable asks registration for a discoverable credential
	// (residentKey "required"); without it, residentKey is "discouraged".
	// Either way a login that names a user lists that user's credentials
	// (allowCredentials), and one that names none is a discoverable login
	// that finds the user by the response's user handle.
	Discoverable bool
}

// Registration is a credential the site registered.
type Registration struct {
	User         string
	CredentialID []byte
	UserVerified bool
	// AttestationFormat is the attestation statement's format, "none"
	// for fillgate's.
	AttestationFormat string
}

// Login is a login the site let in.
type Login struct {
	User         string
	CredentialID []byte
	SignCount    uint32
	UserVerified bool
	// Discoverable is true when the login named no user, so the site
	// found the user by the credential's user handle.
	Discoverable bool
	// UVRequired is true when the ceremony required user verification,
	// which go-webauthn then checked.
	UVRequired bool
}

// Ceremonies, as a Rejection names them.
const (
	Register = "register"
	SignIn   = "login"
)

// Rejection is a ceremony the site refused, and why.
type Rejection struct {
	Ceremony string // Register or SignIn
	Reason   string // go-webauthn's error, or the site's own check
}

// Server is the relying party's site.
type Server struct {
	// URL is the site's origin, http://localhost:port.
	URL string
	// RPID is its relying party id, "localhost".
	RPID string

	opts Options

	mu         sync.Mutex
	wa         *webauthn.WebAuthn  // the origins it takes: AcceptOrigins
	users      map[string]*user    // by name
	sessions   map[string]*session // ceremonies begun, by session cookie
	regs       []Registration
	logins     []Login
	rejections []Rejection
}

// sessionCookie names the cookie that ties a ceremony's finish to its
// begin.
const sessionCookie = "rp_session"

// session is a ceremony begun and not yet finished.
type session struct {
	ceremony string
	user     string // "" for a discoverable login
	data     webauthn.SessionData
}

// user is an account of the site. It is go-webauthn's webauthn.User.
type user struct {
	name  string
	id    []byte // the user handle
	creds []webauthn.Credential
}

// The account as go-webauthn reads it: handle, names and credentials.
func (u *user) WebAuthnID() []byte                         { return u.id }
func (u *user) WebAuthnName() string                       { return u.name }
func (u *user) WebAuthnDisplayName() string                { return u.name }
func (u *user) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// Start serves the site on 127.0.0.1, as http://localhost:port, until the
// test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.UserVerification == "" {
		opts.UserVerification = protocol.VerificationPreferred
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("rp: listen: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	s := &Server{
		URL:      fmt.Sprintf("http://localhost:%d", port),
		RPID:     "localhost",
		opts:     opts,
		users:    map[string]*user{},
		sessions: map[string]*session{},
	}
	if err := s.AcceptOrigins(s.URL); err != nil {
		_ = l.Close()
		t.Fatal(err)
	}
	s.serve(t, l)
	return s
}

// Mirror serves the same site, its accounts and ceremonies, on another
// loopback port until the test ends, and returns that origin,
// http://localhost:port2: another origin that may claim the relying
// party id "localhost". Whether the site takes its ceremonies is
// AcceptOrigins's.
func (s *Server) Mirror(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("rp: listen: %v", err)
	}
	s.serve(t, l)
	return fmt.Sprintf("http://localhost:%d", l.Addr().(*net.TCPAddr).Port)
}

// AcceptOrigins sets the origins whose ceremonies go-webauthn takes (the
// client data's origin): at the start, the site's own URL only.
func (s *Server) AcceptOrigins(origins ...string) error {
	wa, err := webauthn.New(&webauthn.Config{
		RPID:          s.RPID,
		RPDisplayName: "fillgate test site",
		RPOrigins:     origins,
	})
	if err != nil {
		return fmt.Errorf("rp: configure go-webauthn: %w", err)
	}
	s.mu.Lock()
	s.wa = wa
	s.mu.Unlock()
	return nil
}

// serve serves the site on l until the test ends.
func (s *Server) serve(t testing.TB, l net.Listener) {
	srv := httptest.NewUnstartedServer(s.handler())
	_ = srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
}

// Registrations returns the credentials registered so far.
func (s *Server) Registrations() []Registration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.regs)
}

// Logins returns the logins let in so far.
func (s *Server) Logins() []Login {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.logins)
}

// Rejections returns the ceremonies refused so far.
func (s *Server) Rejections() []Rejection {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.rejections)
}

// SignCount is the signature count the site keeps for a credential (0
// for one it does not know).
func (s *Server) SignCount(credentialID []byte) uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.users {
		for _, c := range u.creds {
			if bytes.Equal(c.ID, credentialID) {
				return c.Authenticator.SignCount
			}
		}
	}
	return 0
}

// handler routes the site's page and endpoints.
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, page)
	})
	mux.HandleFunc("GET /frame", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, framePage)
	})
	mux.HandleFunc("POST /register/begin", s.registerBegin)
	mux.HandleFunc("POST /register/finish", s.registerFinish)
	mux.HandleFunc("POST /login/begin", s.loginBegin)
	mux.HandleFunc("POST /login/finish", s.loginFinish)
	return mux
}

// beginRequest is the body of a begin endpoint: the account, "" for a
// discoverable login, and the user verification the page asks for, ""
// for the site's own (Options.UserVerification).
type beginRequest struct {
	User             string                               `json:"user"`
	UserVerification protocol.UserVerificationRequirement `json:"uv"`
}

// verification is the user verification the ceremony asks for and
// checks: the page's, else the site's.
func (s *Server) verification(req beginRequest) (protocol.UserVerificationRequirement, error) {
	switch req.UserVerification {
	case "":
		return s.opts.UserVerification, nil
	case protocol.VerificationRequired, protocol.VerificationPreferred, protocol.VerificationDiscouraged:
		return req.UserVerification, nil
	}
	return "", fmt.Errorf("no user verification %q", req.UserVerification)
}

// registerBegin starts registering a credential for the named account,
// which it makes when new (the test stands in for a signed-in person).
func (s *Server) registerBegin(w http.ResponseWriter, r *http.Request) {
	var req beginRequest
	if err := readJSON(r, &req); err != nil || req.User == "" {
		s.refuse(w, Register, "a registration names the account")
		return
	}
	uv, err := s.verification(req)
	if err != nil {
		s.refuse(w, Register, err.Error())
		return
	}
	s.mu.Lock()
	u, err := s.account(req.User)
	if err != nil {
		s.mu.Unlock()
		s.refuse(w, Register, err.Error())
		return
	}
	rk := protocol.ResidentKeyRequirementDiscouraged
	if s.opts.Discoverable {
		rk = protocol.ResidentKeyRequirementRequired
	}
	creation, data, err := s.wa.BeginRegistration(u,
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{UserVerification: uv}),
		webauthn.WithResidentKeyRequirement(rk),
		webauthn.WithExclusions(webauthn.Credentials(u.creds).CredentialDescriptors()),
	)
	s.mu.Unlock()
	s.begin(w, Register, req.User, data, creation, err)
}

// registerFinish checks the new credential and keeps it.
func (s *Server) registerFinish(w http.ResponseWriter, r *http.Request) {
	sess := s.finish(w, r, Register)
	if sess == nil {
		return
	}
	s.mu.Lock()
	u := s.users[sess.user]
	s.mu.Unlock()
	parsed, err := protocol.ParseCredentialCreationResponse(r)
	if err != nil {
		s.refuse(w, Register, reason(err))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cred, err := s.wa.CreateCredential(u, sess.data, parsed)
	if err != nil {
		s.refuseLocked(w, Register, reason(err))
		return
	}
	for _, other := range s.users {
		for _, c := range other.creds {
			if bytes.Equal(c.ID, cred.ID) {
				s.refuseLocked(w, Register, "a credential with this id is registered already")
				return
			}
		}
	}
	u.creds = append(u.creds, *cred)
	s.regs = append(s.regs, Registration{
		User:              u.name,
		CredentialID:      bytes.Clone(cred.ID),
		UserVerified:      cred.Flags.UserVerified,
		AttestationFormat: cred.AttestationFormat,
	})
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "user": u.name})
}

// loginBegin starts a login: with the named account's credentials
// listed, or a discoverable one when no account is named.
func (s *Server) loginBegin(w http.ResponseWriter, r *http.Request) {
	var req beginRequest
	if err := readJSON(r, &req); err != nil {
		s.refuse(w, SignIn, "the login request is not JSON")
		return
	}
	verification, err := s.verification(req)
	if err != nil {
		s.refuse(w, SignIn, err.Error())
		return
	}
	uv := webauthn.WithUserVerification(verification)
	var (
		assertion *protocol.CredentialAssertion
		data      *webauthn.SessionData
	)
	s.mu.Lock()
	if req.User == "" {
		assertion, data, err = s.wa.BeginDiscoverableLogin(uv)
	} else if u, ok := s.users[req.User]; !ok {
		err = fmt.Errorf("no account %q", req.User)
	} else {
		assertion, data, err = s.wa.BeginLogin(u, uv)
	}
	s.mu.Unlock()
	s.begin(w, SignIn, req.User, data, assertion, err)
}

// loginFinish checks an assertion, and the signature count: a count that
// did not grow is refused as a cloned or replayed authenticator's.
func (s *Server) loginFinish(w http.ResponseWriter, r *http.Request) {
	sess := s.finish(w, r, SignIn)
	if sess == nil {
		return
	}
	parsed, err := protocol.ParseCredentialRequestResponse(r)
	if err != nil {
		s.refuse(w, SignIn, reason(err))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var (
		u    *user
		cred *webauthn.Credential
	)
	if sess.user == "" {
		var found webauthn.User
		found, cred, err = s.wa.ValidatePasskeyLogin(func(_, handle []byte) (webauthn.User, error) {
			for _, u := range s.users {
				if bytes.Equal(u.id, handle) {
					return u, nil
				}
			}
			return nil, errors.New("no account has this user handle")
		}, sess.data, parsed)
		if err == nil {
			u = found.(*user)
		}
	} else {
		u = s.users[sess.user]
		cred, err = s.wa.ValidateLogin(u, sess.data, parsed)
	}
	if err != nil {
		s.refuseLocked(w, SignIn, reason(err))
		return
	}
	if cred.Authenticator.CloneWarning {
		s.refuseLocked(w, SignIn, fmt.Sprintf("the signature count %d did not grow past the %d kept for this credential", parsed.Response.AuthenticatorData.Counter, s.keptCount(u, cred.ID)))
		return
	}
	for i := range u.creds {
		if bytes.Equal(u.creds[i].ID, cred.ID) {
			u.creds[i] = *cred
		}
	}
	s.logins = append(s.logins, Login{
		User:         u.name,
		CredentialID: bytes.Clone(cred.ID),
		SignCount:    cred.Authenticator.SignCount,
		UserVerified: parsed.Response.AuthenticatorData.Flags.HasUserVerified(),
		Discoverable: sess.user == "",
		UVRequired:   sess.data.UserVerification == protocol.VerificationRequired,
	})
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "user": u.name})
}

// account returns the account named name, made when new. s.mu is held.
func (s *Server) account(name string) (*user, error) {
	if u, ok := s.users[name]; ok {
		return u, nil
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("make a user handle: %w", err)
	}
	u := &user{name: name, id: id}
	s.users[name] = u
	return u, nil
}

// keptCount is the count kept for credential id of u. s.mu is held.
func (s *Server) keptCount(u *user, id []byte) uint32 {
	for _, c := range u.creds {
		if bytes.Equal(c.ID, id) {
			return c.Authenticator.SignCount
		}
	}
	return 0
}

// begin keeps a ceremony begun for user (with go-webauthn's session
// data) under a new session cookie and sends its options; when err says
// it could not begin, it refuses instead.
func (s *Server) begin(w http.ResponseWriter, ceremony, user string, data *webauthn.SessionData, options any, err error) {
	if err != nil {
		s.refuse(w, ceremony, err.Error())
		return
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		s.refuse(w, ceremony, "make a session id: "+err.Error())
		return
	}
	sid := base64.RawURLEncoding.EncodeToString(b)
	s.mu.Lock()
	s.sessions[sid] = &session{ceremony: ceremony, user: user, data: *data}
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: sid, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	writeJSON(w, http.StatusOK, options)
}

// finish takes the ceremony that r's session cookie names, which ends it
// whatever the outcome. When there is none of that ceremony, it refuses
// and returns nil.
func (s *Server) finish(w http.ResponseWriter, r *http.Request, ceremony string) *session {
	var sess *session
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.mu.Lock()
		sess = s.sessions[c.Value]
		delete(s.sessions, c.Value)
		s.mu.Unlock()
	}
	if sess == nil || sess.ceremony != ceremony {
		s.refuse(w, ceremony, "no "+ceremony+" ceremony in progress")
		return nil
	}
	return sess
}

// refuse records a refused ceremony and answers 400 with the reason.
func (s *Server) refuse(w http.ResponseWriter, ceremony, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseLocked(w, ceremony, why)
}

// refuseLocked is refuse with s.mu held.
func (s *Server) refuseLocked(w http.ResponseWriter, ceremony, why string) {
	s.rejections = append(s.rejections, Rejection{Ceremony: ceremony, Reason: why})
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": why})
}

// reason renders a go-webauthn error with its details and developer
// information, which say which check failed.
func reason(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		s := pe.Type + ": " + pe.Details
		if pe.DevInfo != "" {
			s += ": " + pe.DevInfo
		}
		return s
	}
	return err.Error()
}

// readJSON decodes r's body, at most 64 KiB, into v.
func readJSON(r *http.Request, v any) error {
	return json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(v)
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
