package nativeprompt

import (
	"context"
	"errors"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// flow is one Ask: the dialogs for one PromptInfo, one after another.
type flow struct {
	b        backend
	t        texts
	info     fill.PromptInfo
	deadline time.Time
}

// run shows the dialogs and returns the answer. A cancel at any step is
// Answer{Cancelled: true}, except at the Remember question, where it
// means "don't remember". On an error every value typed so far is zeroed.
func (f *flow) run(ctx context.Context) (fill.Answer, error) {
	if f.info.Field == fill.FieldPasskey {
		return f.passkey(ctx)
	}
	if f.info.From != "" {
		c, err := f.b.confirm(ctx, f.dialog(f.t.saved()))
		switch {
		case errors.Is(err, errCancelled):
			return fill.Answer{Cancelled: true}, nil
		case err != nil:
			return fill.Answer{}, err
		case c == choiceOK:
			return f.approve(ctx)
		}
		// Type instead.
	}
	return f.typed(ctx)
}

// passkey asks the person to approve one use (or the enrolment) of the
// agents' passkey: Approve or Cancel, nothing to type.
func (f *flow) passkey(ctx context.Context) (fill.Answer, error) {
	c, err := f.b.confirm(ctx, f.dialog(f.t.passkey()))
	switch {
	case errors.Is(err, errCancelled):
		return fill.Answer{Cancelled: true}, nil
	case err != nil:
		return fill.Answer{}, err
	case c == choiceOK:
		return fill.Answer{Approved: true}, nil
	}
	return fill.Answer{Cancelled: true}, nil
}

// approve asks what approving the saved value needs: the account, and
// what its store needs typed.
func (f *flow) approve(ctx context.Context) (fill.Answer, error) {
	a := fill.Answer{Approved: true}
	switch len(f.info.Accounts) {
	case 0:
	case 1:
		a.Account = f.info.Accounts[0]
	default:
		i, err := f.pick(ctx)
		if errors.Is(err, errCancelled) {
			return fill.Answer{Cancelled: true}, nil
		}
		if err != nil {
			return fill.Answer{}, err
		}
		a.Account = f.info.Accounts[i]
	}
	if f.info.Ask != "" {
		asked, err := f.nonEmpty(ctx, f.t.ask(), f.t.askEmpty())
		if errors.Is(err, errCancelled) {
			return fill.Answer{Cancelled: true}, nil
		}
		if err != nil {
			return fill.Answer{}, err
		}
		a.Asked = asked
	}
	return a, nil
}

// pick asks which of info.Accounts to use: in a list when the backend
// has one, else one dialog per account, round and round, until the
// person uses one or cancels.
func (f *flow) pick(ctx context.Context) (int, error) {
	accounts := f.info.Accounts
	if p, ok := f.b.(picker); ok {
		shown := make([]string, len(accounts))
		for i, a := range accounts {
			shown[i] = clean(a, maxAccount)
		}
		return p.pick(ctx, f.dialog(f.t.pickList()), shown)
	}
	for i := 0; ; i = (i + 1) % len(accounts) {
		c, err := f.b.confirm(ctx, f.dialog(f.t.pickOne(i, accounts[i], len(accounts))))
		if err != nil {
			return 0, err
		}
		if c == choiceOK {
			return i, nil
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
	}
}

// typed asks the person to type the value, then whether to remember it.
func (f *flow) typed(ctx context.Context) (fill.Answer, error) {
	v, err := f.nonEmpty(ctx, f.t.typed(), f.t.typedEmpty())
	if errors.Is(err, errCancelled) {
		return fill.Answer{Cancelled: true}, nil
	}
	if err != nil {
		return fill.Answer{}, err
	}
	a := fill.Answer{Value: v}
	if f.info.Remember {
		c, err := f.b.confirm(ctx, f.dialog(f.t.remember()))
		switch {
		case errors.Is(err, errCancelled):
			// "Don't remember" is the Cancel button.
		case err != nil:
			a.Zero()
			return fill.Answer{}, err
		default:
			a.Remember = c == choiceOK
		}
	}
	return a, nil
}

// nonEmpty shows d until the person types something (an empty answer
// shows d again with the problem empty) or ends the dialog.
func (f *flow) nonEmpty(ctx context.Context, d dialog, empty string) ([]byte, error) {
	d = f.dialog(d)
	for {
		v, err := f.b.getPIN(ctx, d)
		if err != nil {
			clear(v)
			return nil, err
		}
		if len(v) > 0 {
			return v, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d.problem = empty
	}
}

// dialog completes d with what every dialog of this flow has.
func (f *flow) dialog(d dialog) dialog {
	d.deadline = f.deadline
	return d
}
