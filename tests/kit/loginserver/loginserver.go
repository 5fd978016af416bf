// Package loginserver is the login site of fillgate's after-fill tests: a
// loopback HTTP server with the login pages a service may have (a classic
// POST form, a React 18 controlled form that logs in with fetch, a
// two-step login, one-time codes in one field and in six boxes, forms
// that send the value elsewhere or would put it in their URL, a form in a
// dialog, a field in no form, ...), which records every request it
// receives. A test asks how many logins carried a value; the value itself
// is only ever compared in memory, never printed.
//
// The React page loads React and ReactDOM from node_modules beside this
// file (pinned in package-lock.json); tests/setup installs them with npm ci.
package loginserver

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/repo"
)

// Server is one origin of the login site.
type Server struct {
	// URL is the origin, http://ip:port.
	URL string

	t     testing.TB
	mu    sync.Mutex
	other string // the other origin the "elsewhere" pages send to
	right []byte // the right password or code
	reqs  []request

	totpKey  []byte // the /totp page's seed
	totpUsed string // codes already accepted (a code works once)
	totpOK   int    // codes the /totp page accepted
}

// request is one request as received, kept in memory for comparisons.
type request struct {
	path   string
	raw    []byte            // request line, headers and body
	fields map[string][]byte // form or JSON fields; "c0".."c5" joined as "code"
}

// Start serves the login site on ip (a loopback address) until the test
// ends. The React page needs tests/setup to have run.
func Start(t testing.TB, ip string) *Server {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatalf("loginserver: listen on %s: %v", ip, err)
	}
	s := &Server{t: t, URL: "http://" + l.Addr().String()}
	srv := httptest.NewUnstartedServer(s.handler())
	_ = srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		clear(s.right)
		clear(s.totpKey)
		for _, r := range s.reqs {
			clear(r.raw)
			for _, v := range r.fields {
				clear(v)
			}
		}
	})
	return s
}

// SetOther names the other origin that the pages sending the value
// elsewhere point at.
func (s *Server) SetOther(origin string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.other = origin
}

// SetRight makes value the right password (or code): a login with it
// succeeds, any other fails. The server keeps a copy.
func (s *Server) SetRight(value []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.right)
	s.right = bytes.Clone(value)
}

// Logins counts the requests to path that carried value in a field (or,
// for a code split over boxes c0..c5, in all of them together).
func (s *Server) Logins(path string, value []byte) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.reqs {
		if r.path != path {
			continue
		}
		for _, v := range r.fields {
			if bytes.Equal(v, value) {
				n++
				break
			}
		}
	}
	return n
}

// Carrying counts the requests, to any path, that held value anywhere
// (URL, headers or body, in any encoding leakscan knows, or split over
// the boxes c0..c5).
func (s *Server) Carrying(value []byte) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.reqs {
		if leakscan.Contains(r.raw, value) || bytes.Equal(r.fields["code"], value) {
			n++
		}
	}
	return n
}

// Requests counts the requests to path.
func (s *Server) Requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.reqs {
		if r.path == path {
			n++
		}
	}
	return n
}

// record keeps r and returns its fields.
func (s *Server) record(r *http.Request) map[string][]byte {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var raw bytes.Buffer
	fmt.Fprintf(&raw, "%s %s\n", r.Method, r.RequestURI)
	_ = r.Header.Write(&raw)
	raw.Write(body)
	fields := map[string][]byte{}
	switch {
	case strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"):
		var m map[string]any
		if json.Unmarshal(body, &m) == nil {
			for k, v := range m {
				if str, ok := v.(string); ok {
					fields[k] = []byte(str)
				}
			}
		}
	default:
		r.Body = io.NopCloser(bytes.NewReader(body))
		if r.ParseForm() == nil {
			for k, vs := range r.Form {
				if len(vs) > 0 {
					fields[k] = []byte(vs[0])
				}
			}
		}
	}
	if _, ok := fields["c0"]; ok {
		var code []byte
		for i := range 6 {
			code = append(code, fields[fmt.Sprintf("c%d", i)]...)
		}
		fields["code"] = code
	}
	clear(body)
	s.mu.Lock()
	s.reqs = append(s.reqs, request{path: r.URL.Path, raw: raw.Bytes(), fields: fields})
	s.mu.Unlock()
	return fields
}

// right reports whether one of fields holds the right value.
func (s *Server) isRight(fields map[string][]byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range []string{"password", "otp", "code"} {
		if v, ok := fields[k]; ok && len(s.right) > 0 && subtle.ConstantTimeCompare(v, s.right) == 1 {
			return true
		}
	}
	return false
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	for path, body := range pages {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			s.record(r)
			s.mu.Lock()
			other := s.other
			s.mu.Unlock()
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			if r.URL.Query().Has("nostore") {
				// Kept out of the back/forward cache: going back loads it
				// again, and the browser restores its form state.
				w.Header().Set("Cache-Control", "no-store")
				body += `<script>addEventListener("unload", () => {});</script>`
			}
			fmt.Fprint(w, strings.ReplaceAll(strings.Replace(template, "BODY", body, 1), "OTHER", other))
		})
	}
	// Form logins: the right value goes on to the welcome page (POST,
	// redirect, GET), a wrong one gets an error page.
	for _, path := range []string{"/classic/login", "/step2/login", "/otp/verify"} {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
			if s.isRight(s.record(r)) {
				http.Redirect(w, r, "/welcome", http.StatusSeeOther)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, strings.Replace(template, "BODY", `<p id=error>Wrong password</p>`, 1))
		})
	}
	mux.HandleFunc("POST /totp/verify", s.verifyTOTP)
	mux.HandleFunc("POST /step1", func(w http.ResponseWriter, r *http.Request) {
		s.record(r)
		http.Redirect(w, r, "/step2", http.StatusSeeOther)
	})
	// Script logins.
	for _, path := range []string{"/api/login", "/api/otp"} {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if s.isRight(s.record(r)) {
				fmt.Fprint(w, `{"ok":true}`)
				return
			}
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"ok":false}`)
		})
	}
	mux.HandleFunc("GET /lib/{name}", func(w http.ResponseWriter, r *http.Request) {
		file, ok := libs[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		data, err := os.ReadFile(filepath.Join(dir(), "node_modules", file))
		if err != nil {
			s.t.Errorf("loginserver: %v (run tests/setup, which installs the pages' libraries with npm ci)", err)
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write(data)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.record(r)
		http.NotFound(w, r)
	})
	return mux
}

// libs are the scripts the pages load from node_modules.
var libs = map[string]string{
	"react.js":     "react/umd/react.production.min.js",
	"react-dom.js": "react-dom/umd/react-dom.production.min.js",
}

// dir is this package's source directory.
func dir() string { return repo.Path("tests/kit/loginserver") }
