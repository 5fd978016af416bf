package main

import (
	"fmt"

	"github.com/fillgate/fillgate/internal/install"
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
