package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/fillgate/fillgate/internal/dirs"
)

// Where an endpoint came from, in the order Resolve tries them.
const (
	SourceFillgateEnv = "FILLGATE_CDP_URL"
	SourceBrowserEnv  = "BROWSER_CDP_URL"
	SourcePolicy      = "policy"
	SourceDefault     = "default"
)

// DefaultURL is the endpoint used when nothing else names one: Chromium's
// usual --remote-debugging-port.
const DefaultURL = "http://127.0.0.1:9222"

// Endpoint is the CDP endpoint fillgate uses, and where that choice came
// from. The agent's request never chooses it.
type Endpoint struct {
	URL    string // http(s)://host:port, or ws(s)://host:port[/devtools/browser/<id>]
	Source string // SourceFillgateEnv, SourceBrowserEnv, SourcePolicy or SourceDefault
}

// String names the endpoint for messages: scheme, host and port only (no
// user info, path or query, which may hold a browser id or a token), and
// its source.
func (e Endpoint) String() string {
	u, err := url.Parse(e.URL)
	if err != nil || u.Host == "" {
		return fmt.Sprintf("(unparsable URL) (from %s)", e.Source)
	}
	return fmt.Sprintf("%s://%s (from %s)", u.Scheme, u.Host, e.Source)
}

// Resolve picks the endpoint: FILLGATE_CDP_URL, then BROWSER_CDP_URL, then
// the policy's URL, then DefaultURL. The first one set is used; a malformed
// one is an error rather than a silent fall-through to the next.
func Resolve(env dirs.Env, policyURL string) (Endpoint, error) {
	ep := Endpoint{URL: DefaultURL, Source: SourceDefault}
	switch {
	case strings.TrimSpace(env(SourceFillgateEnv)) != "":
		ep = Endpoint{URL: strings.TrimSpace(env(SourceFillgateEnv)), Source: SourceFillgateEnv}
	case strings.TrimSpace(env(SourceBrowserEnv)) != "":
		ep = Endpoint{URL: strings.TrimSpace(env(SourceBrowserEnv)), Source: SourceBrowserEnv}
	case strings.TrimSpace(policyURL) != "":
		ep = Endpoint{URL: strings.TrimSpace(policyURL), Source: SourcePolicy}
	}
	if _, err := parseEndpoint(ep.URL); err != nil {
		return Endpoint{}, newError(ep, ReasonBadURL, err.Error(), err)
	}
	return ep, nil
}

// parseEndpoint checks the URL's form: http, https, ws or wss, a host, no
// user info, no query or fragment.
func parseEndpoint(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("it does not parse as a URL")
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return nil, errors.New("use http://host:port or ws://host:port")
	}
	if u.Hostname() == "" {
		return nil, errors.New("it has no host")
	}
	if u.User != nil {
		return nil, errors.New("user info in the URL is not supported")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("a query or fragment is not supported")
	}
	return u, nil
}

// IsLoopback reports whether host (a name or an IP literal, without port)
// is this machine: localhost, 127.0.0.0/8 or ::1.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && a.Unmap().IsLoopback()
}

// hostAllowed reports whether the endpoint host may be used: loopback, or
// named exactly in allow.
func hostAllowed(host string, allow []string) bool {
	if IsLoopback(host) {
		return true
	}
	return slices.ContainsFunc(allow, func(a string) bool {
		return strings.EqualFold(strings.Trim(strings.TrimSpace(a), "[]"), host)
	})
}

// dialHost is where to connect for host: "localhost" is pinned to
// 127.0.0.1 so that no resolver is consulted.
func dialHost(u *url.URL) string {
	if strings.EqualFold(u.Hostname(), "localhost") {
		if p := u.Port(); p != "" {
			return net.JoinHostPort("127.0.0.1", p)
		}
		return "127.0.0.1"
	}
	return u.Host
}

