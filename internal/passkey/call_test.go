package passkey_test

import (
	"errors"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/passkey"
)

var (
	t0      = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ourID   = []byte{0xf1, 0x11}
	otherID = []byte{0x01}
)

func arm(c passkey.Ceremony) passkey.Arm {
	return passkey.Arm{ID: "req-1", Tab: 7, Ceremony: c, Service: "example.com", Origin: "https://login.example.com", Deadline: t0.Add(time.Minute)}
}

func getCall() passkey.Call {
	return passkey.Call{ID: "req-1", Ceremony: passkey.Get, Tab: 7, Frame: 0, Origin: "https://login.example.com",
		RPID: "example.com", Challenge: []byte("challenge"), UserVerification: "preferred"}
}

func createCall() passkey.Call {
	c := getCall()
	c.Ceremony = passkey.Create
	c.UserHandle, c.UserName, c.Algs = []byte{9}, "alice", []int64{-8, -7, -257}
	return c
}

var kept = &passkey.Stored{RPID: "example.com", ID: ourID}

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name string
		arm  passkey.Arm
		call func(*passkey.Call)
		kept *passkey.Stored
		want passkey.Outcome
		rp   string
	}{
		{"get answered", arm(passkey.Get), nil, kept, passkey.Answer, "example.com"},
		{"get with our id listed", arm(passkey.Get), func(c *passkey.Call) { c.Allow = [][]byte{otherID, ourID} }, kept, passkey.Answer, "example.com"},
		{"get for the host itself", arm(passkey.Get), func(c *passkey.Call) { c.RPID = "" },
			&passkey.Stored{RPID: "login.example.com", ID: ourID}, passkey.Answer, "login.example.com"},
		{"create answered", arm(passkey.Create), func(c *passkey.Call) { *c = createCall() }, nil, passkey.Answer, "example.com"},
		{"create replaces a passkey not excluded", arm(passkey.Create), func(c *passkey.Call) { *c = createCall(); c.Exclude = [][]byte{otherID} }, kept, passkey.Answer, "example.com"},

		{"another request id", arm(passkey.Get), func(c *passkey.Call) { c.ID = "req-2" }, kept, passkey.Pass, ""},
		{"no request id (not armed)", arm(passkey.Get), func(c *passkey.Call) { c.ID = "" }, kept, passkey.Pass, ""},
		{"another tab", arm(passkey.Get), func(c *passkey.Call) { c.Tab = 8 }, kept, passkey.Pass, ""},
		{"cross-origin frame", arm(passkey.Get), func(c *passkey.Call) { c.Frame = 3; c.Origin = "https://evil.test" }, kept, passkey.Pass, ""},
		{"same-origin frame", arm(passkey.Get), func(c *passkey.Call) { c.Frame = 3 }, kept, passkey.Pass, ""},
		{"wrong origin", arm(passkey.Get), func(c *passkey.Call) { c.Origin = "https://evil.example.net" }, kept, passkey.Pass, ""},
		{"sibling origin of the service", arm(passkey.Get), func(c *passkey.Call) { c.Origin = "https://other.example.com" }, kept, passkey.Pass, ""},
		{"rpId not claimable", arm(passkey.Get), func(c *passkey.Call) { c.RPID = "example.net" }, kept, passkey.Pass, ""},
		{"rpId a public suffix", arm(passkey.Get), func(c *passkey.Call) { c.RPID = "com" }, kept, passkey.Pass, ""},
		{"rpId a child of the host", arm(passkey.Get), func(c *passkey.Call) { c.RPID = "a.login.example.com" }, kept, passkey.Pass, ""},
		{"rpId mismatch with the kept one", arm(passkey.Get), func(c *passkey.Call) { c.RPID = "login.example.com" }, kept, passkey.Pass, ""},
		{"allowCredentials without our id", arm(passkey.Get), func(c *passkey.Call) { c.Allow = [][]byte{otherID} }, kept, passkey.Pass, ""},
		{"nothing kept", arm(passkey.Get), nil, nil, passkey.Pass, ""},
		{"no challenge", arm(passkey.Get), func(c *passkey.Call) { c.Challenge = nil }, kept, passkey.Pass, ""},
		{"create without add (armed for get)", arm(passkey.Get), func(c *passkey.Call) { *c = createCall() }, kept, passkey.Pass, ""},
		{"get on a tab armed to add", arm(passkey.Create), nil, kept, passkey.Pass, ""},
		{"create without ES256", arm(passkey.Create), func(c *passkey.Call) { *c = createCall(); c.Algs = []int64{-257} }, nil, passkey.Pass, ""},
		{"create without a user handle", arm(passkey.Create), func(c *passkey.Call) { *c = createCall(); c.UserHandle = nil }, nil, passkey.Pass, ""},
		{"create with a long user handle", arm(passkey.Create), func(c *passkey.Call) { *c = createCall(); c.UserHandle = make([]byte, 65) }, nil, passkey.Pass, ""},
		{"create excluding ours", arm(passkey.Create), func(c *passkey.Call) { *c = createCall(); c.Exclude = [][]byte{ourID} }, kept, passkey.Refuse, ""},
		{"plain http off localhost", passkey.Arm{ID: "req-1", Tab: 7, Ceremony: passkey.Get, Origin: "http://login.example.com"},
			func(c *passkey.Call) { c.Origin = "http://login.example.com" }, kept, passkey.Pass, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := getCall()
			if tc.call != nil {
				tc.call(&c)
			}
			v := passkey.Judge(tc.arm, c, tc.kept)
			if v.Outcome != tc.want {
				t.Fatalf("Judge = %d (%s); want %d", v.Outcome, v.Reason, tc.want)
			}
			if tc.want == passkey.Answer && (v.RP.String() != tc.rp || v.Origin.String() != c.Origin) {
				t.Fatalf("answer for rp %q origin %q; want %q %q", v.RP, v.Origin, tc.rp, c.Origin)
			}
			if tc.want != passkey.Answer && v.Reason == "" {
				t.Fatal("no reason")
			}
		})
	}
}

func TestPresence(t *testing.T) {
	for _, tc := range []struct {
		person bool
		uv     string
		want   passkey.Presence
		err    error
	}{
		{true, "required", passkey.Presence{UserPresent: true, UserVerified: true}, nil},
		{true, "preferred", passkey.Presence{UserPresent: true, UserVerified: true}, nil},
		{false, "preferred", passkey.Presence{UserPresent: true}, nil},
		{false, "discouraged", passkey.Presence{UserPresent: true}, nil},
		{false, "", passkey.Presence{UserPresent: true}, nil},
		{false, "required", passkey.Presence{}, passkey.ErrUVRequired}, // lease or none
	} {
		p, err := passkey.CallPresence(tc.person, tc.uv)
		if p != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("Presence(%v, %q) = %+v, %v; want %+v, %v", tc.person, tc.uv, p, err, tc.want, tc.err)
		}
	}
}
