// Package opener opens the prompt's URL in the desktop's browser through
// the OS opener (xdg-open, open, rundll32 url.dll,FileProtocolHandler)
// without putting the URL in any process's argv: it hands the opener a
// private page that leads to the URL, and removes the page when the
// prompt ends.
package opener

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fillgate/fillgate/internal/dirs"
)

// DefaultLinger is how long System's redirect page stays at most:
// long enough for the opener to start a browser that was not running.
const DefaultLinger = 30 * time.Second

// redirectName is the redirect page's file name in its private directory.
const redirectName = "prompt.html"

// System opens the prompt in the desktop's browser through the OS
// opener (xdg-open, open, rundll32 url.dll,FileProtocolHandler) without
// putting the prompt URL in any process's argv, where every local user
// could read it (/proc/<pid>/cmdline) for as long as the opener, or a
// browser it started, runs.
//
// It writes a small HTML page whose meta refresh leads to the prompt into
// a fresh directory only the user can enter (0700; the file is 0600), and
// hands the opener that file's path. The page goes when the prompt ends
// (the ctx given to OpenURL), when the opener fails, and at the latest
// Linger after the opener started.
//
// The opener itself is found only in fixed system directories (never
// through PATH) and runs with a minimal environment: what the desktop
// needs to reach the user's session (DISPLAY, WAYLAND_DISPLAY,
// XAUTHORITY, DBUS_SESSION_BUS_ADDRESS, HOME, XDG_*, ...), a fixed PATH,
// and nothing else of the caller's (BROWSER included).
type System struct {
	// Launch opens the file at path (absolute) in the desktop's browser.
	// Nil means the OS opener. Tests play the opener here: they read the
	// prompt URL from the file and answer as the browser would.
	Launch func(ctx context.Context, path string) error
	// Dir is where the private directory is made. Empty means the
	// "open" directory in fillgate's runtime directory, or the system
	// temp directory when that cannot be made.
	Dir string
	// Linger bounds how long the page stays; zero means DefaultLinger.
	Linger time.Duration
}

// OpenURL opens promptURL (an http URL) through a redirect page, and fits
// cdp.Options.OpenURL. ctx is the prompt's life: the page is removed when it
// ends. Errors never quote the URL.
func (o System) OpenURL(ctx context.Context, promptURL string) error {
	_, err := o.open(ctx, promptURL)
	return err
}

// open is OpenURL, and returns the page it handed the opener, whose
// removal tests wait for.
func (o System) open(ctx context.Context, promptURL string) (*redirectPage, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open the prompt: %w", err)
	}
	u, err := url.Parse(promptURL)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil {
		return nil, errors.New("open the prompt: not an http URL")
	}
	linger := o.Linger
	if linger <= 0 {
		linger = DefaultLinger
	}
	dir, err := o.makeDir(linger)
	if err != nil {
		return nil, fmt.Errorf("open the prompt: %w", err)
	}
	page := &redirectPage{dir: dir, removed: make(chan struct{})}
	path := filepath.Join(dir, redirectName)
	if err := writeRedirect(path, u.String()); err != nil {
		page.remove()
		return nil, fmt.Errorf("open the prompt: %w", err)
	}
	launch := o.Launch
	if launch == nil {
		launch = defaultLauncher().launch
	}
	if err := launch(ctx, path); err != nil {
		page.remove()
		return nil, fmt.Errorf("open the prompt with the system opener: %w", err)
	}
	page.watch(ctx, linger)
	return page, nil
}

// makeDir makes the fresh private directory for one redirect page, and
// clears out pages older than twice linger that a process which ended
// too soon left behind.
func (o System) makeDir(linger time.Duration) (string, error) {
	parent, err := o.parentDir()
	if err != nil {
		return "", fmt.Errorf("the directory for the redirect page: %w", err)
	}
	prefix := "fillgate-prompt-" // in the shared temp dir
	if parent != "" {
		prefix = "prompt-"
		sweep(parent, prefix, 2*linger)
	}
	dir, err := os.MkdirTemp(parent, prefix) // mode 0700
	if err != nil {
		return "", fmt.Errorf("a private directory for the redirect page: %w", err)
	}
	return dir, nil
}

// parentDir is the private directory the page directories go in, or ""
// for the system temp directory.
func (o System) parentDir() (string, error) {
	if o.Dir != "" {
		return o.Dir, dirs.Ensure(o.Dir)
	}
	rt, err := dirs.Runtime(os.Getenv)
	if err != nil {
		return "", nil
	}
	parent := filepath.Join(rt, "open")
	if dirs.Ensure(parent) != nil {
		return "", nil // not usable: a fresh temp dir is private too
	}
	return parent, nil
}

