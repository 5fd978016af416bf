package fill

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeRooms is the clean room port: it opens fakeRooms the test set up.
type fakeRooms struct {
	mu      sync.Mutex
	opened  int
	openErr error
	in      Inspection // what the room's page shows, inspected
	room    *fakeRoom
	asked   Inspection // the driven inspection Open was given
}

func (f *fakeRooms) Open(ctx context.Context, req Request, in Inspection) (Room, Inspection, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opened++
	f.asked = in
	if f.openErr != nil {
		return nil, Inspection{}, f.openErr
	}
	return f.room, f.in, nil
}

// fakeRoom is one clean room.
type fakeRoom struct {
	mu       sync.Mutex
	verdict  Verdict
	got      []byte // a copy of the value, compared, never printed
	inserts  int
	then     string
	handover Handover
	handErr  error
	handed   int
	closed   int
	// holds is what HandOver was given to tell whether a session holds
	// the value.
	holds func(string) bool
	// heldThen: holds said the value is there, in each of its forms,
	// while HandOver ran (the Engine keeps it until then).
	heldThen bool
}

func (r *fakeRoom) Insert(ctx context.Context, in Inspection, value []byte, opt InsertOptions) (Verdict, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inserts++
	r.got = bytes.Clone(value)
	r.then = opt.Then
	return r.verdict, nil
}

func (r *fakeRoom) HandOver(ctx context.Context, holds func(string) bool) (Handover, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handed++
	r.holds = holds
	s := string(r.got)
	r.heldThen = holds("x"+s+"y") && holds(url.QueryEscape(s)) && holds(base64.StdEncoding.EncodeToString(r.got)) &&
		holds(base64.RawURLEncoding.EncodeToString(r.got)) && holds(hex.EncodeToString(r.got)) && !holds("nothing of it")
	return r.handover, r.handErr
}

func (r *fakeRoom) Close() {
	r.mu.Lock()
	r.closed++
	r.mu.Unlock()
}

// statusErr is an error that carries a status, as the clean room's do.
type statusErr struct {
	s Status
	d string
}

func (e statusErr) Error() string  { return e.d }
func (e statusErr) Status() Status { return e.s }

var driven = Drive{Driven: true, Reasons: []string{"the browser was started with --remote-debugging-port"}}

// roomRig is a rig whose browser a program drives, with a clean room and
// a native dialog the person types into.
func roomRig(t *testing.T) (*rig, *fakeNative, *fakeRooms) {
	r, n := nativeRig(t, PromptAuto)
	r.e.Policy = fakePolicy{allow: true} // driven = "clean-room", the default
	r.b.drive = driven
	rooms := &fakeRooms{
		in: Inspection{Tab: 1, Frame: 1, Token: "room", Origins: []string{"https://github.com"}, Field: FieldInfo{Kind: FieldPassword}},
		room: &fakeRoom{
			verdict:  Verdict{Inserted: true, Matched: true, Submitted: true, Navigated: true},
			handover: Handover{TabOrigin: "https://github.com", Cookies: 3},
		},
	}
	r.e.CleanRoom = rooms
	n.types(secret)
	return r, n, rooms
}

// TestCleanRoomLogsIn: in a browser a program drives, the value goes into
// the clean room's page only; the driven browser is handed the session,
// and the result says so.
func TestCleanRoomLogsIn(t *testing.T) {
	r, n, rooms := roomRig(t)
	var phases []string
	res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, func(p Progress) { phases = append(phases, p.Phase) })
	if res.Status != StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Detail)
	}
	room := rooms.room
	if !bytes.Equal(room.got, secret) || room.then != ThenSubmit {
		t.Errorf("the clean room got the value as typed: %v, then %q", bytes.Equal(room.got, secret), room.then)
	}
	if r.b.inserts != 0 {
		t.Errorf("the driven browser was asked to insert %d times; want never", r.b.inserts)
	}
	if room.handed != 1 || room.closed != 1 {
		t.Errorf("handed over %d times, closed %d times; want once each", room.handed, room.closed)
	}
	if !room.heldThen {
		t.Error("the handover could not tell a session holding the value (raw, URL-escaped, base64, hex)")
	}
	if room.holds(string(secret)) {
		t.Error("the value was kept after the handover: it was not zeroed")
	}
	if res.HandedOver == nil || !*res.HandedOver || res.TabOrigin != "https://github.com" {
		t.Errorf("the result says handed over %v, tab origin %q", res.HandedOver, res.TabOrigin)
	}
	for _, w := range []string{"logged in in fillgate's clean room", "never entered the agent's browser", "3 cookies", "now shows https://github.com"} {
		if !strings.Contains(res.Detail, w) {
			t.Errorf("the detail %q does not say %q", res.Detail, w)
		}
	}
	info := n.asked[0]
	if !info.CleanRoom || info.Watched || info.InPage {
		t.Errorf("the dialog was told clean room %v, watched %v, in page %v", info.CleanRoom, info.Watched, info.InPage)
	}
	if !strings.Contains(strings.Join(phases, " "), PhaseCleanRoom) {
		t.Errorf("progress %v does not say the clean room opens", phases)
	}
	r.assertClean(t, res)
	n.zeroed(t)
}

