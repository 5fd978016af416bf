// Package drivable tells, from outside the browser, whether a program
// besides the person can drive the browser that started the host: read its
// pages, type into them, click. The host's fill.Browser merges it with what
// the extension sees from inside (an attached debugger, navigator.webdriver).
//
// It looks at the browser's command line (Chromium's --remote-debugging-port,
// --remote-debugging-pipe, --remote-debugging-address, --enable-automation;
// Firefox's -marionette, -remote-debugging-port, -start-debugger-server),
// at the environment the browser handed the host (MOZ_MARIONETTE), and at
// the files a live endpoint leaves in the profile (DevToolsActivePort,
// which Chrome's chrome://inspect remote-debugging switch writes too;
// Firefox's MarionetteActivePort and WebDriverBiDiServer.json). A file
// counts only while its port takes a connection on loopback.
//
// What cannot be told counts as drivable: a command line that cannot be read
// is a reason of its own.
package drivable

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fillgate/fillgate/internal/browsertable"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/internal/procinfo"
)

// Config says which browser to look at.
type Config struct {
	// PID is the browser's main process (see BrowserPID).
	PID int
	// Family is the browser's family: manifest.Chromium or manifest.Firefox.
	Family manifest.Family
	// Name is fillgate's name for the browser ("chromium", "chrome",
	// "brave", "firefox", ...; see `fillgate install --browser`), "" when
	// unknown. With the executable it picks the default profile directory
	// when the command line names none.
	Name string
	// Env is the environment the browser handed the host; nil means
	// os.Getenv.
	Env func(string) string

	// Args reads a process's command line; nil means the OS's own (on
	// Windows too, which procinfo.Args does not read).
	Args func(pid int) ([]string, error)
	// Exe is the browser's executable; "" means ask the OS.
	Exe string
	// GOOS picks the OS whose default profile directories apply; "" means
	// the running one.
	GOOS string
	// Now is the clock of the endpoint cache; nil means time.Now.
	Now func() time.Time
}

// Probe looks at one browser. Its methods are safe for concurrent use.
type Probe struct {
	cfg  Config
	once sync.Once
	seen view // what the command line and environment say; set once

	mu   sync.Mutex
	live map[int]liveness // recent connection attempts, by port
}

// view is what does not change while the browser runs: the reasons its
// command line and environment give, and the files a live endpoint would
// leave.
type view struct {
	reasons []string
	files   []portFile
}

// New returns a Probe for the browser cfg names. It reads nothing yet.
func New(cfg Config) *Probe {
	if cfg.Env == nil {
		cfg.Env = os.Getenv
	}
	if cfg.Args == nil {
		cfg.Args = osArgs
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Probe{cfg: cfg, live: make(map[int]liveness)}
}

// Check reports whether anything but the person can drive the browser, and
// why. The command line and environment are read at the first call; the
// profile's port files at every call, and a port's connection attempt is
// reused for liveFor, so polling every 250 ms costs a few file reads. It
// never waits longer than a loopback connection attempt (dialTimeout).
func (p *Probe) Check(ctx context.Context) fill.Drive {
	p.once.Do(func() { p.seen = p.look() })
	reasons := slices.Clone(p.seen.reasons)
	for _, f := range p.seen.files {
		if r := p.liveFile(ctx, f); r != "" && !slices.Contains(reasons, r) {
			reasons = append(reasons, r)
		}
	}
	return fill.Drive{Driven: len(reasons) > 0, Reasons: reasons}
}

// look reads the command line and the environment once.
func (p *Probe) look() view {
	var v view
	args, err := p.cfg.Args(p.cfg.PID)
	if err != nil {
		// Never silently "not drivable": the profile's files are still
		// looked at below, but without the command line nothing rules
		// out a debugging port or pipe.
		v.reasons = append(v.reasons, "fillgate cannot read the browser's command line, so it cannot rule out remote debugging")
		args = nil
	}
	if p.cfg.Exe == "" {
		if pr, err := procinfo.Get(p.cfg.PID); err == nil {
			p.cfg.Exe = pr.Exe
		}
	}
	if args != nil && !isBrowser(p.cfg.Family, p.cfg.Exe, args) {
		// The host's parent is not the browser: a sandbox's portal or
		// proxy started it (Snap and Flatpak do), so what its command
		// line and environment say is not the browser's.
		v.reasons = append(v.reasons, "fillgate cannot see the browser's own process (something else, such as a sandbox's portal, started its host), so it cannot rule out remote debugging")
	}
	var dirs []string
	cl := browsertable.ReadCommandLine(p.cfg.Family, args)
	v.reasons = append(v.reasons, switchReasons(p.cfg.Family, cl)...)
	if p.cfg.Family == manifest.Firefox {
		v.reasons = append(v.reasons, firefoxEnv(p.cfg.Env)...)
		dirs = p.firefoxProfiles(cl)
		for _, d := range dirs {
			v.files = append(v.files,
				portFile{dir: d, name: marionettePortFile},
				portFile{dir: d, name: bidiServerFile},
				portFile{dir: d, name: devToolsPortFile})
		}
		return v
	}
	dirs = p.chromiumDataDirs(cl.UserDataDir)
	for _, d := range dirs {
		v.files = append(v.files, portFile{dir: d, name: devToolsPortFile})
	}
	return v
}

// BrowserPID returns the browser's main process for a host whose parent is
// ppid: the parent itself, or, when the browser started the host through a
// shell (Chromium on Windows runs native hosts through cmd.exe), the
// shell's parent.
func BrowserPID(ppid int) int {
	p, err := procinfo.Get(ppid)
	if err == nil && p.PPID > 0 && isShell(p.Name) {
		return p.PPID
	}
	return ppid
}

// isShell reports whether name is a command shell a browser starts native
// hosts through.
func isShell(name string) bool {
	switch strings.ToLower(name) {
	case "cmd.exe", "cmd":
		return true
	}
	return false
}

// isBrowser reports whether the process whose executable is exe (or, when
// that is unknown, whose command line is args) is a browser of family.
func isBrowser(family manifest.Family, exe string, args []string) bool {
	if family == "" {
		family = manifest.Chromium
	}
	if exe == "" && len(args) > 0 {
		exe, _, _ = strings.Cut(args[0], " ") // a rewritten process title
	}
	return browsertable.OfFamily(family, exe)
}