// sweep removes directories named prefix* in parent that are older than
// age: redirect pages of processes that exited before they could.
func sweep(parent, prefix string, age time.Duration) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > age {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

// writeRedirect writes the redirect page for target (0600, a new file).
// It needs no script: a meta refresh, and a plain link in case the
// browser does not follow it. No referrer goes along.
func writeRedirect(path, target string) error {
	t := html.EscapeString(target)
	page := `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0; url=` + t + `">
<title>fillgate — opening the prompt</title>
</head>
<body>
<p>Opening the fillgate prompt. If it does not open, <a href="` + t + `" rel="noreferrer">open it here</a>.</p>
</body>
</html>
`
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write the redirect page: %w", err)
	}
	_, err = f.WriteString(page)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write the redirect page: %w", err)
	}
	return nil
}

// redirectPage is one written redirect page and its directory.
type redirectPage struct {
	dir  string
	once sync.Once
	// removed is closed when the removal is over: os.RemoveAll has
	// returned, and holds nothing in dir's parent any more. The page's
	// directory is unlisted a little before that, while RemoveAll still
	// has the parent open; under Wine (and on Windows without POSIX
	// deletes) a directory deleted while open stays listed until the last
	// handle closes, so whoever removes the parent must wait for this.
	removed chan struct{}

	mu   sync.Mutex
	stop []func() bool // the timer and the ctx watch, stopped on removal
}

// watch removes the page when ctx ends or after linger.
func (p *redirectPage) watch(ctx context.Context, linger time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stop = append(p.stop, time.AfterFunc(linger, p.remove).Stop, context.AfterFunc(ctx, p.remove))
}

// remove deletes the page and its directory, once.
func (p *redirectPage) remove() {
	p.once.Do(func() {
		_ = os.RemoveAll(p.dir)
		p.mu.Lock()
		stop := p.stop
		p.mu.Unlock()
		for _, s := range stop {
			s()
		}
		close(p.removed)
	})
}

// dirOverride, when set at link time (go build -ldflags
// "-X github.com/fillgate/fillgate/internal/opener.dirOverride=DIR"),
// replaces the system directories the opener is looked up in. Only test
// builds set it, so that a test can play the opener of a built binary;
// nothing at run time can change it.
var dirOverride string

// launcher runs the OS opener on a file.
type launcher struct {
	dirs []string                   // where the opener may be, in order
	name string                     // its file name
	args func(path string) []string // its arguments for the file
	env  []string                   // its whole environment
	// ready says why the opener could show no browser in env, or nil
	// when it may (nil: always may).
	ready func(env []string) error
}

// defaultLauncher is the OS opener, with this process's environment
// trimmed to what the desktop needs.
func defaultLauncher() launcher {
	l := osLauncher(os.Environ())
	if dirOverride != "" {
		l.dirs = filepath.SplitList(dirOverride)
	}
	return l
}

// launch starts the opener on path, detached, and waits up to
// openerGrace for it to fail: a session that cannot show a browser, and an
// opener that exits unsuccessfully, are errors at once.
func (l launcher) launch(ctx context.Context, path string) error {
	if l.ready != nil {
		if err := l.ready(l.env); err != nil {
			return err
		}
	}
	exe, err := findOpener(l.dirs, l.name)
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, l.args(path)...)
	cmd.Env = l.env
	return startDetached(ctx, cmd, openerGrace)
}

// findOpener is the first regular file called name in dirs (absolute
// ones only) that the OS may run; one that others could change is
// refused.
func findOpener(dirs []string, name string) (string, error) {
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		ok, err := runnable(fi)
		if err != nil {
			return "", fmt.Errorf("%s: %w", p, err)
		}
		if ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("no %s in %s", name, strings.Join(dirs, ", "))
}

// minimalEnv keeps from environ the variables keep accepts (by name),
// and sets PATH to path.
func minimalEnv(environ []string, keep func(name string) bool, path string) []string {
	out := []string{"PATH=" + path}
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && name != "" && !strings.EqualFold(name, "PATH") && keep(name) {
			out = append(out, kv)
		}
	}
	return out
}

// openerGrace is how long launch waits for the opener to exit. An opener
// that hands the page to a running browser exits within it; one that is
// still running then is taken to have started a browser.
const openerGrace = time.Second

// startDetached starts the opener with no stdin, stdout or stderr (nothing
// it prints reaches fillgate's output) and waits up to grace (or until ctx
// ends) for it to exit: an exit with a failure is an error, naming the
// opener and its status. After that it is reaped in the background: the
// opener may outlive the request, as it often starts the browser itself.
func startDetached(ctx context.Context, cmd *exec.Cmd, grace time.Duration) error {
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", filepath.Base(cmd.Path), err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("%s failed (%v)", filepath.Base(cmd.Path), err)
		}
	case <-timer.C:
	case <-ctx.Done():
	}
	return nil
}
