package pageprompt

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// within reports whether sub is a slice of whole's memory (or empty).
func within(sub, whole []byte) bool {
	if len(sub) == 0 {
		return true
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(whole)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	return p >= start && p+uintptr(len(sub)) <= start+uintptr(len(whole))
}

// FuzzParseForm: parseForm never panics, refuses a field it reads that
// appears twice, and otherwise returns exactly the raw values a plain
// reading of the body finds, as slices of the body (nothing copied).
// percentDecode agrees with net/url's form decoding and never grows.
func FuzzParseForm(f *testing.F) {
	for _, s := range []string{
		"", "&", "=", "csrf=t%3D&action=submit&answer=abc_-", "x=1&&csrf=a&value=&action=cancel&other",
		"csrf=a&csrf=b", "value", "action=submit&action=submit", "answer=%zz", "answer=%4", "a=%", "+%2B%2b",
		"csrf==&action=watch=x", "%00=%00", "answer=" + string(bytes.Repeat([]byte("A"), 200)),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := parseForm(body)
		want := map[string][]byte{}
		count := map[string]int{}
		for pair := range bytes.SplitSeq(body, []byte("&")) {
			if len(pair) == 0 {
				continue
			}
			name, val, _ := bytes.Cut(pair, []byte("="))
			switch n := string(name); n {
			case fieldCSRF, fieldAction, fieldAnswer, fieldValue:
				count[n]++
				if count[n] == 1 {
					want[n] = val
				}
			}
		}
		dup := false
		for _, n := range count {
			dup = dup || n > 1
		}
		if dup {
			if !errors.Is(err, errDuplicateField) {
				t.Fatalf("a field appears twice, yet parseForm = %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("parseForm: %v", err)
		}
		for name, field := range map[string]rawField{fieldCSRF: got.csrf, fieldAction: got.action, fieldAnswer: got.answer, fieldValue: got.value} {
			w, ok := want[name]
			if field.ok != ok || !bytes.Equal(field.b, w) {
				t.Fatalf("field %s: got present=%v, want present=%v (values differ or not)", name, field.ok, ok)
			}
			if !within(field.b, body) {
				t.Fatalf("field %s is not a slice of the body", name)
			}
			dec, derr := percentDecode(field.b)
			ref, rerr := url.QueryUnescape(string(field.b))
			if (derr != nil) != (rerr != nil) || derr == nil && string(dec) != ref {
				t.Fatalf("percentDecode disagrees with url.QueryUnescape (errors %v, %v)", derr, rerr)
			}
			if derr != nil && !errors.Is(derr, errBadEscape) {
				t.Fatalf("percentDecode: %v, want errBadEscape", derr)
			}
			if cap(dec) > len(field.b) {
				t.Fatalf("percentDecode grew its buffer")
			}
		}
	})
}

// seed is a submit payload sealed to key for path, for the fuzz targets.
type seed struct {
	key     *answerKey
	path    string
	payload []byte
	raw     []byte // page key ‖ IV ‖ ciphertext ‖ tag
}

func newSeed(t testing.TB) seed {
	t.Helper()
	key, err := newAnswerKey()
	if err != nil {
		t.Fatal(err)
	}
	s := seed{key: key, path: "/fuzz-nonce", payload: []byte(`{"value":"` + base64.StdEncoding.EncodeToString([]byte("fuzz")) + `"}`)}
	sealed := sealRaw(t, key.pub, answerInfo(s.path, actionSubmit), s.payload)
	if s.raw, err = base64.RawURLEncoding.DecodeString(sealed); err != nil {
		t.Fatal(err)
	}
	return s
}

// FuzzOpenAnswer: opening an answer never panics and fails only with
// errNoDecrypt, whatever the text; an answer changed in any byte,
// truncated or extended is refused, as is one opened for another action
// or prompt; only the answer exactly as sealed opens, to its payload.
func FuzzOpenAnswer(f *testing.F) {
	f.Add([]byte(""), uint16(0), byte(0), uint16(0), []byte(nil))
	f.Add([]byte("AAAA"), uint16(1), byte(1), uint16(0), []byte(nil))
	f.Add([]byte("not base64!"), uint16(40), byte(0x80), uint16(59), []byte("x"))
	f.Add(bytes.Repeat([]byte("A"), 80), uint16(100), byte(0), uint16(0), []byte(nil))
	f.Add(bytes.Repeat([]byte("_"), 86), uint16(0), byte(0), uint16(61), []byte{0})
	s := newSeed(f)
	f.Fuzz(func(t *testing.T, text []byte, at uint16, flip byte, cut uint16, extra []byte) {
		if _, err := s.key.open(text, s.path, actionSubmit); !errors.Is(err, errNoDecrypt) {
			t.Fatalf("arbitrary text: open = %v, want errNoDecrypt", err)
		}
		m := slices.Clone(s.raw)
		m[int(at)%len(m)] ^= flip
		if cut > 0 {
			m = m[:int(cut)%(len(m)+1)]
		}
		m = append(m, extra...)
		sealed := []byte(base64.RawURLEncoding.EncodeToString(m))
		plain, err := s.key.open(sealed, s.path, actionSubmit)
		if !bytes.Equal(m, s.raw) {
			if !errors.Is(err, errNoDecrypt) {
				t.Fatalf("a changed answer: open = %v, want errNoDecrypt", err)
			}
			return
		}
		if err != nil || !bytes.Equal(plain, s.payload) {
			t.Fatalf("the answer as sealed does not open to its payload: %v", err)
		}
		for _, other := range [][2]string{{s.path, actionCancel}, {s.path, "approve"}, {s.path + "x", actionSubmit}, {"/", actionSubmit}} {
			if _, err := s.key.open(sealed, other[0], other[1]); !errors.Is(err, errNoDecrypt) {
				t.Fatalf("an answer for %s %s opened as %s %s", s.path, actionSubmit, other[0], other[1])
			}
		}
	})
}

// FuzzReadPayload: a decrypted payload reads exactly as encoding/json
// reads it, or gives the one documented refusal, whose text says nothing
// about the payload; the value and what the store asked for come in
// buffers of exactly their length.
func FuzzReadPayload(f *testing.F) {
	for _, s := range []string{
		`{"value":"YQ=="}`, `{"value":""}`, `{}`, `null`, `[]`, `{"value":null}`, `{"value":"!!"}`,
		`{"value":"YQ==","value":"Yg=="}`, `{"VALUE":"YQ=="}`, `{"value":1}`, `{"value":"YQ==","x":[1,{}]}`,
		`{"value":"YQ"}`, `{"value":"Y\u0051=="}`, "{\"value\":\"YQ==\"}\x00", ``, `"`,
		`{"value":"YQ==","remember":true,"account":"a"}`, `{"ask":"YQ==","account":null}`, `{"remember":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, plain []byte) {
		var ref payload
		rerr := json.Unmarshal(plain, &ref)
		got, err := readPayload(plain)
		switch {
		case rerr != nil:
			if err == nil || err.Error() != "the decrypted answer is not the expected JSON object" {
				t.Fatalf("a payload encoding/json refuses: readPayload = %v", err)
			}
		case err != nil:
			t.Fatalf("a payload encoding/json reads: readPayload = %v", err)
		case !bytes.Equal(got.Value, ref.Value) || !bytes.Equal(got.Ask, ref.Ask):
			t.Fatalf("the value or the store's answer differs from encoding/json's")
		case got.Remember != ref.Remember || (got.Account == nil) != (ref.Account == nil) ||
			(got.Account != nil && *got.Account != *ref.Account):
			t.Fatalf("the choices differ from encoding/json's")
		case cap(got.Value) != len(got.Value) || cap(got.Ask) != len(got.Ask):
			t.Fatalf("a buffer is larger than what it holds")
		}
	})
}

// A POST the fuzzer writes may hold these, replaced by the real thing:
// the prompt's CSRF token, and a real encrypted answer of postSecret.
const (
	markCSRF   = "CSRF"
	markSealed = "SEALED"
)

// postCodes are the answers to a POST that PROTOCOL.md documents.
var postCodes = []int{http.StatusOK, http.StatusBadRequest, http.StatusForbidden,
	http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity}

// FuzzPost sends the prompt's handler a POST with an arbitrary body (and,
// by flags, the wrong headers): it answers only with a documented status,
// never echoes the value, and the prompt ends only when the POST was a
// real answer: a cancel, or the real encrypted answer, whose value Wait
// then hands over intact. Every refusal leaves the prompt open.
func FuzzPost(f *testing.F) {
	for _, s := range []string{
		"csrf=CSRF&action=submit&answer=SEALED", "csrf=CSRF&action=cancel", "csrf=CSRF&action=watch",
		"csrf=CSRF&action=submit&answer=SEALEDx", "csrf=CSRF&action=submit", "csrf=CSRF&action=submit&answer=SEALED&value=x",
		"csrf=CSRF&action=%73ubmit&answer=SEALED", "csrf=CSRF&csrf=CSRF&action=cancel", "action=cancel",
		"csrf=CSRF&action=approve&answer=SEALED", "csrf=CSRF%zz&action=cancel", "csrf=CSRF&action=submit&answer=%53EALED",
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Add([]byte("csrf=CSRF&action=cancel"), uint8(1))
	f.Add([]byte("csrf=CSRF&action=cancel"), uint8(2))
	f.Add([]byte("csrf=CSRF&action=cancel"), uint8(4))
	f.Add([]byte("csrf=CSRF&action=cancel"), uint8(8))
	f.Add(bytes.Repeat([]byte("a"), maxBody+1), uint8(0))
	secret := leakscan.NewSecret(f)
	f.Fuzz(func(t *testing.T, body []byte, flags uint8) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		fp, err := Start(ctx, fill.PromptInfo{Service: "github.com", Origin: "https://github.com", Field: fill.FieldPassword})
		if err != nil {
			t.Fatal(err)
		}
		p := fp.(*prompt)
		defer p.Close()
		get(p, false, "none") // the page's browser binds it
		sealed := sealTo(t, p.page.keyBytes(t), answerInfo(p.path, actionSubmit),
			[]byte(`{"value":"`+base64.StdEncoding.EncodeToString(secret)+`"}`))
		real := bytes.ReplaceAll(bytes.ReplaceAll(body, []byte(markCSRF), p.csrf), []byte(markSealed), []byte(sealed))

		r := httptest.NewRequest(http.MethodPost, p.path, bytes.NewReader(real))
		r.Host = p.host
		r.Header.Set("Origin", p.origin)
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		r.AddCookie(&http.Cookie{Name: cookieName, Value: string(p.cookie)})
		switch {
		case flags&1 != 0:
			r.Header.Del("Origin")
		case flags&2 != 0:
			r.Header.Set("Content-Type", "text/plain")
		case flags&4 != 0:
			r.Header.Del("Cookie")
		case flags&8 != 0:
			r.Header.Set("Sec-Fetch-Site", "cross-site")
		}
		// A watch returns once its request is gone: this one is gone
		// from the start.
		gone, stop := context.WithCancel(ctx)
		stop()
		r = r.WithContext(gone)
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)

		code := w.Result().StatusCode
		if !slices.Contains(postCodes, code) {
			t.Fatalf("the prompt answered %d, which PROTOCOL.md does not list", code)
		}
		if leakscan.Contains(w.Body.Bytes(), secret) {
			t.Fatalf("the response holds the value")
		}
		if !p.isEnded() {
			return // refused or a watch: the prompt stays open
		}
		if code != http.StatusOK {
			t.Fatalf("a POST refused with %d ended the prompt", code)
		}
		a, err := p.Wait(ctx)
		switch {
		case err != nil:
			t.Fatalf("the prompt ended, but Wait = %v", err)
		case a.Cancelled:
		case !bytes.Contains(real, []byte(sealed)):
			t.Fatalf("a value was taken from a POST without the real encrypted answer")
		case !bytes.Equal(a.Value, secret):
			t.Fatalf("the answer's value differed")
		}
		clear(a.Value)
	})
}
