package planner

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/keychain"
)

// A passkey plan: the approval the policy gives the service, and the
// agents' passkeys kept for it (names only, never read); never a value to
// type, fetch or remember.
func TestPasskeyPlans(t *testing.T) {
	pk := func(service, account string) keychain.Item {
		return keychain.Item{Service: service, Field: keychain.FieldPasskey, Account: account}
	}
	for _, c := range []struct {
		name     string
		items    []keychain.Item
		saved    bool
		account  string
		accounts []string
	}{
		{"nothing", nil, false, "", nil},
		{"a password is no passkey", []keychain.Item{item("ada")}, false, "", nil},
		{"another service's", []keychain.Item{pk("gitlab.com", "")}, false, "", nil},
		{"the one passkey", []keychain.Item{pk("github.com", "ada"), item("bob")}, true, "ada", nil},
		{"the one with no account", []keychain.Item{pk("github.com", "")}, true, "", nil},
		{"several", []keychain.Item{pk("github.com", "b"), pk("github.com", "a")}, true, "", []string{"a", "b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, "[service.\"github.com\"]\napproval = \"lease\"\n")
			for _, it := range c.items {
				if _, err := w.kr.Store(context.Background(), it, []byte("v")); err != nil {
					t.Fatal(err)
				}
			}
			w.backend.reads = 0
			q := query(fill.FieldPasskey, "")
			q.In.Field.Kind = fill.FieldNone
			plan, err := w.p.Plan(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if plan.Saved != c.saved || plan.Account != c.account || !slices.Equal(plan.Accounts, c.accounts) {
				t.Fatalf("plan saved %v account %q accounts %v", plan.Saved, plan.Account, plan.Accounts)
			}
			if plan.Source != nil || plan.Remember || plan.Approval != fill.ApprovalLease || w.backend.reads != 0 {
				t.Fatalf("plan %+v, %d values read", plan, w.backend.reads)
			}
			if !c.saved && !strings.Contains(plan.Unsaved, "fillgate passkey add --service github.com") {
				t.Fatalf("unsaved %q", plan.Unsaved)
			}
			if c.saved && len(plan.Stamps) == 0 {
				t.Fatal("no stamps: leases could not end with the passkey")
			}
		})
	}
}
