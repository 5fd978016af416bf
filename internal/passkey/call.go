package passkey

// One WebAuthn call of a page, as the extension relays it, judged against
// the agent's or the person's request that armed its tab: fillgate
// answers it, refuses it, or lets the browser's own WebAuthn answer it
// (the person's own passkeys are never touched). The extension's worker
// keeps the armed tabs (one arm per tab, one call per arm, until its
// deadline); signing is passkeyring's.

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Arm is one request that armed a tab for one call: the ceremony it may
// answer, on the origin the policy allowed for the service.
type Arm struct {
	ID       string // the request id the extension hands back with the call
	Tab      int64
	Ceremony Ceremony
	Service  string
	Account  string
	// Origin is the top frame's origin the policy allowed (the inspect's).
	Origin   string
	Deadline time.Time
}

// Call is a page's navigator.credentials call as the extension saw it.
// The service worker fills in Origin, Tab and Frame from what the browser
// says of the sender; everything else the page wrote.
type Call struct {
	ID       string
	Ceremony Ceremony
	Tab      int64
	Frame    int64
	Origin   string
	// RPID is the relying party id the page asked for ("" for its host).
	RPID             string
	Challenge        []byte
	Allow            [][]byte // get: allowCredentials ids
	UserVerification string   // required, preferred, discouraged
	// create only:
	UserHandle []byte
	UserName   string
	Algs       []int64 // pubKeyCredParams' algorithms
	Exclude    [][]byte
}

// Stored is what is kept of the passkey a get() would use (nil for a
// create()).
type Stored struct {
	RPID string
	ID   []byte
}

// Outcome is what fillgate does with a call.
type Outcome int

// The outcomes.
const (
	// Pass lets the browser's own WebAuthn answer, untouched.
	Pass Outcome = iota
	// Answer: fillgate answers, after the approval the policy asks.
	Answer
	// Refuse: the call was fillgate's, but it may not be answered; the
	// page gets WebAuthn's NotAllowedError.
	Refuse
)

// Verdict is Judge's answer: the outcome, why (for the audit log and the
// agent: page text is never quoted), and for Answer the origin and
// relying party the response is made for.
type Verdict struct {
	Outcome Outcome
	Reason  string
	Origin  Origin
	RP      RPID
}

// es256 is COSE's ES256, the one algorithm fillgate's passkeys use.
const es256 = -7

// maxUserHandle is WebAuthn's limit on a user handle.
const maxUserHandle = 64

// Judge decides a call for the arm it was made under: the same ceremony,
// from the top frame of the armed tab, on exactly the origin the policy
// allowed, for a relying party that origin may claim (WebAuthn's rule,
// CheckRPID), and for a get() the kept passkey's relying party,
// named in allowCredentials when the page lists any. Anything else is
// Pass: the browser answers as if fillgate were not there.
func Judge(a Arm, c Call, kept *Stored) Verdict {
	pass := func(why string) Verdict { return Verdict{Outcome: Pass, Reason: why} }
	switch {
	case c.ID == "" || c.ID != a.ID:
		return pass("the call came under no request of this tab")
	case c.Tab != a.Tab:
		return pass("the call came from another tab than the armed one")
	case c.Frame != 0:
		return pass("the call came from a frame, not the top page")
	case c.Ceremony != a.Ceremony:
		return pass(fmt.Sprintf("the page called %s; the tab was armed for %s", c.Ceremony, a.Ceremony))
	case c.Origin != a.Origin:
		return pass("the page's origin is not the one the policy allowed for the service")
	case len(c.Challenge) == 0:
		return pass("the page sent no challenge")
	}
	o, err := ParseOrigin(c.Origin)
	if err != nil {
		return pass("the page's origin cannot use WebAuthn")
	}
	rp, err := CheckRPID(o, c.RPID)
	if err != nil {
		return pass("the page asked for a relying party its origin may not claim")
	}
	switch c.Ceremony {
	case Get:
		switch {
		case kept == nil:
			return pass("no passkey of the agents' is kept for the service")
		case kept.RPID != rp.String():
			return pass("the page asked for another relying party than the passkey's")
		case len(c.Allow) > 0 && !slices.ContainsFunc(c.Allow, func(id []byte) bool { return bytes.Equal(id, kept.ID) }):
			return pass("the page asked for other passkeys than the agents'")
		}
	case Create:
		switch {
		case !slices.Contains(c.Algs, es256):
			return pass("the page does not take ES256 keys")
		case len(c.UserHandle) == 0 || len(c.UserHandle) > maxUserHandle:
			return pass("the page's user handle is not 1 to 64 bytes")
		case kept != nil && slices.ContainsFunc(c.Exclude, func(id []byte) bool { return bytes.Equal(id, kept.ID) }):
			return Verdict{Outcome: Refuse, Reason: "the site already has this passkey of the agents'"}
		}
	default:
		return pass("not a WebAuthn ceremony")
	}
	return Verdict{Outcome: Answer, Origin: o, RP: rp}
}

// ErrUVRequired is CallPresence's error for a call that requires user
// verification when the person did not approve this very use.
var ErrUVRequired = errors.New("the site requires user verification, which for a passkey of the agents' is the person's approval in the prompt; this use was approved by a lease or approval = \"none\"")

// CallPresence is what the authenticator data says of the person: UP for
// every use fillgate answers (an armed, policy-allowed request), UV only
// when the person approved this very use in the prompt or the native
// dialog. A call with userVerification "required" and no such approval
// is refused.
func CallPresence(approvedByPerson bool, userVerification string) (Presence, error) {
	if userVerification == "required" && !approvedByPerson {
		return Presence{}, ErrUVRequired
	}
	return Presence{UserPresent: true, UserVerified: approvedByPerson}, nil
}
