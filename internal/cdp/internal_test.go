package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/fillgate/fillgate/internal/secretjson"
)

// TestInsertArgument: the in-page insert's argument is insertArg's members,
// then the value, in one buffer of its exact size, as the in-page function
// reads it.
func TestInsertArgument(t *testing.T) {
	value := []byte("a\"b\\c\x01d\n✓\u2028")
	meta := insertArg{Token: "tok", Origin: "https://a.example", Kind: "password", Then: "submit"}
	arg, err := secretjson.Message(meta, value)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"token":"tok","origin":"https://a.example","kind":"password","form":null,"then":"submit",` +
		`"value":"a\"b\\c\u0001d\n✓\u2028"}`
	if string(arg) != want {
		t.Errorf("argument %s, want %s", arg, want)
	}
	if len(arg) != cap(arg) {
		t.Errorf("buffer size %d, used %d", cap(arg), len(arg))
	}
	var back struct {
		insertArg
		Value string `json:"value"`
	}
	if err := json.Unmarshal(arg, &back); err != nil || back.Value != string(value) || back.insertArg != meta {
		t.Errorf("the argument decodes to something else (%v)", err)
	}
	if _, err := secretjson.Message(meta, []byte{'a', 0xff}); !errors.Is(err, secretjson.ErrNotUTF8) {
		t.Errorf("invalid UTF-8: %v", err)
	}
}

func TestFunctionDeclaration(t *testing.T) {
	got := functionDeclaration("// comment\nfunction f(op, arg) { return 1; }\n// trailing\n")
	if !strings.HasSuffix(got, "\n") || strings.Contains(strings.TrimSpace(got), ";\n") && strings.HasSuffix(strings.TrimSpace(got), ";") {
		t.Fatalf("declaration %q", got)
	}
	if functionDeclaration("function f(){};") != "function f(){}\n" {
		t.Fatalf("a trailing semicolon was kept")
	}
	if !strings.Contains(inPageSource(), "function fillgateInPage(op, arg)") {
		t.Fatalf("the embedded in-page function is not fillgateInPage(op, arg)")
	}
}

func TestHostMatches(t *testing.T) {
	for _, c := range []struct {
		origin, service string
		want            bool
	}{
		{"https://github.com", "github.com", true},
		{"https://gist.github.com", "github.com", true},
		{"https://GitHub.com", "github.com", true},
		{"https://github.com:8443", "github.com", true},
		{"https://evilgithub.com", "github.com", false},
		{"https://github.com.evil.test", "github.com", false},
		{"null", "github.com", false},
		{"https://github.com", "", false},
		{"http://127.0.0.1:8080", "127.0.0.1", true},
		{"https://nas.lan:8443", "nas.lan:8443", true},
		{"https://a.nas.lan:8443", "nas.lan:8443", true},
		{"https://nas.lan:9443", "nas.lan:8443", false},
		{"https://nas.lan", "nas.lan:8443", false},
		{"https://nas.lan", "nas.lan:443", true},
		{"https://[::1]:8443", "[::1]:8443", true},
		{"https://192.168.1.1:8443", "192.168.1.1:8443", true},
	} {
		if got := hostMatches(c.origin, c.service); got != c.want {
			t.Errorf("hostMatches(%q, %q) = %v", c.origin, c.service, got)
		}
	}
}

func TestHostAllowed(t *testing.T) {
	allow := []string{"Browser.Lan", " [fd00::1] "}
	for host, want := range map[string]bool{
		"127.0.0.1": true, "localhost": true, "browser.lan": true, "fd00::1": true,
		"browser.lan.evil.test": false, "other.lan": false,
	} {
		if got := hostAllowed(host, allow); got != want {
			t.Errorf("hostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestOriginOfURLDropsPathAndUserInfo(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:p@github.com/login?x=1": "https://github.com",
		"chrome://newtab/":                 "chrome://newtab",
		"about:blank":                      "about:",
		"":                                 "null",
	} {
		if got := originOfURL(in); got != want {
			t.Errorf("originOfURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestConnectReasonTakesEachOSErrno: a refused or timed-out dial is named
// the same whether the OS said it the Unix way or the Winsock way
// (WSAECONNREFUSED, WSAETIMEDOUT), as net wraps them.
func TestConnectReasonTakesEachOSErrno(t *testing.T) {
	dial := func(errno syscall.Errno) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}
	}
	for _, tc := range []struct {
		err  error
		want Reason
	}{
		{dial(syscall.ECONNREFUSED), ReasonRefused},
		{dial(syscall.Errno(10061)), ReasonRefused},
		{dial(syscall.Errno(10060)), ReasonTimeout},
		{context.DeadlineExceeded, ReasonTimeout},
		{dial(syscall.Errno(10051)), ReasonUnreachable}, // WSAENETUNREACH
		{errors.New("something else"), ReasonUnreachable},
	} {
		if got := connectReason(tc.err); got != tc.want {
			t.Errorf("connectReason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
