package planner

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/zalando/go-keyring"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/policy"
	"github.com/fillgate/fillgate/internal/secrets"
)

// memBackend is an in-memory keyring; reads counts the reads of item
// values (not of the index).
type memBackend struct {
	mu         sync.Mutex
	items      map[string]string
	reads      int
	indexReads int
}

func (m *memBackend) Set(service, user, password string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.items[user] = password
	return nil
}
func (m *memBackend) Get(service, user string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !strings.HasPrefix(user, "fillgate-index-") {
		m.reads++
	} else {
		m.indexReads++
	}
	v, ok := m.items[user]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return v, nil
}
func (m *memBackend) Delete(service, user string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.items, user)
	return nil
}
func (m *memBackend) DeleteAll(string) error { return nil }

// world is a policy and a keyring holding the given items.
type world struct {
	backend *memBackend
	kr      *keychain.Keyring
	locked  error
	p       *Planner
}

func newWorld(t *testing.T, policyText string, items ...keychain.Item) *world {
	t.Helper()
	w := &world{backend: &memBackend{items: map[string]string{}}}
	w.kr = keychain.New(w.backend, func(context.Context) error { return w.locked }, func(string, int) error { return nil })
	for _, it := range items {
		if err := w.kr.Set(context.Background(), it, []byte("saved-"+it.Account)); err != nil {
			t.Fatal(err)
		}
	}
	w.backend.reads = 0
	pol, err := policy.Parse("policy", []byte(policyText))
	if err != nil {
		t.Fatal(err)
	}
	w.p = &Planner{Policy: pol, Keyring: w.kr}
	return w
}

func query(field, account string) fill.PlanQuery {
	return fill.PlanQuery{
		Service: "github.com", Field: field, Agent: fill.Agent{Name: "claude", Exe: "/usr/bin/claude"}, Via: fill.ViaExtension,
		In: fill.Inspection{Origins: []string{"https://github.com"}, Field: fill.FieldInfo{Kind: field}, Account: account},
	}
}

func item(account string) keychain.Item {
	return keychain.Item{Service: "github.com", Field: keychain.FieldPassword, Account: account}
}

func TestKeyringPlans(t *testing.T) {
	for _, c := range []struct {
		name     string
		items    []keychain.Item
		page     string
		saved    bool
		account  string
		accounts []string
	}{
		{"nothing", nil, "", false, "", nil},
		{"the page's account", []keychain.Item{item("alice"), item("bob")}, "alice", true, "alice", nil},
		{"another account than the page's", []keychain.Item{item("bob")}, "alice", false, "", nil},
		{"one with no account, the page's not there", []keychain.Item{item(""), item("bob")}, "alice", true, "", nil},
		{"one with no account", []keychain.Item{item(""), item("bob")}, "", true, "", nil},
		{"the only account", []keychain.Item{item("bob")}, "", true, "bob", nil},
		{"several, none on the page", []keychain.Item{item("bob"), item("alice")}, "", true, "", []string{"alice", "bob"}},
		{"another service's", []keychain.Item{{Service: "gitlab.com", Field: keychain.FieldPassword}}, "", false, "", nil},
		{"a seed is no password", []keychain.Item{{Service: "github.com", Field: keychain.FieldOTP}}, "", false, "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, "", c.items...)
			plan, err := w.p.Plan(context.Background(), query(fill.FieldPassword, c.page))
			if err != nil {
				t.Fatal(err)
			}
			if plan.Saved != c.saved || plan.Account != c.account || !slices.Equal(plan.Accounts, c.accounts) {
				t.Errorf("plan saved %v account %q accounts %v", plan.Saved, plan.Account, plan.Accounts)
			}
			if plan.Source == nil || plan.Store != "the OS keyring" || !plan.Remember || plan.Approval != fill.ApprovalEach {
				t.Errorf("plan %+v", plan)
			}
			if !c.saved && !strings.Contains(plan.Unsaved, "fillgate remember --service github.com") {
				t.Errorf("unsaved %q", plan.Unsaved)
			}
			if strings.Contains(plan.Unsaved, "alice") {
				t.Errorf("the advice names the page's account: %q", plan.Unsaved)
			}
			if w.backend.reads != 0 {
				t.Errorf("planning read %d values from the keyring", w.backend.reads)
			}
			if want := wantStamps(t, w, plan); !maps.Equal(plan.Stamps, want) || !c.saved && plan.Stamps != nil {
				t.Errorf("stamps %v, want %v", plan.Stamps, want)
			}
		})
	}
}

