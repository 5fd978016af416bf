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
	"github.com/fillgate/fillgate/internal/doctor"
	"github.com/fillgate/fillgate/internal/install"
	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/internal/policy"
)

type doctorCmd struct {
	placeFlags
}

func (c *doctorCmd) Run(a *app) error {
	d := doctor.Run(a.ctx, probes(a.env, c.options(a)))
	if err := printReport(a, d, c.JSON); err != nil {
		return err
	}
	if code := d.ExitCode(); code != 0 {
		return exitCode(code)
	}
	return nil
}

// probes wires the rest of fillgate into doctor: install's checks for o,
// and the running hosts, the keyring, the policy, a CDP endpoint and the
// refused connections for env.
func probes(env dirs.Env, o install.Options) doctor.Probes {
	return doctor.Probes{
		Version: manifest.Version,
		Origins: o.Origins,
		Setup: func(context.Context) (doctor.Setup, error) {
			return install.Check(o, manifest.Version)
		},
		Hosts: func(ctx context.Context) ([]doctor.HostStatus, error) {
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
			var out []doctor.HostStatus
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

// doctorHost is what `fillgate doctor` needs of a running host's status;
// local is the local policy's prompt mode, for a host that does not say
// its own.
func doctorHost(h agentsock.HostStatus, local string) doctor.HostStatus {
	out := doctor.HostStatus{
		PID: h.PID, Version: h.Version, Browser: h.Browser, Profile: h.Profile, Caller: h.Caller, Socket: h.Socket,
		Connected: h.Extension.Connected, ExtensionVersion: h.Extension.Version, Paused: h.Extension.Paused,
		Prompt: promptMode(h, local),
	}
	if h.Drive != nil {
		out.Drive = &doctor.HostDrive{Driven: h.Drive.Driven, Reasons: h.Drive.Reasons}
	}
	return out
}