// TestCleanRoomRefuses: what the clean room cannot do ends the request
// before the person is asked, with the reason; a room that opened is
// closed.
func TestCleanRoomRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		setup  func(r *rig, rooms *fakeRooms)
		then   string
		status Status
		detail string
		opened int // rooms opened
	}{
		{"then none", nil, ThenNone, StatusRefused, "cannot be left in the field (then none)", 0},
		{"no clean room here", func(r *rig, _ *fakeRooms) { r.e.CleanRoom = nil }, "", StatusRefused, `set driven = "in-page" for github.com`, 0},
		{"the room refuses", func(_ *rig, rooms *fakeRooms) {
			rooms.openErr = statusErr{StatusRefused, "the login field is in a frame; set driven"}
		}, "", StatusRefused, "the login field is in a frame", 1},
		{"the room fails", func(_ *rig, rooms *fakeRooms) { rooms.openErr = errors.New("the browser did not start") },
			"", StatusFailed, "cannot log in in fillgate's clean room: the browser did not start", 1},
		{"the page went elsewhere", func(_ *rig, rooms *fakeRooms) { rooms.in.Origins = []string{"https://sso.example"} },
			"", StatusRefused, "went to https://sso.example instead of https://github.com", 1},
		{"the policy refuses the room's page", func(r *rig, _ *fakeRooms) {
			r.e.Policy = fakePolicy{allow: false, detail: "the form posts elsewhere"}
		}, "", StatusRefused, "the form posts elsewhere", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, n, rooms := roomRig(t)
			if c.setup != nil {
				c.setup(r, rooms)
			}
			res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com", Then: c.then}), agent, nil)
			if res.Status != c.status || !strings.Contains(res.Detail, c.detail) {
				t.Fatalf("got %s %q, want %s with %q", res.Status, res.Detail, c.status, c.detail)
			}
			if n.times() != 0 || r.b.inserts != 0 || rooms.room.inserts != 0 {
				t.Errorf("asked %d times, %d inserts in the browser, %d in the room; want none", n.times(), r.b.inserts, rooms.room.inserts)
			}
			if rooms.opened != c.opened {
				t.Errorf("%d rooms opened, want %d", rooms.opened, c.opened)
			}
			if rooms.opened > 0 && rooms.openErr == nil && rooms.room.closed != 1 {
				t.Errorf("the room was closed %d times", rooms.room.closed)
			}
			r.assertClean(t, res)
		})
	}
}

