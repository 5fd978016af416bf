// Package sessionsite is a test login site with real server-side sessions,
// for the tests of fillgate's clean room: a login carried out in a browser
// only fillgate drives, whose session (cookies, localStorage,
// sessionStorage) is then handed over to the agent's browser. After the
// handover a second request from the agent's tab must be authenticated,
// and only a server that keeps its sessions can tell.
//
// The site has two loopback origins: App (127.0.0.1) with most logins, and
// IdP (127.0.0.2), a second site for single sign-on. Each kind of login
// (an Archetype: a classic form, a token in localStorage, two steps, an
// OAuth-style redirect, a CSRF token, cookies with every attribute, ...)
// keeps its own sessions in memory, keyed by random ids; a cookie or a
// token holds nothing but such an id. Every request is recorded, so a
// test can ask how many carried the password; the password is only ever
// compared in memory, never printed.
package sessionsite

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/loopback"
)

// User is the one account of every archetype.
const User = "ada"

// Site is a login site with real server-side sessions on two loopback
// origins: App (127.0.0.1) and IdP (127.0.0.2, a second site for single
// sign-on).
type Site struct {
	App string // "http://127.0.0.1:PORT"
	IdP string // "http://127.0.0.2:PORT"

	mu      sync.Mutex
	right   []byte            // the right password
	entries map[string]*entry // server-side state by random id
	logins  map[string]int    // successful logins by archetype
	reqs    []record
}

// Request is one request the site received: which origin, method and path
// (no query, no body), for tests that check where things went.
type Request struct {
	Origin string // Site.App or Site.IdP
	Method string
	Path   string
}

// record is one request as received, kept in memory for comparisons.
type record struct {
	Request
	raw     []byte // request line, headers and body
	decoded []byte // URL-decoded query and form values and JSON strings, NUL-separated
}

// maxBody is the most of a request body the site reads.
const maxBody = 1 << 20

// Start serves the site on 127.0.0.1 and 127.0.0.2, each at a random port,
// until the test ends.
func Start(t testing.TB) *Site {
	t.Helper()
	appL, app := loopback.Listen(t, "127.0.0.1")
	idpL, idp := loopback.Listen(t, "127.0.0.2")
	s := &Site{App: app, IdP: idp, entries: map[string]*entry{}, logins: map[string]int{}}
	// Registered before the servers' own cleanups, so it runs after them.
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		clear(s.right)
		for _, r := range s.reqs {
			clear(r.raw)
			clear(r.decoded)
		}
	})
	loopback.Serve(t, appL, s.recording(app, s.appHandler()))
	loopback.Serve(t, idpL, s.recording(idp, s.idpHandler()))
	return s
}

// SetPassword makes pw the one right password, for the user "ada" on
// every archetype. The site keeps a copy; until it is set, no login
// succeeds.
func (s *Site) SetPassword(pw []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.right)
	s.right = bytes.Clone(pw)
}

// Received counts the requests, on either origin, that carried value
// anywhere: request line, headers or body, in any encoding leakscan knows,
// or inside a URL-decoded query or form value or a JSON string. It counts
// the value itself, not its hash (see ReceivedHash).
func (s *Site) Received(value []byte) int {
	return s.count(func(r record) bool { return carries(r, value) })
}

// ReceivedHash counts the requests, on either origin, that carried the hex
// SHA-256 of value (as the "hashed" archetype's page sends it).
func (s *Site) ReceivedHash(value []byte) int {
	sum := sha256.Sum256(value)
	h := []byte(hex.EncodeToString(sum[:]))
	defer clear(h)
	return s.count(func(r record) bool { return carries(r, h) })
}

// ReceivedAt is Received for the requests to one origin (Site.App or
// Site.IdP) and path only.
func (s *Site) ReceivedAt(origin, path string, value []byte) int {
	return s.count(func(r record) bool { return r.Origin == origin && r.Path == path && carries(r, value) })
}

// carries reports whether r held value.
func carries(r record, value []byte) bool {
	return len(value) > 0 && (leakscan.Contains(r.raw, value) || leakscan.Contains(r.decoded, value))
}

// count counts the records for which match is true.
func (s *Site) count(match func(record) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.reqs {
		if match(r) {
			n++
		}
	}
	return n
}

// Logins counts the successful logins of the archetype name (for "oauth",
// the callbacks that opened an App session).
func (s *Site) Logins(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins[name]
}

// Requests returns every request the site received so far, in order
// (a browser's own, such as GET /favicon.ico, too).
func (s *Site) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = r.Request
	}
	return out
}

// Expire ends every session, pending login, token and code now, as a
// server restart would: a browser that still holds their ids is no longer
// signed in.
func (s *Site) Expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.entries)
}

// recording records every request to origin, then hands it to h.
func (s *Site) recording(origin string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
		defer clear(body)
		var raw bytes.Buffer
		fmt.Fprintf(&raw, "%s %s %s\n", r.Method, r.RequestURI, r.Proto)
		_ = r.Header.Write(&raw)
		raw.WriteString("\n")
		raw.Write(body)
		rec := record{
			Request: Request{Origin: origin, Method: r.Method, Path: r.URL.Path},
			raw:     raw.Bytes(),
			decoded: decode(r, body),
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, rec)
		s.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

// decode returns the values a request carried once decoded: its query
// values, its form values and the strings of its JSON body, NUL-separated.
func decode(r *http.Request, body []byte) []byte {
	var out []byte
	add := func(vs url.Values) {
		for k, v := range vs {
			out = append(append(out, k...), 0)
			for _, x := range v {
				out = append(append(out, x...), 0)
			}
		}
	}
	add(r.URL.Query())
	ct := r.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/x-www-form-urlencoded"):
		if vs, err := url.ParseQuery(string(body)); err == nil {
			add(vs)
		}
	case strings.Contains(ct, "json"), json.Valid(body):
		var v any
		if json.Unmarshal(body, &v) == nil {
			jsonStrings(v, func(s string) { out = append(append(out, s...), 0) })
		}
	}
	return out
}

// jsonStrings calls f with every string (keys too) in a decoded JSON value.
func jsonStrings(v any, f func(string)) {
	switch v := v.(type) {
	case string:
		f(v)
	case []any:
		for _, x := range v {
			jsonStrings(x, f)
		}
	case map[string]any:
		for k, x := range v {
			f(k)
			jsonStrings(x, f)
		}
	}
}

// login counts one successful login of the archetype name.
func (s *Site) login(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logins[name]++
}

// lifetime is how long a session, pending login, token or code lives.
const lifetime = 30 * time.Minute
