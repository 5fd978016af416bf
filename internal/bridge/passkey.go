package bridge

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/nativemsg"
	"github.com/fillgate/fillgate/internal/passkey"
)

// The passkey messages (PROTOCOL.md §2, Passkeys): ArmPasskey arms a tab
// for one WebAuthn call and waits for the page's call (the extension's
// passkey_called notice) or the arm's end; AnswerPasskey, RefusePasskey
// and PassPasskey send the verdict on it. No message carries a private
// key: the response holds only what the page gets.

// passkeyWait is one arm waiting for its call.
type passkeyWait struct {
	called  chan passkey.Call // buffered: one call
	aborted chan string       // buffered: why the arm ended unused
}

// ErrPasskeyAborted wraps ArmPasskey's error when the arm ended unused:
// its deadline, the tab loaded another document or closed.
var ErrPasskeyAborted = errors.New("the tab's passkey arm ended before the page called")

// disarmBudget bounds the disarm sent when an arm is given up.
const disarmBudget = 2 * time.Second

// ArmPasskey arms a.Tab's top frame for one call of a.Ceremony on
// a.Origin until a.Deadline, calls armed (if not nil) once the extension
// has armed it, and returns the page's call as the extension saw it. The
// call's Tab, Frame and Origin are what the browser said of its sender.
// When ctx ends first, the arm is dropped.
func (b *Bridge) ArmPasskey(ctx context.Context, a passkey.Arm, rpID string, armed func()) (passkey.Call, error) {
	w := &passkeyWait{called: make(chan passkey.Call, 1), aborted: make(chan string, 1)}
	b.mu.Lock()
	if b.passkeys == nil {
		b.passkeys = map[string]*passkeyWait{}
	}
	if _, dup := b.passkeys[a.ID]; dup || a.ID == "" {
		b.mu.Unlock()
		return passkey.Call{}, errors.New("passkey_arm: a request id that is empty or in use")
	}
	b.passkeys[a.ID] = w
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.passkeys, a.ID)
		b.mu.Unlock()
	}()
	var reply armedReply
	err := b.call(ctx, "passkey_arm", passkeyArmRequest{"passkey_arm", a.Tab, 0, a.Origin, a.Service, rpID, ceremonyWord(a.Ceremony), a.ID, a.Deadline.UTC().Format(time.RFC3339Nano)}, "armed", &reply)
	var re *nativemsg.ReplyError
	if errors.As(err, &re) && re.Code == CodeNotActive {
		return passkey.Call{}, notActive{}
	}
	if err != nil {
		return passkey.Call{}, err
	}
	if reply.Tab != a.Tab {
		b.disarm(a.ID)
		return passkey.Call{}, errors.New("extension armed another tab than the one asked for")
	}
	if armed != nil {
		armed()
	}
	select {
	case c := <-w.called:
		return c, nil
	case why := <-w.aborted:
		return passkey.Call{}, fmt.Errorf("%w (%s)", ErrPasskeyAborted, why)
	case <-b.port.Done():
		return passkey.Call{}, callError("passkey_arm", nativemsg.ErrClosed)
	case <-ctx.Done():
		b.disarm(a.ID)
		return passkey.Call{}, callError("passkey_arm", ctx.Err())
	}
}

// disarm drops the arm request in the extension (and lets a call waiting
// under it fall through), within disarmBudget.
func (b *Bridge) disarm(request string) {
	ctx, cancel := context.WithTimeout(context.Background(), disarmBudget)
	defer cancel()
	var reply typeOnly
	if err := b.call(ctx, "passkey_disarm", passkeyVerdict{"passkey_disarm", request}, "ok", &reply); err != nil {
		b.log.Warn("bridge: could not disarm a passkey request", "err", err)
	}
}

// AnswerPasskey hands the page the response to its call under request.
func (b *Bridge) AnswerPasskey(ctx context.Context, request string, r fill.PasskeyResponse) error {
	enc := func(v []byte) string { return base64.RawURLEncoding.EncodeToString(v) }
	var reply typeOnly
	return b.call(ctx, "passkey_answer", passkeyAnswerRequest{"passkey_answer", request, passkeyResponse{enc(r.ID), enc(r.ClientDataJSON), enc(r.AuthenticatorData), enc(r.Signature),
		enc(r.UserHandle), enc(r.AttestationObject), enc(r.PublicKey)}}, "ok", &reply)
}

