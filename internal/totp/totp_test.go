package totp

import (
	"context"
	"encoding/base32"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// rfcSeeds are RFC 6238 appendix B's seeds, by algorithm.
var rfcSeeds = map[string]string{
	"SHA1":   "12345678901234567890",
	"SHA256": "12345678901234567890123456789012",
	"SHA512": "1234567890123456789012345678901234567890123456789012345678901234",
}

func uri(alg string, extra string) []byte {
	secret := base32.StdEncoding.EncodeToString([]byte(rfcSeeds[alg]))
	return []byte("otpauth://totp/Example:alice@example.com?secret=" + secret + "&issuer=Example&algorithm=" + alg + "&digits=8" + extra)
}

// TestRFC6238Vectors checks every test vector of RFC 6238 appendix B.
func TestRFC6238Vectors(t *testing.T) {
	vectors := []struct {
		unix int64
		want map[string]string
	}{
		{59, map[string]string{"SHA1": "94287082", "SHA256": "46119246", "SHA512": "90693936"}},
		{1111111109, map[string]string{"SHA1": "07081804", "SHA256": "68084774", "SHA512": "25091201"}},
		{1111111111, map[string]string{"SHA1": "14050471", "SHA256": "67062674", "SHA512": "99943326"}},
		{1234567890, map[string]string{"SHA1": "89005924", "SHA256": "91819424", "SHA512": "93441116"}},
		{2000000000, map[string]string{"SHA1": "69279037", "SHA256": "90698825", "SHA512": "38618901"}},
		{20000000000, map[string]string{"SHA1": "65353130", "SHA256": "77737706", "SHA512": "47863826"}},
	}
	for _, v := range vectors {
		for alg, want := range v.want {
			k, err := Parse(uri(alg, ""))
			if err != nil {
				t.Fatalf("Parse(%s): %v", alg, err)
			}
			got, err := k.CodeAt(time.Unix(v.unix, 0).UTC())
			if err != nil || string(got) != want {
				t.Errorf("%s at %d: got %q, %v; want %s", alg, v.unix, got, err, want)
			}
		}
	}
}

func TestParseForms(t *testing.T) {
	at := time.Unix(1111111109, 0)
	b32 := base32.StdEncoding.EncodeToString([]byte(rfcSeeds["SHA1"])) // GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ
	want := "081804"                                                   // the six low digits of 07081804
	for _, seed := range []string{
		b32,
		strings.ToLower(b32),
		"  " + b32 + "\n",
		"GEZD GNBV GY3T QOJQ GEZD GNBV GY3T QOJQ",
		"gezd-gnbv-gy3t-qojq-gezd-gnbv-gy3t-qojq",
		"otpauth://totp/x?secret=" + b32,
		"otpauth://totp/x?secret=" + strings.ToLower(b32) + "&period=30&digits=6&algorithm=SHA1",
		"OTPAUTH://TOTP/x?secret=" + b32,
	} {
		k, err := Parse([]byte(seed))
		if err != nil {
			t.Errorf("Parse of a seed form: %v", err)
			continue
		}
		if got, _ := k.CodeAt(at); string(got) != want {
			t.Errorf("a seed form gave a different code")
		}
	}
	if k, err := Parse([]byte("otpauth://totp/x?secret=" + b32 + "&period=60&digits=7")); err != nil || k.Period() != time.Minute {
		t.Errorf("period and digits: %v", err)
	} else if got, _ := k.CodeAt(at); len(got) != 7 {
		t.Errorf("digits=7 gave another number of digits")
	}
}

func TestParseRefusals(t *testing.T) {
	const marker = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
	for name, seed := range map[string]string{
		"empty":          "",
		"not base32":     "not a seed at all!",
		"short":          "GEZDGNBV",
		"hotp":           "otpauth://hotp/x?secret=" + marker + "&counter=1",
		"other scheme":   "otpauth://steam/x?secret=" + marker,
		"no secret":      "otpauth://totp/x?issuer=a",
		"bad secret":     "otpauth://totp/x?secret=0189" + marker,
		"period 0":       "otpauth://totp/x?secret=" + marker + "&period=0",
		"period huge":    "otpauth://totp/x?secret=" + marker + "&period=86400",
		"digits 4":       "otpauth://totp/x?secret=" + marker + "&digits=4",
		"digits 10":      "otpauth://totp/x?secret=" + marker + "&digits=10",
		"algorithm md5":  "otpauth://totp/x?secret=" + marker + "&algorithm=MD5",
		"password typed": "hunter2",
	} {
		_, err := Parse([]byte(seed))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), marker) || seed != "" && strings.Contains(err.Error(), seed) {
			t.Errorf("%s: the error quotes the seed", name)
		}
	}
}