// wantStamps is what plan.Stamps should be: the keyring's stamp of each
// account the plan offers, each one set.
func wantStamps(t *testing.T, w *world, plan fill.Plan) map[string]string {
	t.Helper()
	if !plan.Saved {
		return nil
	}
	list, err := w.kr.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	offers := plan.Accounts
	if len(offers) == 0 {
		offers = []string{plan.Account}
	}
	want := map[string]string{}
	for _, l := range list {
		if l.Service == "github.com" && l.Field == keychain.FieldPassword && slices.Contains(offers, l.Account) {
			if l.Stamp == "" {
				t.Errorf("the keyring has no stamp for %s", l)
			}
			want[l.Account] = l.Stamp
		}
	}
	return want
}

// TestStampsFollowTheKeyring: a value stored again gets a new stamp in the
// next plan; a forgotten one none; a password store keeps none.
func TestStampsFollowTheKeyring(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, "", item("alice"), item("bob"))
	first, err := w.p.Plan(ctx, query(fill.FieldPassword, "alice"))
	if err != nil || first.Stamp("alice") == "" || len(first.Stamps) != 1 {
		t.Fatalf("%v; stamps %v, want alice's only", err, first.Stamps)
	}
	stamp, err := w.p.Remember(ctx, "github.com", fill.FieldPassword, "alice", []byte("new-value"))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := w.p.Plan(ctx, query(fill.FieldPassword, "alice"))
	if again.Stamp("alice") != stamp || stamp == first.Stamp("alice") {
		t.Errorf("after a new value: stamp %q, Remember returned %q, before %q", again.Stamp("alice"), stamp, first.Stamp("alice"))
	}
	if _, err := w.kr.Forget(ctx, "github.com", "alice"); err != nil {
		t.Fatal(err)
	}
	gone, _ := w.p.Plan(ctx, query(fill.FieldPassword, "alice"))
	if gone.Saved || gone.Stamp("alice") != "" {
		t.Errorf("after forget: saved %v, stamp %q", gone.Saved, gone.Stamp("alice"))
	}
	w = newWorld(t, "[service.\"github.com\".password]\nsource = \"pass\"\nentry = \"work/github\"\n", item("alice"))
	if plan, _ := w.p.Plan(ctx, query(fill.FieldPassword, "alice")); !plan.Saved || plan.Stamps != nil {
		t.Errorf("a password store's plan has stamps %v", plan.Stamps)
	}
}

func TestKeyringLockedOrForbidden(t *testing.T) {
	w := newWorld(t, "", item(""))
	w.locked = &keychain.Unavailable{Reason: "is locked", Fix: "unlock it"}
	plan, err := w.p.Plan(context.Background(), query(fill.FieldPassword, ""))
	if err != nil || plan.Saved || plan.Remember || plan.Unsaved != "the OS keyring is locked; unlock it" {
		t.Errorf("a locked keyring: %v %+v", err, plan)
	}

	w = newWorld(t, "[service.\"github.com\"]\nremember = false\n")
	if plan, _ := w.p.Plan(context.Background(), query(fill.FieldPassword, "")); plan.Remember {
		t.Error("remember = false, and the prompt may offer it")
	}
	w = newWorld(t, "", keychain.Item{Service: "github.com", Field: keychain.FieldOTP})
	plan, _ = w.p.Plan(context.Background(), query(fill.FieldOTP, ""))
	if plan.Remember || !plan.Saved {
		t.Errorf("a one-time code: %+v", plan)
	}
}

func TestApprovalFromThePolicy(t *testing.T) {
	w := newWorld(t, "[service.\"github.com\"]\napproval = \"lease\"\nlease = \"20m\"\n", item(""))
	plan, _ := w.p.Plan(context.Background(), query(fill.FieldPassword, ""))
	if plan.Approval != fill.ApprovalLease || plan.Lease.Minutes() != 20 {
		t.Errorf("plan %+v", plan)
	}
	q := query(fill.FieldPassword, "")
	q.In.Origins = []string{"https://evil.test"}
	if _, err := w.p.Plan(context.Background(), q); err == nil {
		t.Error("planned a fill the policy refuses")
	}
}