// TestCleanRoomAfterTheLogin: what the handover finds decides the status.
func TestCleanRoomAfterTheLogin(t *testing.T) {
	for _, c := range []struct {
		name    string
		verdict *Verdict
		hand    Handover
		handErr error
		status  Status
		detail  string
		handed  int
	}{
		{"the site asks for a code next", nil, Handover{TabOrigin: "https://github.com", Cookies: 1, Next: FieldOTP},
			nil, StatusOK, "asks for a one-time code next", 1},
		{"the session did not hold", nil, Handover{TabOrigin: "https://github.com", Cookies: 2, LoginShown: true},
			nil, StatusFailed, `still with the login form: the session did not hold in that browser`, 1},
		{"a device-bound session", nil, Handover{}, statusErr{StatusFailed, "the site started a device-bound session"},
			StatusFailed, "device-bound session", 1},
		{"the handover broke", nil, Handover{}, errors.New("the tab closed"),
			StatusFailed, "the session could not be handed to the agent's browser: the tab closed", 1},
		{"nothing inserted", &Verdict{Reason: "focus_moved"}, Handover{}, nil, StatusRefused, "nothing was inserted", 0},
		{"the form did not submit", &Verdict{Inserted: true, Matched: true, Cleared: true, Stopped: "invalid"}, Handover{}, nil,
			StatusFailed, "validation stopped the submit", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, n, rooms := roomRig(t)
			if c.verdict != nil {
				rooms.room.verdict = *c.verdict
			}
			rooms.room.handover, rooms.room.handErr = c.hand, c.handErr
			res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil)
			if res.Status != c.status || !strings.Contains(res.Detail, c.detail) {
				t.Fatalf("got %s %q, want %s with %q", res.Status, res.Detail, c.status, c.detail)
			}
			if rooms.room.handed != c.handed || rooms.room.closed != 1 || r.b.inserts != 0 {
				t.Errorf("handed over %d times (want %d), closed %d times, %d inserts in the driven browser",
					rooms.room.handed, c.handed, rooms.room.closed, r.b.inserts)
			}
			r.assertClean(t, res)
			n.zeroed(t)
		})
	}
}

// keptErr is the clean room's error for a login that left the value in
// its session.
type keptErr struct{}

func (keptErr) Error() string  { return "the site keeps the password in what its login left" }
func (keptErr) Status() Status { return StatusFailed }
func (keptErr) Unwrap() error  { return ErrValueKept }

// TestCleanRoomBarsAServiceThatKeptTheValue: a login whose session held
// the value bars its service from the clean room for BarFor, for every
// agent: the next request is refused before anything is asked or any
// room opened, and after BarFor the service is asked again. Other
// failures bar nothing.
func TestCleanRoomBarsAServiceThatKeptTheValue(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	bars := NewMemState()
	fill := func(handErr error, at time.Time, who Agent) (Result, *fakeNative, *fakeRooms) {
		r, n, rooms := roomRig(t)
		r.e.Bars, r.e.Now = bars, func() time.Time { return at }
		rooms.room.handErr = handErr
		return r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), who, nil), n, rooms
	}
	if res, _, _ := fill(errors.New("the tab closed"), now, agent); res.Status != StatusFailed {
		t.Fatalf("got %s %q", res.Status, res.Detail)
	}
	if _, barred := bars.Barred("github.com", now); barred {
		t.Fatal("a handover that broke barred the service")
	}
	if res, _, _ := fill(keptErr{}, now, agent); res.Status != StatusFailed || !strings.Contains(res.Detail, "keeps the password") {
		t.Fatalf("got %s %q", res.Status, res.Detail)
	}
	other := agent
	other.Exe = "/usr/bin/another-agent"
	res, n, rooms := fill(nil, now.Add(BarFor-time.Minute), other)
	if res.Status != StatusRefused || !strings.Contains(res.Detail, "logs in to it in a clean room again only after") {
		t.Fatalf("within the bar, another agent got %s %q", res.Status, res.Detail)
	}
	if n.times() != 0 || rooms.opened != 0 {
		t.Errorf("within the bar: asked %d times, %d rooms opened; want none", n.times(), rooms.opened)
	}
	if res, _, _ := fill(nil, now.Add(BarFor+time.Minute), agent); res.Status != StatusOK {
		t.Errorf("after the bar: %s %q", res.Status, res.Detail)
	}
}

// TestCleanRoomSavedValue: a saved value the person's policy fills with
// no prompt goes into the clean room, never into the driven browser.
func TestCleanRoomSavedValue(t *testing.T) {
	r := newSavedRig(t, Plan{Approval: ApprovalNone, Saved: true})
	r.b.drive = driven
	rooms := &fakeRooms{
		in:   Inspection{Tab: 1, Frame: 1, Token: "room", Origins: []string{"https://github.com"}, Field: FieldInfo{Kind: FieldPassword}},
		room: &fakeRoom{verdict: Verdict{Inserted: true, Matched: true, Submitted: true, Navigated: true}, handover: Handover{TabOrigin: "https://github.com", Cookies: 1}},
	}
	r.e.CleanRoom = rooms
	res := r.fill(t)
	if res.Status != StatusOK || r.lastHow() != HowNone {
		t.Fatalf("%s: %s (how %s)", res.Status, res.Detail, r.lastHow())
	}
	if !bytes.Equal(rooms.room.got, secret) || r.b.inserts != 0 || r.prompts != 0 {
		t.Errorf("the room got the saved value: %v; %d inserts in the driven browser, %d prompts", bytes.Equal(rooms.room.got, secret), r.b.inserts, r.prompts)
	}
}

