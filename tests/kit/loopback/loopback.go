// Package loopback serves a test's web pages on a loopback address
// (127.0.0.1, 127.0.0.2, ...: each a site of its own) at a random port,
// until the test ends.
package loopback

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Listen opens a TCP listener on ip at a random port and returns it with
// its origin, http://ip:port, for pages that must know their origin
// before they are served.
func Listen(t testing.TB, ip string) (net.Listener, string) {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatalf("listen on %s: %v", ip, err)
	}
	return l, "http://" + l.Addr().String()
}

// Serve serves h on l until the test ends.
func Serve(t testing.TB, l net.Listener, h http.Handler) {
	srv := httptest.NewUnstartedServer(h)
	_ = srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
}

// Start serves h on ip at a random port until the test ends and returns
// its origin, http://ip:port.
func Start(t testing.TB, ip string, h http.Handler) string {
	t.Helper()
	l, origin := Listen(t, ip)
	Serve(t, l, h)
	return origin
}
