package bridge

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
)

// driveConfig is what WithDriveProbe and WithFamily set.
type driveConfig struct {
	// probe is what the host sees of the browser from outside it; nil
	// means nothing.
	probe func(context.Context) fill.Drive
	// family is the browser's family; "" counts as the Chromium family.
	family manifest.Family
}

// WithDriveProbe adds what the host sees of the browser from outside it
// (its command line, its profile's port files: internal/drivable's
// Probe.Check) to what the extension sees from inside, in Drivable.
func WithDriveProbe(probe func(context.Context) fill.Drive) Option {
	return func(c *config) { c.drive.probe = probe }
}

// WithFamily names the browser's family. In the Chromium family an
// extension without chrome.debugger cannot see attached debuggers, which
// counts as drivable; Firefox has no such API. The default is the
// Chromium family.
func WithFamily(f manifest.Family) Option {
	return func(c *config) { c.drive.family = f }
}

// driveBudget bounds the extension's answer to drivable.
const driveBudget = time.Second

// driveShare is how long DriveStatus reuses an answer (or joins a question
// still on its way).
const driveShare = time.Second

// driveReply is the extension's answer to drivable.
type driveReply struct {
	Type string `json:"type"`
	// Attached counts the browser's targets a debugger is attached to.
	Attached int `json:"attached"`
	// Webdriver is navigator.webdriver where the extension runs.
	Webdriver bool `json:"webdriver"`
	// DebuggerAPI reports that chrome.debugger is there to ask.
	DebuggerAPI bool `json:"debugger_api"`
	// Others counts the other enabled extensions that hold the debugger
	// permission or access to http://127.0.0.1 (the prompt page's
	// origin); -1, or absent (an older extension), when it cannot tell.
	Others *int `json:"others"`
}

// Drivable implements fill.Browser: it asks the extension what it sees
// (targets with a debugger attached, navigator.webdriver), bounded by
// driveBudget, and adds what the host's probe sees from outside. An
// extension that does not answer is an error, which the Engine takes as
// drivable.
func (b *Bridge) Drivable(ctx context.Context) (fill.Drive, error) {
	outside := make(chan fill.Drive, 1)
	if b.cfg.drive.probe != nil {
		go func() { outside <- b.cfg.drive.probe(ctx) }()
	} else {
		outside <- fill.Drive{}
	}
	cctx, cancel := context.WithTimeout(ctx, driveBudget)
	defer cancel()
	var reply driveReply
	err := b.call(cctx, "drivable", typeOnly{"drivable"}, "drivable", &reply)
	host := <-outside
	if err != nil {
		return fill.Drive{}, err
	}
	if reply.Attached < 0 {
		return fill.Drive{}, fmt.Errorf("extension: malformed drivable reply to drivable")
	}
	reasons := slices.Clone(host.Reasons)
	if reply.Attached > 0 {
		reasons = append(reasons, fmt.Sprintf("a debugger is attached to %d of its pages (DevTools, another extension or a program)", reply.Attached))
	}
	if reply.Webdriver {
		reasons = append(reasons, "navigator.webdriver is on (automation)")
	}
	if !reply.DebuggerAPI && b.cfg.drive.family != manifest.Firefox {
		reasons = append(reasons, "the extension cannot see attached debuggers here (no chrome.debugger)")
	}
	switch {
	case reply.Others == nil || *reply.Others < 0:
		reasons = append(reasons, "the extension cannot list the browser's other extensions, which could drive it")
	case *reply.Others == 1:
		reasons = append(reasons, "another extension could drive it or script the prompt's page at any moment (it holds the debugger permission, or access to 127.0.0.1)")
	case *reply.Others > 1:
		reasons = append(reasons, fmt.Sprintf("%d other extensions could drive it or script the prompt's page at any moment (they hold the debugger permission, or access to 127.0.0.1)", *reply.Others))
	}
	return fill.Drive{Driven: host.Driven || len(reasons) > 0, Reasons: reasons}, nil
}

// DriveStatus is Drivable for `fillgate status` and doctor: it never fails
// (an extension that does not answer, or ctx ending first, is a Drive that
// says fillgate cannot tell, and so counts as drivable), and calls within
// driveShare of each other share one question to the extension, so many
// status requests at once cost the browser one. A question no caller waits
// for any more is cancelled.
func (b *Bridge) DriveStatus(ctx context.Context) fill.Drive {
	now := b.cfg.now()
	b.mu.Lock()
	fl := b.driving
	if fl == nil || now.Before(fl.started) || now.Sub(fl.started) > driveShare || fl.cancelled {
		fctx, cancel := context.WithCancel(context.Background())
		fl = &driveFlight{started: now, done: make(chan struct{}), cancel: cancel}
		b.driving = fl
		go b.driveFlight(fctx, fl)
	}
	fl.waiters++
	b.mu.Unlock()
	select {
	case <-fl.done:
		b.mu.Lock()
		fl.waiters--
		b.mu.Unlock()
		return fl.drive
	case <-ctx.Done():
		b.mu.Lock()
		if fl.waiters--; fl.waiters == 0 {
			select {
			case <-fl.done:
			default:
				fl.cancel() // nobody wants its answer any more
				fl.cancelled = true
			}
		}
		b.mu.Unlock()
		return fill.Drive{Driven: true, Reasons: []string{"fillgate could not tell in time whether a program drives it"}}
	}
}

// driveFlight is DriveStatus's question to the extension and, once done
// is closed, its answer.
type driveFlight struct {
	started   time.Time
	done      chan struct{}
	cancel    context.CancelFunc
	waiters   int  // guarded by Bridge.mu
	cancelled bool // guarded by Bridge.mu: nobody new joins it
	drive     fill.Drive
}

// driveFlight asks, and hands the answer to every caller of DriveStatus
// waiting for it.
func (b *Bridge) driveFlight(ctx context.Context, fl *driveFlight) {
	defer fl.cancel()
	d, err := b.Drivable(ctx)
	if err != nil {
		d = fill.Drive{Driven: true, Reasons: []string{"fillgate could not ask the extension: " + err.Error()}}
	}
	fl.drive = d
	close(fl.done)
}
