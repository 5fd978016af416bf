// Package demo is `fillgate demo`: a newcomer's tour of one fill. It starts
// Chromium with a throw-away profile and the extension, installs the host
// manifest into that profile with the real installer, serves a local login
// page, and asks for the password the way an agent would. With a display the
// human answers whichever prompt the policy picks: the demo drives its
// browser over a debugging port, so by default fillgate asks in a native
// dialog on the desktop (the loopback page when none can be shown). Without
// a display (or with Auto) the demo answers the page prompt itself with a
// made-up sample password.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/browserproc"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/install"
	"github.com/fillgate/fillgate/internal/nativeprompt"
	"github.com/fillgate/fillgate/internal/request"
)

// samplePassword is what the demo types when it plays the human. It is a
// made-up demo value, not a secret, and it is still never printed.
const samplePassword = "correct-horse-battery-staple"

// Options configures the tour.
type Options struct {
	Out io.Writer
	// Browser is a Chromium-family binary; "" finds one.
	Browser string
	// Binary is the fillgate binary the host manifest launches; "" means
	// this executable.
	Binary string
	// Headless runs the browser without a window. The default is headless
	// when there is no display.
	Headless bool
	// Auto makes the demo answer the prompt itself (always so when
	// headless).
	Auto bool
	// Keep leaves the browser open and the temp dir in place at the end.
	Keep bool
	// Timeout is how long the human has to answer.
	Timeout time.Duration
}

// Run takes the tour. It returns the fill's result.
func Run(ctx context.Context, o Options) (fill.Result, error) {
	say := func(format string, a ...any) { fmt.Fprintf(o.Out, format+"\n", a...) }
	if o.Headless {
		o.Auto = true
	}
	self := o.Binary
	if self == "" {
		exe, err := os.Executable()
		if err != nil {
			return fill.Result{}, fmt.Errorf("find the fillgate binary: %w", err)
		}
		self = exe
	}

	root, err := os.MkdirTemp("", "fillgate-demo-")
	if err != nil {
		return fill.Result{}, err
	}
	if o.Keep {
		say("Keeping everything in %s", root)
	} else {
		defer os.RemoveAll(root)
	}
	env, lookup := demoEnv(root)
	profile := filepath.Join(root, "profile")

	say("1. Installing the host manifest into a throw-away Chromium profile (fillgate install --browser chromium --user-data-dir %s)", profile)
	rep, err := install.Install(ctx, install.Options{
		Browsers: []string{"chromium"}, UserDataDir: profile, Binary: self, Env: lookup,
	})
	if err != nil {
		return fill.Result{}, fmt.Errorf("install: %w", err)
	}
	for _, m := range rep.Manifests {
		say("   wrote %s", m.Path)
	}
	say("   unpacked the extension to %s", rep.ExtensionDir)

	mode := "with a window"
	if o.Headless {
		mode = "headless"
	}
	say("2. Starting Chromium (%s) with the extension loaded", mode)
	c, err := browserproc.StartChromium(ctx, browserproc.ChromiumOptions{
		Binary: o.Browser, UserDataDir: profile, Extensions: []string{rep.ExtensionDir}, Env: env,
		Args: []string{"--window-size=1100,800"}, Headless: o.Headless,
	})
	if err != nil {
		return fill.Result{}, err
	}
	if !o.Keep {
		defer c.Stop()
	}
	if err := waitForHost(ctx, lookup); err != nil {
		return fill.Result{}, fmt.Errorf("%w; the browser said:\n%s", err, c.Output())
	}
	say("   the extension connected to the fillgate host")

	url, stopPage, err := servePage(ctx)
	if err != nil {
		return fill.Result{}, err
	}
	defer stopPage()
	alloc, cancelAlloc := remote.NewAllocator(ctx, c.WebSocketURL, remote.NoModifyURL)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	tab, cancelTab := chromedp.NewContext(browserCtx)
	defer cancelTab()
	say("3. Opening a local login page, %s, with its password field focused", url)
	if err := chromedp.Do(tab, chromedp.Navigate(url)); err != nil {
		return fill.Result{}, fmt.Errorf("open the login page: %w", err)
	}
	if _, err := chromedp.Call(tab, page.BringToFront, cdp.Empty{}); err != nil {
		return fill.Result{}, fmt.Errorf("bring the login page to the front: %w", err)
	}
	if err := chromedp.Do(tab, chromedp.Focus("#password")); err != nil {
		return fill.Result{}, fmt.Errorf("focus the password field: %w", err)
	}

	say("4. The agent asks:  fillgate fill --service 127.0.0.1 --json")
	switch native := nativeprompt.New(nativeprompt.Config{Env: lookup}).Available(); {
	case o.Auto:
		// The page prompt, which the demo can answer: its browser has a
		// debugging port, so by default fillgate would ask outside it.
		if err := writePolicy(lookup, `prompt = "browser"`); err != nil {
			return fill.Result{}, err
		}
		say("   (no human here: the demo answers the prompt page itself with a made-up sample password)")
		go playHuman(ctx, browserCtx, url)
	case native == nil:
		say("   → a fillgate dialog opened on your desktop, outside the browser: the demo drives its browser over a")
		say("     debugging port, and a program that can drive the browser could read or answer a prompt inside it.")
		say("     Type a made-up password there and press Enter, or Esc to cancel")
	default:
		if err := writePolicy(lookup, `prompt = "browser"`); err != nil {
			return fill.Result{}, err
		}
		say("   (no native dialog can be shown here: %v;", native)
		say("    so the demo's policy says prompt = \"browser\")")
		say("   → a fillgate window opened in the browser: type a made-up password there and press Enter, or Esc to cancel")
	}
	res := request.Fill(ctx, fill.Request{Service: "127.0.0.1", Field: fill.FieldPassword, Timeout: o.Timeout},
		request.Options{Via: request.ViaExtension, Client: "fillgate demo", Env: lookup})
	out, _ := json.Marshal(res)
	say("5. The agent gets only this:\n   %s", out)

	if res.HandedOver != nil && *res.HandedOver {
		say("   The demo drives its browser over a debugging port, so fillgate logged in in a clean room, a")
		say("   headless browser only fillgate holds, and handed the demo's browser the session: the password")
		say("   never entered the browser the agent drives.")
	}
	if signed, err := chromedp.Run(tab, chromedp.Evaluate[bool](`fetch("/account", {credentials: "include"}).then((r) => r.ok && r.url.endsWith("/account") && location.pathname === "/account")`,
		chromedp.EvalAwaitPromise)); err == nil {
		say("6. The agent's tab is signed in to Acme (its own request for the account page is let in): %v", signed)
	}
	if o.Keep {
		say("The browser stays open; close it when you are done.")
	}
	return res, nil
}

