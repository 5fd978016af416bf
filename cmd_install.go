package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/cdp"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/install"
	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/internal/policy"
)

// placeFlags are the flags install, uninstall and doctor share.
type placeFlags struct {
	Browser     []string `help:"A browser to set up (repeatable): chrome, chrome-beta, chrome-dev, chromium, brave, edge, vivaldi, opera, arc, firefox, librewolf, waterfox. Default: every browser found." placeholder:"NAME"`
	System      bool     `help:"For every user (system folders; HKLM on Windows). Usually needs root or Administrator."`
	UserDataDir string   `help:"A Chromium-family --user-data-dir profile: the manifest goes to DIR/NativeMessagingHosts/." placeholder:"DIR" type:"path"`
	JSON        bool     `name:"json" help:"Print a JSON report."`
}

func (p placeFlags) options(a *app) install.Options {
	return install.Options{Browsers: p.Browser, System: p.System, UserDataDir: p.UserDataDir, Env: a.env}
}

type installCmd struct {
	placeFlags
	DryRun bool `help:"Say what would be written; write nothing."`
	Force  bool `help:"Overwrite a host manifest or registry key that is not fillgate's."`
}

func (c *installCmd) Run(a *app) error {
	o := c.options(a)
	o.DryRun, o.Force = c.DryRun, c.Force
	r, err := install.Install(a.ctx, o)
	return report(a, r, err, c.JSON)
}

type uninstallCmd struct {
	placeFlags
	DryRun bool `help:"Say what would be removed; remove nothing."`
}

func (c *uninstallCmd) Run(a *app) error {
	o := c.options(a)
	o.DryRun = c.DryRun
	r, err := install.Uninstall(a.ctx, o)
	return report(a, r, err, c.JSON)
}

func report(a *app, r *install.Report, err error, asJSON bool) error {
	if r != nil {
		if perr := printReport(a, r, asJSON); perr != nil {
			return perr
		}
	}
	return err
}

// printReport writes an install, uninstall or doctor report as text or
// JSON.
func printReport(a *app, r interface {
	JSON() ([]byte, error)
	Text() string
}, asJSON bool) error {
	if !asJSON {
		_, err := fmt.Fprint(a.stdout, r.Text())
		return err
	}
	b, err := r.JSON()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(a.stdout, "%s\n", b)
	return err
}

type doctorCmd struct {
	placeFlags
}

func (c *doctorCmd) Run(a *app) error {
	d := install.Doctor(a.ctx, c.options(a), probes(a.env))
	if err := printReport(a, d, c.JSON); err != nil {
		return err
	}
	if code := d.ExitCode(); code != 0 {
		return exitCode(code)
	}
	return nil
}

// probes wires the rest of fillgate into doctor.
func probes(env dirs.Env) install.Probes {
	return install.Probes{
		Version: manifest.Version,
		Hosts: func(ctx context.Context) ([]install.HostStatus, error) {
			dir, err := dirs.Runtime(env)
			if err != nil {
				return nil, err
			}
			ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			hs, err := agentsock.Status(ctx, dir)
			if errors.Is(err, agentsock.ErrNoHost) {
				return nil, nil
			}
			local := localPrompt(env)
			var out []install.HostStatus
			for _, h := range hs {
				out = append(out, doctorHost(h, local))
			}
			return out, err
		},
		Keyring: func(ctx context.Context) error { return keychain.OS().Check(ctx) },
		Refused: func() []string {
			dir, err := dirs.State(env)
			if err != nil {
				return nil
			}
			return refusedConnections(dir, time.Now())
		},
		Policy: func(ctx context.Context) (string, error) {
			path, err := dirs.PolicyFile(env)
			if err != nil {
				return "", err
			}
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				return "", nil
			}
			_, err = policy.Load(path)
			return path, err
		},
		CDP: func(ctx context.Context) (string, error) {
			path, err := dirs.PolicyFile(env)
			if err != nil {
				return "", err
			}
			pol, err := policy.Load(path)
			if err != nil {
				return "", nil // the policy check reports it
			}
			ep, err := cdp.Resolve(env, pol.CDPURL)
			if err != nil {
				return "", err
			}
			if ep.Source == cdp.SourceDefault {
				return "", nil // not configured
			}
			return ep.URL, reachable(ctx, ep.URL, pol.CDPAllowHosts)
		},
	}
}

// reachable dials the CDP endpoint's host and port (nothing is sent). Like
// the CDP path itself, it never dials a host that is neither loopback nor
// allowed by the policy.
func reachable(ctx context.Context, raw string, allow []string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if !cdp.IsLoopback(u.Hostname()) && !slices.Contains(allow, strings.ToLower(u.Hostname())) {
		return fmt.Errorf("%s is not loopback and not in the policy's cdp_allow_hosts", u.Hostname())
	}
	hostport := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" || u.Scheme == "wss" {
			port = "443"
		}
		hostport = net.JoinHostPort(u.Hostname(), port)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", hostport)
	if err != nil {
		return err
	}
	return c.Close()
}
