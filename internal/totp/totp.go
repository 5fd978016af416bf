// Package totp computes a one-time code from a TOTP seed (RFC 6238, with
// github.com/pquerna/otp) at the moment it is filled, and waits for the
// next time step when the current one is nearly over, so that the code
// the page gets still has time to be checked.
//
// A seed is a secret like any other: it never appears in an error, and the
// []byte holding it is the caller's to zero. pquerna/otp takes the seed as
// a Go string, so while a code is computed the seed is also held in
// strings (and the decoded key in the library's own slice), which Go
// cannot zero; they are dropped as soon as the code is made.
package totp

import (
	"context"
	"encoding/base32"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// MinRemaining is how much of a time step must be left for a code to be
// filled in it; with less, Code waits for the next step.
const MinRemaining = 3 * time.Second

// DefaultPeriod is the time step of a seed that names none, and of the
// codes password stores compute themselves.
const DefaultPeriod = 30 * time.Second

// Bounds of a seed's parameters.
const (
	minPeriod = 10 * time.Second
	maxPeriod = 5 * time.Minute
)

// ErrNotASeed is the error for a value that is not a TOTP seed. It never
// says anything about the value.
var ErrNotASeed = errors.New("not a TOTP seed: give the otpauth://totp/ URI or the base32 secret the service showed when you set up two-factor login")

// Key is a parsed seed, ready to make codes. It holds the seed: drop it
// when done.
type Key struct {
	secret    string // base32, upper case, no padding or spaces
	period    time.Duration
	digits    otp.Digits
	algorithm otp.Algorithm
	encoder   otp.Encoder
}

// Parse reads a seed: an otpauth://totp/ URI (its secret, algorithm,
// digits and period), or a bare base32 secret (spaces, dashes, padding
// and lower case allowed). Surrounding white space is ignored.
func Parse(seed []byte) (*Key, error) {
	s := strings.TrimSpace(string(seed))
	if strings.HasPrefix(strings.ToLower(s), "otpauth:") {
		return parseURI(s)
	}
	secret, err := normalizeBase32(s)
	if err != nil {
		return nil, err
	}
	return &Key{secret: secret, period: DefaultPeriod, digits: otp.DigitsSix, algorithm: otp.AlgorithmSHA1}, nil
}

// parseURI reads an otpauth:// URI.
func parseURI(s string) (*Key, error) {
	k, err := otp.NewKeyFromURL(s)
	if err != nil || !strings.EqualFold(k.Type(), "totp") {
		if err == nil && strings.EqualFold(k.Type(), "hotp") {
			return nil, errors.New("an otpauth://hotp/ seed counts logins, not time; fillgate fills TOTP codes only")
		}
		return nil, ErrNotASeed
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, ErrNotASeed
	}
	q := u.Query()
	secret, err := normalizeBase32(k.Secret())
	if err != nil {
		return nil, err
	}
	key := &Key{secret: secret, period: DefaultPeriod, digits: otp.DigitsSix, algorithm: k.Algorithm(), encoder: k.Encoder()}
	if p := q.Get("period"); p != "" {
		n, err := strconv.Atoi(p)
		key.period = time.Duration(n) * time.Second
		if err != nil || key.period < minPeriod || key.period > maxPeriod {
			return nil, fmt.Errorf("the seed's period %q is not one fillgate fills; use %d to %d seconds", p, int(minPeriod.Seconds()), int(maxPeriod.Seconds()))
		}
	}
	if d := q.Get("digits"); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n < 6 || n > 8 {
			return nil, fmt.Errorf("the seed's digits %q is not 6, 7 or 8", d)
		}
		key.digits = otp.Digits(n)
	}
	if a := strings.ToLower(q.Get("algorithm")); a != "" && a != "sha1" && a != "sha256" && a != "sha512" {
		return nil, fmt.Errorf("the seed's algorithm %q is not SHA1, SHA256 or SHA512", a)
	}
	return key, nil
}

// normalizeBase32 checks a base32 secret and writes it in upper case
// without spaces, dashes or padding.
func normalizeBase32(s string) (string, error) {
	s = strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '=' || r == '\t' {
			return -1
		}
		return r
	}, strings.ToUpper(s))
	b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(s)
	n := len(b)
	clear(b)
	if err != nil || n < 10 {
		return "", ErrNotASeed
	}
	return s, nil
}

// Period is the key's time step.
func (k *Key) Period() time.Duration { return k.period }

// CodeAt returns the code for the step that holds t. The caller zeroes it.
func (k *Key) CodeAt(t time.Time) ([]byte, error) {
	code, err := totp.GenerateCodeCustom(k.secret, t, totp.ValidateOpts{
		Period: uint(k.period / time.Second), Digits: k.digits, Algorithm: k.algorithm, Encoder: k.encoder,
	})
	if err != nil {
		return nil, ErrNotASeed
	}
	return []byte(code), nil
}

// Clock is where time comes from; tests give a fake one.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now is time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// After is time.After.
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Remaining is how much of the step of length period that holds t is left.
func Remaining(t time.Time, period time.Duration) time.Duration {
	into := time.Duration(t.UnixNano() % int64(period))
	if into < 0 {
		into += period
	}
	return period - into
}

// Fresh returns a moment to make a code at: now, or, when fewer than
// MinRemaining of the step of length period are left, the start of the
// next step, after waiting for it (it returns ctx's error if ctx ends
// first).
func Fresh(ctx context.Context, clock Clock, period time.Duration) (time.Time, error) {
	now := clock.Now()
	left := Remaining(now, period)
	if left >= MinRemaining {
		return now, nil
	}
	select {
	case <-clock.After(left):
		// The next step's start, or later if the wait overshot it.
		if t := clock.Now(); t.After(now.Add(left)) {
			return t, nil
		}
		return now.Add(left), nil
	case <-ctx.Done():
		return time.Time{}, context.Cause(ctx)
	}
}

// Code parses seed and returns the code to fill now, waiting for the next
// step first when the current one is nearly over. The caller zeroes both
// the seed and the code.
func Code(ctx context.Context, clock Clock, seed []byte) ([]byte, error) {
	k, err := Parse(seed)
	if err != nil {
		return nil, err
	}
	at, err := Fresh(ctx, clock, k.period)
	if err != nil {
		return nil, err
	}
	return k.CodeAt(at)
}