// demoEnv is the browser's and the host's environment: the person's own
// display, with every fillgate and Chromium directory inside root so the
// tour touches nothing of theirs.
func demoEnv(root string) ([]string, func(string) string) {
	vars := map[string]string{
		"PATH":            os.Getenv("PATH"),
		"HOME":            filepath.Join(root, "home"),
		"XDG_CONFIG_HOME": filepath.Join(root, "config"),
		"XDG_CACHE_HOME":  filepath.Join(root, "cache"),
		"XDG_DATA_HOME":   filepath.Join(root, "data"),
		"XDG_STATE_HOME":  filepath.Join(root, "state"),
		"XDG_RUNTIME_DIR": filepath.Join(root, "run"),
	}
	// The person's display, and their session bus (pinentry-gnome3 asks
	// through it), for the browser and for the native dialog.
	for _, k := range []string{"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "LANG"} {
		if v := os.Getenv(k); v != "" {
			vars[k] = v
		}
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		if strings.HasPrefix(k, "XDG_") || k == "HOME" {
			_ = os.MkdirAll(v, 0o700)
		}
		env = append(env, k+"="+v)
	}
	return env, func(k string) string { return vars[k] }
}

// writePolicy writes the throw-away profile's policy file.
func writePolicy(env func(string) string, text string) error {
	p, err := dirs.PolicyFile(env)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(text+"\n"), 0o600)
}

// HasDisplay reports whether a browser window can be shown.
func HasDisplay() bool {
	return runtime.GOOS == "windows" || runtime.GOOS == "darwin" ||
		os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

// waitForHost waits until the extension's host answers on the agent socket.
func waitForHost(ctx context.Context, env func(string) string) error {
	dir := filepath.Join(env("XDG_RUNTIME_DIR"), "fillgate")
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		hs, err := agentsock.Status(ctx, dir)
		for _, h := range hs {
			if h.Extension.Connected {
				return nil
			}
		}
		if err != nil && !errors.Is(err, agentsock.ErrNoHost) && ctx.Err() == nil {
			return fmt.Errorf("ask the host: %w", err)
		}
		select {
		case <-ctx.Done():
			return errors.New("the extension did not connect to the fillgate host within 20 s")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// playHuman answers the prompt window as a person would: it waits for the
// prompt page, types the sample password into its focused field and
// presses Enter.
func playHuman(ctx context.Context, browserCtx context.Context, loginURL string) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		infos, _ := chromedp.Targets(browserCtx)
		for _, t := range infos {
			if t.Type != "page" || !strings.HasPrefix(t.URL, "http://127.0.0.1:") || t.URL == loginURL {
				continue
			}
			// Detach, never close: closing the prompt window cancels the
			// request, and the form's POST may still be on its way.
			p, cancelP := chromedp.NewContext(browserCtx, chromedp.WithTargetID(t.TargetID), chromedp.WithDetachOnCancel())
			err := chromedp.Do(p, chromedp.WaitVisible("#value"))
			if err == nil {
				_, err = chromedp.Call(p, input.InsertText, input.InsertTextParams{Text: samplePassword})
			}
			if err == nil {
				err = chromedp.Do(p, chromedp.KeyEvent("\r"))
			}
			cancelP()
			if err == nil {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}
