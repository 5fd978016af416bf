// Package leakcheck reports whether data a web page made (a cookie, a
// storage entry, an address, a request) carries a secret value, as it is
// or in an encoding a page could put it in: percent-escaped (either
// case, with + for space or not), JSON- or JavaScript-escaped, HTML
// entities, hex (either case), or base64 (standard or URL alphabet, with
// or without padding, at any byte offset, or as a base64 token of its own
// such as a JWT's segment), and those nested once more.
//
// It finds what a site or a naive script would leave; it cannot find a
// value a script encrypted, hashed or otherwise disguised, nor a key
// derived from it.
package leakcheck

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"html"
	"strconv"
	"strings"
	"unicode/utf8"
)

// minToken is the length under which a run of base64 characters in data
// is not decoded on its own (it still matches the value's own base64).
const minToken = 8

// maxForms bounds the decoded forms of one piece of data searched.
const maxForms = 64

// Carries reports whether data holds value in any of the encodings the
// package names. An empty value is held by nothing. It says only yes or
// no: where, and how, would tell something about the value.
func Carries(data string, value []byte) bool {
	if len(value) == 0 || data == "" {
		return false
	}
	needles := encodings(value)
	defer wipe(needles)
	for _, f := range decodings(data) {
		b, lower := []byte(f), []byte(strings.ToLower(f))
		for _, n := range needles {
			if bytes.Contains(b, n.b) || (n.fold && bytes.Contains(lower, n.b)) {
				return true
			}
		}
	}
	return false
}

// needle is one encoding of the value; fold means it is searched in the
// lower-cased data (hex).
type needle struct {
	b    []byte
	fold bool
}

// encodings are the forms of value searched for in each decoding of the
// data: as it is, lower-case hex, and its base64 at each of the three
// byte offsets it can start at in a longer encoded string (only the
// characters that depend on value alone), in both alphabets.
func encodings(value []byte) []needle {
	out := []needle{{b: bytes.Clone(value)}}
	h := make([]byte, hex.EncodedLen(len(value)))
	hex.Encode(h, value)
	out = append(out, needle{b: h, fold: true})
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := range 3 {
			buf := make([]byte, k+len(value))
			copy(buf[k:], value)
			e := make([]byte, enc.EncodedLen(len(buf)))
			enc.Encode(e, buf)
			wipeBytes(buf)
			from, to := (8*k+5)/6, 8*(k+len(value))/6
			if to-from >= 2 {
				out = append(out, needle{b: bytes.Clone(e[from:to])})
			}
			wipeBytes(e)
		}
	}
	return out
}

// decodings are data and what it decodes to, twice over: each form is
// percent-, JSON- and HTML-unescaped, and each base64 token in it decoded.
func decodings(data string) []string {
	seen := map[string]bool{data: true}
	forms := []string{data}
	next := []string{data}
	for range 2 {
		var more []string
		for _, f := range next {
			for _, d := range decode(f) {
				if len(forms) >= maxForms {
					return forms
				}
				if d != "" && !seen[d] {
					seen[d] = true
					forms = append(forms, d)
					more = append(more, d)
				}
			}
		}
		next = more
	}
	return forms
}

// decode returns the one-step decodings of s.
func decode(s string) []string {
	var out []string
	if strings.ContainsRune(s, '%') {
		out = append(out, unpercent(s, false), unpercent(s, true))
	} else if strings.ContainsRune(s, '+') {
		out = append(out, strings.ReplaceAll(s, "+", " "))
	}
	if strings.ContainsRune(s, '\\') {
		out = append(out, unbackslash(s))
	}
	if strings.ContainsRune(s, '&') {
		out = append(out, html.UnescapeString(s))
	}
	out = append(out, unbase64(s)...)
	return out
}

// unpercent decodes every %XX (either case) in s and, unlike
// url.QueryUnescape, leaves a bad escape as it is; plus says whether + is
// a space.
func unpercent(s string, plus bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]):
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(v))
			i += 2
		case c == '+' && plus:
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// unbackslash undoes JSON's and JavaScript's string escapes in s (\" \\
// \/ \n \t \r \b \f \uXXXX with surrogate pairs, \xXX) and leaves any
// other backslash as it is.
func unbackslash(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		c := s[i+1]
		switch c {
		case '"', '\\', '/', '\'':
			b.WriteByte(c)
			i++
		case 'n', 't', 'r', 'b', 'f':
			b.WriteByte(map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f'}[c])
			i++
		case 'x':
			if i+3 < len(s) && ishex(s[i+2]) && ishex(s[i+3]) {
				v, _ := strconv.ParseUint(s[i+2:i+4], 16, 8)
				b.WriteRune(rune(v))
				i += 3
				continue
			}
			b.WriteByte(s[i])
		case 'u':
			r, n := unicodeEscape(s[i:])
			if n == 0 {
				b.WriteByte(s[i])
				continue
			}
			b.WriteRune(r)
			i += n - 1
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// unicodeEscape reads \uXXXX (and a low surrogate's \uXXXX after a high
// one) at the start of s: the rune and the bytes read, or 0 and 0.
func unicodeEscape(s string) (rune, int) {
	u := func(s string) (rune, bool) {
		if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(s[2:6], 16, 16)
		return rune(v), err == nil
	}
	r, ok := u(s)
	if !ok {
		return 0, 0
	}
	if 0xd800 <= r && r < 0xdc00 {
		if lo, ok := u(s[6:]); ok && 0xdc00 <= lo && lo < 0xe000 {
			return (r-0xd800)<<10 + (lo - 0xdc00) + 0x10000, 12
		}
	}
	if !utf8.ValidRune(r) {
		r = utf8.RuneError
	}
	return r, 6
}

// unbase64 decodes each run of base64 characters in s at least minToken
// long, in either alphabet, padded or not, starting at each of its first
// four characters (a token glued to other text); what decodes is kept.
func unbase64(s string) []string {
	var out []string
	isB64 := func(c byte) bool {
		return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
	}
	for i := 0; i < len(s); {
		if !isB64(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isB64(s[j]) {
			j++
		}
		if j-i >= minToken {
			for off := range 4 {
				if d, ok := b64(s[i+off : j]); ok {
					out = append(out, d)
				}
			}
		}
		i = j
	}
	return out
}

// b64 decodes t, in the standard or URL alphabet, its trailing characters
// that make no whole byte dropped.
func b64(t string) (string, bool) {
	if len(t)%4 == 1 {
		t = t[:len(t)-1]
	}
	enc := base64.RawStdEncoding
	if strings.ContainsAny(t, "-_") {
		enc = base64.RawURLEncoding
	}
	d, err := enc.DecodeString(t)
	if err != nil {
		return "", false
	}
	return string(d), true
}

func wipe(ns []needle) {
	for _, n := range ns {
		wipeBytes(n.b)
	}
}

func wipeBytes(b []byte) {
	for i := range b {
		b[i] = 0
	}
}