func TestStorePlans(t *testing.T) {
	db := "/home/a/db.kdbx"
	if runtime.GOOS == "windows" {
		db = `C:\home\a\db.kdbx` // a path that starts with / is not absolute there
	}
	w := newWorld(t, `[service."github.com".password]
source = "keepassxc"
database = `+strconv.Quote(db)+`
entry = "work/github"
`)
	plan, err := w.p.Plan(context.Background(), query(fill.FieldPassword, "alice"))
	if err != nil || !plan.Saved || plan.Store != "KeePassXC" || plan.Remember ||
		plan.Ask != "the password of the KeePassXC database" || plan.Source.Describe() != "from KeePassXC: work/github in "+db {
		t.Fatalf("%v %+v", err, plan)
	}
	w = newWorld(t, "[service.\"github.com\".password]\nsource = \"pass\"\nentry = \"work/github\"\n")
	if plan, _ := w.p.Plan(context.Background(), query(fill.FieldPassword, "")); plan.Store != "pass" || plan.Ask != "" || !plan.Saved {
		t.Errorf("pass: %+v", plan)
	}
}

// failing is a store that fails with what a store's error may hold.
type failing struct{ err error }

func (f failing) Describe() string { return "from pass: work/alice-github" }
func (f failing) Fetch(context.Context, secrets.Request) ([]byte, error) {
	return []byte("partial"), f.err
}

func TestFailuresNameNoEntryOrAccount(t *testing.T) {
	src := &policy.Source{Store: policy.StorePass, Entry: "work/alice-github", StoreDir: "/home/a/.store"}
	s := &source{src: failing{&secrets.Error{Source: "pass", Kind: secrets.KindLocked,
		Detail: "there is no entry work/alice-github in /home/a/.store for alice",
		Fix:    "run `pass show work/alice-github` once; fillgate remember --account alice"}}, hide: hidden(src, "")}
	_, err := s.Fetch(context.Background(), fill.FetchRequest{Service: "github.com", Field: fill.FieldPassword, Account: "alice"})
	var se *fill.SourceError
	if !errors.As(err, &se) {
		t.Fatalf("%T %v", err, err)
	}
	if se.Detail != "there is no entry ENTRY in STORE_DIR for ACCOUNT" || se.Fix != "run `pass show ENTRY` once; fillgate remember --account ACCOUNT" {
		t.Errorf("the agent would read %q; %q", se.Detail, se.Fix)
	}
	if got := redact("alice, malice, alice2 and alice.", hidden(nil, "alice")); got != "ACCOUNT, malice, alice2 and ACCOUNT." {
		t.Errorf("redact %q", got)
	}
}

func TestRemember(t *testing.T) {
	w := newWorld(t, "")
	value := []byte("typed-value")
	stamp, err := w.p.Remember(context.Background(), "github.com", fill.FieldPassword, "alice", value)
	if err != nil {
		t.Fatal(err)
	}
	got, err := w.kr.Get(context.Background(), item("alice"))
	if err != nil || !bytes.Equal(got, value) {
		t.Errorf("the keyring holds another value: %v", err)
	}
	if items, _ := w.kr.List(context.Background()); len(items) != 1 || items[0].Item != item("alice") || items[0].Stamp != stamp || stamp == "" {
		t.Errorf("listed %+v", items)
	}
	if _, err := w.p.Remember(context.Background(), "github.com", fill.FieldOTP, "", value); err == nil {
		t.Error("a one-time code was remembered")
	}
	w.locked = &keychain.Unavailable{Reason: "is locked", Fix: "unlock it"}
	if stamp, err := w.p.Remember(context.Background(), "github.com", fill.FieldPassword, "alice", value); err == nil || stamp != "" || err.Error() != "the OS keyring is locked; unlock it" {
		t.Errorf("remember into a locked keyring: %v", err)
	}
}

// TestWarm: Warm reads the index while the page is inspected; Plan uses
// it and reads it no second time.
func TestWarm(t *testing.T) {
	w := newWorld(t, "", item("bob"))
	w.backend.indexReads = 0
	w.p.Warm(context.Background(), "github.com", fill.FieldPassword)
	plan, err := w.p.Plan(context.Background(), query(fill.FieldPassword, ""))
	if err != nil || !plan.Saved || plan.Account != "bob" {
		t.Fatalf("%v %+v", err, plan)
	}
	w.backend.mu.Lock()
	defer w.backend.mu.Unlock()
	if w.backend.indexReads != 2 || w.backend.reads != 0 { // shard 0, and shard 1 to find the end
		t.Errorf("%d index reads and %d value reads, want the index once and no value", w.backend.indexReads, w.backend.reads)
	}
}