// listenerAddr is the address whose listener serves u, as
// checkListenerOwner wants it: the dial host and u's port, or the
// scheme's default port when u names none.
func listenerAddr(u *url.URL) string {
	host, port := u.Hostname(), u.Port()
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "80"
		if u.Scheme == "https" || u.Scheme == "wss" {
			port = "443"
		}
	}
	return net.JoinHostPort(host, port)
}

// overTLS reports whether u's scheme is wss or https.
func overTLS(u *url.URL) bool { return u.Scheme == "https" || u.Scheme == "wss" }

// webSocketURL checks the endpoint against allow and returns the browser's
// WebSocket URL: given directly (ws://…/devtools/browser/…), or asked from
// /json/version. An endpoint off loopback must be allowed and use TLS
// (wss, https); a loopback one must be served by this user (Linux). The
// URL the endpoint hands back must stay on the endpoint's host or on
// loopback, and off loopback use TLS too.
func webSocketURL(ctx context.Context, ep Endpoint, allow []string) (string, error) {
	u, err := parseEndpoint(ep.URL)
	if err != nil {
		return "", newError(ep, ReasonBadURL, err.Error(), err)
	}
	if !hostAllowed(u.Hostname(), allow) {
		return "", newError(ep, ReasonNotLoopback, "", nil)
	}
	if !IsLoopback(u.Hostname()) && !overTLS(u) {
		return "", newError(ep, ReasonNotTLS, "", nil)
	}
	if err := checkListenerOwner(listenerAddr(u)); err != nil {
		return "", newError(ep, ReasonOtherUser, err.Error(), nil)
	}
	if (u.Scheme == "ws" || u.Scheme == "wss") && strings.Contains(u.Path, "/devtools/browser/") {
		d := *u
		d.Host = dialHost(u)
		return d.String(), nil
	}

	v := url.URL{Scheme: "http", Host: dialHost(u), Path: "/json/version"}
	if overTLS(u) {
		v.Scheme = "https"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.String(), nil)
	if err != nil {
		return "", newError(ep, ReasonBadURL, "", err)
	}
	// No proxy: the endpoint is loopback or a host the policy names.
	client := &http.Client{
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", newError(ep, connectReason(err), "", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", newError(ep, ReasonNotCDP, fmt.Sprintf("/json/version answered HTTP %d", resp.StatusCode), nil)
	}
	var version struct {
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&version); err != nil {
		return "", newError(ep, ReasonNotCDP, "/json/version is not JSON", err)
	}
	w, reason, detail := returnedURL(u, version.WebSocketDebuggerURL)
	if reason != "" {
		return "", newError(ep, reason, detail, nil)
	}
	w.Host = dialHost(w)
	if err := checkListenerOwner(listenerAddr(w)); err != nil {
		return "", newError(ep, ReasonOtherUser, err.Error(), nil)
	}
	return w.String(), nil
}

// returnedURL checks the WebSocket URL raw that the endpoint u handed
// back: ws or wss, on u's host or on loopback, and off loopback over TLS.
// Chromium behind a TLS front reports ws:// for the host it was asked on;
// on that host of an https or wss endpoint the front speaks TLS, so the
// URL is used as wss://. A refusal comes as a reason and a safe detail.
func returnedURL(u *url.URL, raw string) (*url.URL, Reason, string) {
	w, err := url.Parse(raw)
	if err != nil || (w.Scheme != "ws" && w.Scheme != "wss") || w.Hostname() == "" {
		return nil, ReasonNotCDP, "/json/version has no WebSocket URL"
	}
	sameHost := strings.EqualFold(w.Hostname(), u.Hostname())
	if w.User != nil || (!sameHost && !IsLoopback(w.Hostname())) {
		return nil, ReasonHostMismatch, ""
	}
	if !IsLoopback(w.Hostname()) && w.Scheme != "wss" {
		if !sameHost || !overTLS(u) {
			return nil, ReasonNotTLS, "the WebSocket URL it returned is ws://"
		}
		w.Scheme = "wss"
	}
	return w, "", ""
}
