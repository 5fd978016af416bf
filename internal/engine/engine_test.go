package engine

import (
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/policy"
)

// TestWhatAHostLacksStaysNil: a part a host leaves nil reaches the fill
// flow as nil (an interface holding a nil pointer would not read as
// "none here"), and what comes from the policy comes from it.
func TestWhatAHostLacksStaysNil(t *testing.T) {
	pol := policy.Default()
	pol.Prompt = fill.PromptNative
	store := fill.NewMemState()
	e := New(pol, Parts{Store: store})
	if e.Passkeys != nil || e.Notifier != nil || e.OnOutcome != nil || e.Audit != nil || e.Bars != nil {
		t.Errorf("parts left nil are set: passkeys %v, notifier %v, outcome set %v, audit %v, bars %v",
			e.Passkeys, e.Notifier, e.OnOutcome != nil, e.Audit, e.Bars)
	}
	if e.State != store || e.Leases != store {
		t.Error("the store is not the flow's state and leases")
	}
	if e.PromptMode != fill.PromptNative || e.Limits != pol.Limits() || e.Policy != pol {
		t.Errorf("prompt mode %q, limits %+v: not the policy's", e.PromptMode, e.Limits)
	}
	if e.Native == nil || e.Prompter == nil || e.Planner == nil || e.CleanRoom == nil {
		t.Error("the native dialog, the page prompt, the planner or the clean room is missing")
	}
}
