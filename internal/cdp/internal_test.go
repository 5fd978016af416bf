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
	"unicode/utf8"
)

func TestAppendJSONString(t *testing.T) {
	var all []byte
	for c := 0; c < 0x80; c++ {
		all = append(all, byte(c))
	}
	inputs := [][]byte{nil, []byte(`pa"ss\word`), all, []byte("héllo wörld ✓ 𝄞"), []byte("line\nbreak\ttab\x00nul\u2028")}
	for _, in := range inputs {
		out := appendJSONString(nil, in)
		if len(out) != jsonStringLen(in) {
			t.Errorf("jsonStringLen is %d, output is %d bytes", jsonStringLen(in), len(out))
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Errorf("output does not parse as a JSON string: %v", err)
			continue
		}
		if back != string(in) {
			t.Errorf("value differed after a JSON round trip")
		}
	}
}

func TestInsertArgumentBufferIsExact(t *testing.T) {
	// The buffer is sized up front so append never copies the value into
	// a backing array that would not be zeroed.
	value := []byte("a\"b\\c\x01d✓")
	if !utf8.Valid(value) {
		t.Fatal("test value must be UTF-8")
	}
	size := len(`{"token":,"origin":,"kind":,"value":}`) + jsonStringLen([]byte("tok")) +
		jsonStringLen([]byte("https://a.example")) + jsonStringLen([]byte("password")) + jsonStringLen(value)
	arg := make([]byte, 0, size)
	arg = append(arg, `{"token":`...)
	arg = appendJSONString(arg, []byte("tok"))
	arg = append(arg, `,"origin":`...)
	arg = appendJSONString(arg, []byte("https://a.example"))
	arg = append(arg, `,"kind":`...)
	arg = appendJSONString(arg, []byte("password"))
	arg = append(arg, `,"value":`...)
	arg = appendJSONString(arg, value)
	arg = append(arg, '}')
	if len(arg) != cap(arg) {
		t.Fatalf("buffer size %d, used %d", cap(arg), len(arg))
	}
	if !json.Valid(arg) {
		t.Fatalf("argument is not JSON")
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
