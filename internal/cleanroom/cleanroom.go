// Package cleanroom logs in, for a browser a program can drive, in a
// browser only fillgate holds: a headless Chromium-family browser started
// for one request, reached over --remote-debugging-pipe (no port, so no
// other program can attach), with a new throw-away profile in a 0700
// directory, no extensions, and the driven browser's user agent and
// languages. The room opens the driven tab's page again, with the driven
// browser context's cookies of every site it visits (copied in as its
// first request to that site waits), runs fillgate's in-page checks and
// insert there, follows the login to its end and hands the session it left
// (cookies of every site the login passed through, the final origin's web
// storage) to the driven tab, which it sends to where the login ended. The
// value never enters the driven browser.
//
// A room dies with its request, on every outcome: Close kills its browser
// and removes its profile; a room whose owner was killed is swept by the
// next one (see profile.go).
package cleanroom

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/websession"
)

// Driven is what a room needs of the driven browser: the bridge to the
// extension, or the CDP path's connection.
type Driven interface {
	// Tab describes the driven tab in names: its URL, the browser's user
	// agent and languages.
	Tab(ctx context.Context, in fill.Inspection) (websession.Tab, error)
	// SiteCookies returns the cookies of the tab's browser context that
	// are sent within site (websession.Site).
	SiteCookies(ctx context.Context, in fill.Inspection, site string) ([]websession.Cookie, error)
	// HandOver gives the tab the session, navigates it to s.URL and says
	// what it shows then.
	HandOver(ctx context.Context, in fill.Inspection, s websession.Session) (websession.Shown, error)
}

// Config says how rooms are made.
type Config struct {
	// Driven is the driven browser.
	Driven Driven
	// Dir holds the rooms' profiles (0700); see profile.go.
	Dir string
	// Browser is the Chromium-family browser a room runs (an absolute
	// path); "" means DrivenExe when it is one, else the first found in
	// the usual places (Find).
	Browser string
	// DrivenExe is the driven browser's executable, "" when unknown.
	DrivenExe string
	// Firefox says the driven browser is Firefox, whose logins a room
	// refuses: no browser is started ahead for it (Warm, Spare).
	Firefox bool
	// Spare, when set, keeps a room's browser started ahead of requests:
	// a request takes it, and the next starts when the request ended.
	Spare *Spare
	// Log hears what the rooms do; never a value, a cookie or a URL's
	// path.
	Log *slog.Logger
}

// Rooms opens the clean room of one request; it implements
// fill.CleanRoom and fill.RoomWarmer.
type Rooms struct {
	cfg Config

	mu     sync.Mutex
	warm   *warming // a browser started ahead of Open, or nil
	wanted bool     // a room was wanted: the next request likely wants one too
}

// warming is a room's browser started by Warm.
type warming struct {
	done   chan struct{} // closed once it started (or failed to)
	cancel func()        // stops a start nobody needs any more
	exe    string        // the browser it runs
	r      *room
	err    error
}

var (
	_ fill.CleanRoom  = (*Rooms)(nil)
	_ fill.RoomWarmer = (*Rooms)(nil)
)

// Warm implements fill.RoomWarmer: it starts a room's browser now, in the
// background, for an Open that may follow. A browser Open does not take
// dies with ctx, or at Discard.
func (rs *Rooms) Warm(ctx context.Context) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.cfg.Firefox || ctx.Err() != nil {
		return // Open refuses; or the request is over
	}
	rs.wanted = true
	if rs.warm != nil {
		return
	}
	exe, err := rs.browser()
	if err != nil {
		return // Open says why
	}
	if w := rs.cfg.Spare.take(); w != nil {
		if w.exe == exe {
			rs.warm = w
			return
		}
		go w.end() // the policy names another browser now
	}
	sctx, cancel := context.WithCancel(ctx)
	w := &warming{done: make(chan struct{}), cancel: cancel, exe: exe}
	rs.warm = w
	go func() {
		defer close(w.done)
		w.r, w.err = start(sctx, rs.cfg, exe)
		if w.err == nil {
			context.AfterFunc(ctx, w.r.Close)
		}
	}()
}

// Discard implements fill.RoomWarmer: a browser Warm started and Open did
// not take dies now; the request is over, so the next spare starts.
func (rs *Rooms) Discard() {
	rs.mu.Lock()
	w, wanted := rs.warm, rs.wanted
	rs.warm = nil
	rs.mu.Unlock()
	if wanted {
		defer rs.cfg.Spare.Keep()
	}
	if w != nil {
		w.end()
	}
}

// end stops the start, or closes the room it started.
func (w *warming) end() {
	w.cancel()
	<-w.done
	if w.r != nil {
		w.r.Close()
	}
}

// take returns the browser Warm started, once it is up, or starts one.
func (rs *Rooms) take(ctx context.Context, exe string) (*room, error) {
	rs.mu.Lock()
	w := rs.warm
	rs.warm = nil
	rs.mu.Unlock()
	if w == nil {
		return start(ctx, rs.cfg, exe)
	}
	select {
	case <-w.done:
		if w.err != nil && ctx.Err() == nil {
			return start(ctx, rs.cfg, exe) // the early start failed: once more, now
		}
		return w.r, w.err
	case <-ctx.Done():
		go w.end() // it may still come up: end it then
		return nil, ctx.Err()
	}
}

