package leakcheck

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// value is a made-up test value with characters each encoding treats
// differently (a quote, a space, a slash, a plus, non-ASCII).
const value = `pa"ss wo/rd+ü!`

func enc64(enc *base64.Encoding, s string) string { return enc.EncodeToString([]byte(s)) }

func TestCarries(t *testing.T) {
	jsonOf := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	jwt := func(claims any) string {
		return enc64(base64.RawURLEncoding, `{"alg":"none"}`) + "." + enc64(base64.RawURLEncoding, jsonOf(claims)) + ".sig"
	}
	sum := sha256.Sum256([]byte(value))
	cases := []struct {
		name string
		data string
		want bool
	}{
		{"raw", "x=" + value + ";", true},
		{"query escaped", "next=" + url.QueryEscape(value), true},
		{"path escaped", "/u/" + url.PathEscape(value), true},
		{"percent escaped in lower case", strings.ToLower(url.QueryEscape(value)), true},
		{"encodeURIComponent (leaves !'()*)", strings.ReplaceAll(url.QueryEscape(value), "%21", "!"), true},
		{"twice percent escaped", url.QueryEscape(url.QueryEscape(value)), true},
		{"JSON string", jsonOf(map[string]string{"p": value}), true},
		{"JSON with \\u escapes", `{"p":"pa\u0022ss wo\/rd+\u00fc!"}`, true},
		{"JSON in a cookie, percent escaped", url.QueryEscape(jsonOf(map[string]string{"p": value})), true},
		{"HTML entities", "pa&quot;ss wo/rd+&uuml;!", true},
		{"hex", hex.EncodeToString([]byte(value)), true},
		{"upper-case hex", strings.ToUpper(hex.EncodeToString([]byte(value))), true},
		{"base64", enc64(base64.StdEncoding, value), true},
		{"base64url, no padding", enc64(base64.RawURLEncoding, value), true},
		{"basic auth, offset 0", "Basic " + enc64(base64.StdEncoding, "alice:"+value), true},
		{"basic auth, offset 1", "Basic " + enc64(base64.StdEncoding, "bob:"+value), true},
		{"basic auth, offset 2", "Basic " + enc64(base64.StdEncoding, "carol:"+value), true},
		{"base64 of text around it", enc64(base64.StdEncoding, "remember "+value+" please"), true},
		{"a JWT's claim", jwt(map[string]string{"pw": value}), true},
		{"base64 of JSON, percent escaped", url.QueryEscape(enc64(base64.StdEncoding, jsonOf([]string{value}))), true},
		{"glued base64", "v1" + enc64(base64.StdEncoding, value), true},

		{"another value", "x=" + strings.ToUpper(value), false},
		{"its SHA-256 (a site may keep a hash: not the value)", hex.EncodeToString(sum[:]), false},
		{"part of it", "x=" + value[:len(value)-1], false},
		{"empty data", "", false},
		{"a session cookie", "sid=" + enc64(base64.RawURLEncoding, "0123456789abcdef0123456789abcdef"), false},
	}
	for _, c := range cases {
		if got := Carries(c.data, []byte(value)); got != c.want {
			// The case's name, never its data: it holds the value.
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	if Carries("anything", nil) {
		t.Error("an empty value is carried")
	}
}

// TestShortValues: a six-digit code is found in its encodings and not in
// data made of other digits.
func TestShortValues(t *testing.T) {
	code := []byte("482913")
	for _, d := range []string{"482913", enc64(base64.StdEncoding, "c=482913"), hex.EncodeToString(code)} {
		if !Carries(d, code) {
			t.Error("a code in one of its encodings was not found")
		}
	}
	if Carries("t=1733512345678&n=99", code) {
		t.Error("other digits were taken for the code")
	}
}

// TestLargeData: half a megabyte of storage is searched in reasonable
// time (no quadratic decoding).
func TestLargeData(t *testing.T) {
	big := strings.Repeat(enc64(base64.StdEncoding, strings.Repeat("x", 300))+" ", 2000)
	if Carries(big, []byte(value)) {
		t.Error("found in data that does not hold it")
	}
	if !Carries(big+url.QueryEscape(value), []byte(value)) {
		t.Error("not found at the end of large data")
	}
}

func BenchmarkCarries(b *testing.B) {
	data := fmt.Sprintf("sid=%s; theme=dark; consent=%s", enc64(base64.RawURLEncoding, strings.Repeat("k", 32)), url.QueryEscape(`{"a":true,"b":false}`))
	for b.Loop() {
		Carries(data, []byte(value))
	}
}