// fakeClock is a clock a test moves by hand: After fires when Advance
// passes its deadline.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
	waiting chan time.Duration // each After call, for the test to see
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, waiting: make(chan time.Duration, 8)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.waiters = append(c.waiters, waiter{at: c.now.Add(d), ch: ch})
	c.waiting <- d
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
			continue
		}
		kept = append(kept, w)
	}
	c.waiters = kept
}

// TestStepEdge: with 3 s or more left in the step, the code is for this
// step at once; with less, Code waits for the next step and fills its code.
func TestStepEdge(t *testing.T) {
	seed := uri("SHA1", "")
	key, _ := Parse(seed)
	step := time.Unix(1111111080, 0) // a step boundary (1111111080 = 37037036 × 30)
	thisStep, _ := key.CodeAt(step)
	nextStep, _ := key.CodeAt(step.Add(30 * time.Second))
	if string(thisStep) == string(nextStep) {
		t.Fatal("the test needs two steps with different codes")
	}
	ctx := context.Background()

	for _, into := range []time.Duration{0, 10 * time.Second, 27 * time.Second} {
		clock := newFakeClock(step.Add(into))
		got, err := Code(ctx, clock, seed)
		if err != nil || string(got) != string(thisStep) {
			t.Errorf("%v into the step: not this step's code (%v)", into, err)
		}
		if len(clock.waiting) != 0 {
			t.Errorf("%v into the step: waited", into)
		}
	}

	for _, into := range []time.Duration{27*time.Second + time.Nanosecond, 29 * time.Second, 30*time.Second - time.Nanosecond} {
		clock := newFakeClock(step.Add(into))
		done := make(chan []byte, 1)
		go func() {
			got, err := Code(ctx, clock, seed)
			if err != nil {
				t.Errorf("Code: %v", err)
			}
			done <- got
		}()
		if d := <-clock.waiting; d != 30*time.Second-into {
			t.Errorf("%v into the step: waits %v; want the rest of the step", into, d)
		}
		select {
		case <-done:
			t.Fatalf("%v into the step: Code returned before the step ended", into)
		default:
		}
		clock.Advance(30*time.Second - into)
		if got := <-done; string(got) != string(nextStep) {
			t.Errorf("%v into the step: not the next step's code", into)
		}
	}
}

func TestFreshGivesUpWithContext(t *testing.T) {
	clock := newFakeClock(time.Unix(1111111080+29, 0))
	ctx, cancel := context.WithCancelCause(context.Background())
	gone := errors.New("the request ended")
	done := make(chan error, 1)
	go func() {
		_, err := Fresh(ctx, clock, DefaultPeriod)
		done <- err
	}()
	<-clock.waiting
	cancel(gone)
	if err := <-done; !errors.Is(err, gone) {
		t.Fatalf("Fresh after cancel = %v; want the cause", err)
	}
}

func TestRemaining(t *testing.T) {
	for _, c := range []struct {
		t    time.Time
		want time.Duration
	}{
		{time.Unix(0, 0), 30 * time.Second},
		{time.Unix(29, 0), time.Second},
		{time.Unix(29, 500_000_000), 500 * time.Millisecond},
		{time.Unix(30, 0), 30 * time.Second},
		{time.Unix(-1, 0), time.Second},
	} {
		if got := Remaining(c.t, 30*time.Second); got != c.want {
			t.Errorf("Remaining(%v) = %v; want %v", c.t.Unix(), got, c.want)
		}
	}
}