// New returns the rooms cfg describes.
func New(cfg Config) *Rooms {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Rooms{cfg: cfg}
}

// refusal is an error that refuses the login in a clean room, with the
// reason and what to do; its status is refused.
type refusal struct{ detail string }

func (r refusal) Error() string               { return r.detail }
func (refusal) Status() fill.Status           { return fill.StatusRefused }
func refuse(format string, args ...any) error { return refusal{fmt.Sprintf(format, args...)} }

// failure is an error after the login whose status is failed; is, when
// set, is what errors.Is finds in it.
type failure struct {
	detail string
	is     error
}

func (f failure) Error() string     { return f.detail }
func (f failure) Unwrap() error     { return f.is }
func (failure) Status() fill.Status { return fill.StatusFailed }

// inPageFix is the fix a refusal names: the person's consent to fill the
// driven browser's page.
func inPageFix(service string) string {
	return fmt.Sprintf(`to have fillgate type into the agent's browser instead, set driven = "in-page" for %s in your policy (fillgate policy show); you then type the value and confirm in the dialog that the program driving that browser can read it`, service)
}

// Open implements fill.CleanRoom.
func (rs *Rooms) Open(ctx context.Context, req fill.Request, in fill.Inspection) (fill.Room, fill.Inspection, error) {
	origin := in.Origin()
	if len(in.Origins) > 1 {
		return nil, fill.Inspection{}, refuse("the login field is in a frame (%s inside %s), and the clean room logs in only in a page's top frame; %s",
			origin, in.Origins[len(in.Origins)-1], inPageFix(req.Service))
	}
	if site, ok := boundSite(origin); ok {
		return nil, fill.Inspection{}, refuse("%s binds its sessions to the browser they were made in (Device Bound Session Credentials) and refuses sign-in in an automated browser, so a session made in fillgate's clean room would not hold in the agent's browser; %s",
			site, inPageFix(req.Service))
	}
	tab, err := rs.cfg.Driven.Tab(ctx, in)
	if err != nil {
		return nil, fill.Inspection{}, fmt.Errorf("cannot read the agent's tab: %w", err)
	}
	if tab.Family == "firefox" {
		return nil, fill.Inspection{}, refuse("the agent's browser is Firefox, and fillgate's clean room is a Chromium-family browser whose session Firefox would not take as its own; %s", inPageFix(req.Service))
	}
	if u, err := url.Parse(tab.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || !sameOrigin(tab.URL, origin) {
		return nil, fill.Inspection{}, refuse("the agent's tab shows another page than the one inspected (it moved on); ask again")
	}
	opened, err := roomURL(tab.URL)
	if err == nil {
		err = roomAccount(in.Account)
	}
	if err != nil {
		return nil, fill.Inspection{}, refuse("%v, and the program driving the browser chose it: a site that echoes it would run that program's script beside the value in fillgate's clean room, so the room opens no such page; open the login page by its plain address, or %s",
			err, inPageFix(req.Service))
	}
	exe, err := rs.browser()
	if err != nil {
		return nil, fill.Inspection{}, refuse("fillgate's clean room needs a Chromium-family browser: %v; install Chromium (or set clean_room_browser in your policy), or %s", err, inPageFix(req.Service))
	}
	rs.mu.Lock()
	rs.wanted = true
	rs.mu.Unlock()
	t0 := time.Now()
	r, err := rs.take(ctx, exe)
	if err != nil {
		return nil, fill.Inspection{}, err
	}
	r.lap("waited", &t0) // for its browser: none when a spare was up
	if err := r.bind(ctx, rs.cfg.Driven, in, tab); err != nil {
		r.Close()
		return nil, fill.Inspection{}, fmt.Errorf("the clean room cannot take the agent's browser's user agent: %w", err)
	}
	rin, err := r.open(ctx, req, opened)
	if err != nil {
		r.Close()
		return nil, fill.Inspection{}, err
	}
	return r, rin, nil
}

// browser is the executable a room runs.
func (rs *Rooms) browser() (string, error) {
	if rs.cfg.Browser != "" {
		if !executable(rs.cfg.Browser) {
			return "", fmt.Errorf("the policy's clean_room_browser, %s, is not an executable file", rs.cfg.Browser)
		}
		return rs.cfg.Browser, nil
	}
	if rs.cfg.DrivenExe != "" && isChromium(rs.cfg.DrivenExe) && executable(rs.cfg.DrivenExe) {
		return rs.cfg.DrivenExe, nil
	}
	return Find()
}

// sameOrigin reports whether raw is a URL on origin.
func sameOrigin(raw, origin string) bool {
	return originOf(raw) == strings.ToLower(origin)
}

// originOf is the origin of an http(s) URL, "" for anything else.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// errClosed is returned by a room used after Close.
var errClosed = errors.New("the clean room is closed")