// RefusePasskey ends the page's call under request in NotAllowedError.
func (b *Bridge) RefusePasskey(ctx context.Context, request string) error {
	return b.verdict(ctx, "passkey_refuse", request)
}

// PassPasskey lets the browser's own WebAuthn answer the page's call
// under request, with the page's own arguments.
func (b *Bridge) PassPasskey(ctx context.Context, request string) error {
	return b.verdict(ctx, "passkey_pass", request)
}

func (b *Bridge) verdict(ctx context.Context, kind, request string) error {
	var reply typeOnly
	return b.call(ctx, kind, passkeyVerdict{kind, request}, "ok", &reply)
}

// calledNotice is the extension's passkey_called notice.
type calledNotice struct {
	Type             string   `json:"type"`
	Request          string   `json:"request"`
	Ceremony         string   `json:"ceremony"`
	Tab              int64    `json:"tab"`
	Frame            int64    `json:"frame"`
	Document         string   `json:"document"` // the browser's id of the calling document; the host does not use it
	Origin           string   `json:"origin"`
	RPID             string   `json:"rp_id"`
	Challenge        string   `json:"challenge"`
	UserVerification string   `json:"user_verification"`
	Allow            []string `json:"allow"`
	User             struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"user"`
	Algs    []int64  `json:"algs"`
	Exclude []string `json:"exclude"`
}

// passkeyAborted hands passkey_aborted to the arm waiting for it.
func (b *Bridge) passkeyAborted(n abortedNotice) {
	b.mu.Lock()
	w := b.passkeys[n.Request]
	b.mu.Unlock()
	if w == nil {
		return
	}
	select {
	case w.aborted <- cutType(n.Reason):
	default:
	}
}

// passkeyCalled hands passkey_called to the arm waiting for it. A call
// nobody waits for, or one that does not decode, is let through to the
// browser at once.
func (b *Bridge) passkeyCalled(n calledNotice) {
	b.mu.Lock()
	w := b.passkeys[n.Request]
	b.mu.Unlock()
	c, err := n.call()
	if w == nil || err != nil {
		b.log.Info("bridge: let a passkey call through", "reason", "no arm waits for it or it does not decode")
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), disarmBudget)
			defer cancel()
			_ = b.PassPasskey(ctx, n.Request)
		}()
		return
	}
	select {
	case w.called <- c:
	default:
	}
}

// call decodes the notice's byte strings.
func (n calledNotice) call() (passkey.Call, error) {
	dec := base64.RawURLEncoding.DecodeString
	c := passkey.Call{ID: n.Request, Tab: n.Tab, Frame: n.Frame, Origin: n.Origin, RPID: n.RPID,
		UserVerification: n.UserVerification, UserName: n.User.Name, Algs: n.Algs}
	switch n.Ceremony {
	case "get":
		c.Ceremony = passkey.Get
	case "create":
		c.Ceremony = passkey.Create
	default:
		return c, errors.New("no ceremony")
	}
	var err error
	if c.Challenge, err = dec(n.Challenge); err != nil {
		return c, err
	}
	if n.User.ID != "" {
		if c.UserHandle, err = dec(n.User.ID); err != nil {
			return c, err
		}
	}
	for _, list := range []struct {
		in  []string
		out *[][]byte
	}{{n.Allow, &c.Allow}, {n.Exclude, &c.Exclude}} {
		for _, s := range list.in {
			id, err := dec(s)
			if err != nil {
				return c, err
			}
			*list.out = append(*list.out, id)
		}
	}
	return c, nil
}

// ceremonyWord is a ceremony as the extension names it.
func ceremonyWord(c passkey.Ceremony) string {
	if c == passkey.Create {
		return "create"
	}
	return "get"
}

var _ fill.PasskeyBrowser = (*Bridge)(nil)
