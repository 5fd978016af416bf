package cdp

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"
)

func TestListenerAddr(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:9222":                  "127.0.0.1:9222",
		"http://127.0.0.1":                       "127.0.0.1:80",
		"ws://127.0.0.1/devtools/browser/x":      "127.0.0.1:80",
		"https://127.0.0.1":                      "127.0.0.1:443",
		"wss://localhost/devtools/browser/x":     "127.0.0.1:443",
		"http://localhost":                       "127.0.0.1:80",
		"http://[::1]":                           "[::1]:80",
		"ws://[::1]:9222/devtools/browser/x":     "[::1]:9222",
		"https://browser.example.test:8443/json": "browser.example.test:8443",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := listenerAddr(u); got != want {
			t.Errorf("listenerAddr(%s) = %q, want %q", raw, got, want)
		}
	}
}

// TestOffLoopbackNeedsTLS: a host the policy allows off loopback is used
// only over wss:// or https://; over ws:// or http:// it is refused, with
// the reason, before anything is dialled.
func TestOffLoopbackNeedsTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	allow := []string{"192.0.2.1"}
	for _, raw := range []string{"http://192.0.2.1:9222", "ws://192.0.2.1:9222", "ws://192.0.2.1/devtools/browser/x", "http://192.0.2.1"} {
		_, err := webSocketURL(ctx, Endpoint{URL: raw, Source: SourcePolicy}, allow)
		var ce *Error
		if !errors.As(err, &ce) || ce.Reason != ReasonNotTLS || ce.Status() != "refused" {
			t.Errorf("%s: %v, want refused as not over TLS", raw, err)
		}
	}
	// wss:// is taken as it is (nothing to ask).
	got, err := webSocketURL(ctx, Endpoint{URL: "wss://192.0.2.1:9222/devtools/browser/x", Source: SourcePolicy}, allow)
	if err != nil || got != "wss://192.0.2.1:9222/devtools/browser/x" {
		t.Errorf("wss endpoint: %q, %v", got, err)
	}
}

func TestReturnedURL(t *testing.T) {
	remoteTLS, _ := url.Parse("https://browser.example.test:8443")
	remotePlain, _ := url.Parse("http://browser.example.test:9222")
	local, _ := url.Parse("http://127.0.0.1:9222")
	for _, c := range []struct {
		endpoint *url.URL
		raw      string
		want     string
		reason   Reason
	}{
		{local, "ws://127.0.0.1:9222/devtools/browser/x", "ws://127.0.0.1:9222/devtools/browser/x", ""},
		{local, "ws://localhost:9222/devtools/browser/x", "ws://localhost:9222/devtools/browser/x", ""},
		{local, "ws://192.0.2.7:9222/devtools/browser/x", "", ReasonHostMismatch},
		// Behind a TLS front Chromium says ws:// for the front's host.
		{remoteTLS, "ws://browser.example.test:8443/devtools/browser/x", "wss://browser.example.test:8443/devtools/browser/x", ""},
		{remoteTLS, "wss://browser.example.test:8443/devtools/browser/x", "wss://browser.example.test:8443/devtools/browser/x", ""},
		{remoteTLS, "ws://other.example.test/devtools/browser/x", "", ReasonHostMismatch},
		{remoteTLS, "ws://u:p@browser.example.test/devtools/browser/x", "", ReasonHostMismatch},
		{remotePlain, "ws://browser.example.test:9222/devtools/browser/x", "", ReasonNotTLS},
		{local, "http://127.0.0.1:9222/x", "", ReasonNotCDP},
	} {
		w, reason, _ := returnedURL(c.endpoint, c.raw)
		got := ""
		if w != nil {
			got = w.String()
		}
		if got != c.want || reason != c.reason {
			t.Errorf("%s from %s: %q (%q), want %q (%q)", c.raw, c.endpoint, got, reason, c.want, c.reason)
		}
	}
}