// TestInPageOnlyWhatThePersonTypes: where the person lets fillgate type
// into a browser a program drives, no saved value goes there (not under
// approval = "none", a lease, or an approval): the person types it, in a
// dialog that says the program can read it.
func TestInPageOnlyWhatThePersonTypes(t *testing.T) {
	for _, approval := range []string{ApprovalNone, ApprovalLease, ApprovalEach} {
		t.Run(approval, func(t *testing.T) {
			r := newSavedRig(t, Plan{Approval: approval, Saved: true})
			r.b.drive = driven
			r.e.Policy = fakePolicy{allow: true, driven: DrivenInPage}
			n := &fakeNative{}
			n.types(nativeSecret)
			r.e.Native = n
			res := r.fill(t)
			if res.Status != StatusOK || r.lastHow() != HowTyped {
				t.Fatalf("%s: %s (how %s)", res.Status, res.Detail, r.lastHow())
			}
			if !bytes.Equal(r.b.got, nativeSecret) || len(r.src.fetches) != 0 || len(r.notes.notices) != 0 {
				t.Errorf("inserted what the person typed: %v; the source was read %d times; %d notices",
					bytes.Equal(r.b.got, nativeSecret), len(r.src.fetches), len(r.notes.notices))
			}
			info := n.asked[0]
			if !info.InPage || !info.Watched || info.From != "" || info.CleanRoom {
				t.Errorf("the dialog: in page %v, watched %v, offers a saved value %q, clean room %v", info.InPage, info.Watched, info.From, info.CleanRoom)
			}
			n.zeroed(t)
		})
	}
}

// TestResultNeverHoldsTheValue: a handover's result and audit entry carry
// no value (the JSON of every field the agent sees).
func TestCleanRoomResultShape(t *testing.T) {
	r, _, _ := roomRig(t)
	res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil)
	out, _ := json.Marshal(res)
	for _, k := range []string{`"handed_over":true`, `"tab_origin":"https://github.com"`} {
		if !bytes.Contains(out, []byte(k)) {
			t.Errorf("the result %s lacks %s", out, k)
		}
	}
	r.assertClean(t, res)
}

// warmingRooms is the clean room port with a warmer that notes whether a
// room was warmed after the request was over (after Discard).
type warmingRooms struct {
	fakeRooms
	mu        sync.Mutex
	discarded bool
	late      int // Warm calls after Discard
	warmed    int
}

func (w *warmingRooms) Warm(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warmed++
	if w.discarded {
		w.late++
	}
}

func (w *warmingRooms) Discard() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.discarded = true
}

// slowDrive is a browser whose Drivable answers driven only after the
// inspection has failed.
type slowDrive struct {
	*fakeBrowser
	answer chan struct{}
}

func (b slowDrive) Drivable(ctx context.Context) (Drive, error) {
	select {
	case <-b.answer:
	case <-ctx.Done():
	}
	return driven, nil
}

// TestNoRoomWarmedAfterTheRequest: a request that ends early (here, the
// page cannot be inspected) before the drive check has answered warms no
// clean room after it is over: the check runs in the request's time, and
// Run waits for it before Discard.
func TestNoRoomWarmedAfterTheRequest(t *testing.T) {
	r, _, _ := roomRig(t)
	rooms := &warmingRooms{}
	r.e.CleanRoom = rooms
	r.b.inspectErr = errors.New("no page")
	b := slowDrive{fakeBrowser: r.b, answer: make(chan struct{})}
	r.e.Browser = b
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The drive check answers only once Run has had time to return.
		time.Sleep(50 * time.Millisecond)
		close(b.answer)
	}()
	res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil)
	if res.Status == StatusOK {
		t.Fatalf("a page that cannot be inspected was filled: %+v", res)
	}
	<-done
	time.Sleep(50 * time.Millisecond) // a late Warm would come now
	rooms.mu.Lock()
	defer rooms.mu.Unlock()
	if rooms.late != 0 || !rooms.discarded {
		t.Errorf("warmed %d times after the request was over (discarded %v)", rooms.late, rooms.discarded)
	}
}
