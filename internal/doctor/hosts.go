package doctor

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/fillgate/fillgate/internal/browsertable"
	"github.com/fillgate/fillgate/internal/manifest"
)

// checkRefused is the check of the second connections the hosts refused
// lately: each was a page of the extension opened in a tab, or a program
// driving the browser, trying to play the extension.
func checkRefused(refused []string) Check {
	if len(refused) == 0 {
		return Check{Name: "extension pages", Level: OK, Detail: "no second connection to the host was refused in the last day"}
	}
	return Check{Name: "extension pages", Level: Warn,
		Detail: fmt.Sprintf("%d second native-messaging connection(s) refused in the last day, while the extension's own was live: "+
			"a page of the extension opened in a tab, or a program driving the browser, tried to play the extension (last: %s)", len(refused), refused[len(refused)-1]),
		Fix: "if you did not open fillgate's popup page in a tab yourself, see what drives the browser (fillgate status) and stop it; fillgate audit lists the refusals"}
}

// keyringFix says how to make the keyring reachable, per OS.
var keyringFix = map[string]string{
	"linux":   "start and unlock a Secret Service (GNOME Keyring or KeePassXC with Secret Service on), e.g. log in to a desktop session",
	"darwin":  "unlock the login keychain (Keychain Access → login → Unlock)",
	"windows": "check that Credential Manager works for your account (Control Panel → Credential Manager)",
}

// noCDP is the detail of the cdp check when none is configured.
const noCDP = "no CDP endpoint configured (the extension does not need one)"

// checkCDP is the check of a configured CDP endpoint.
func checkCDP(ctx context.Context, probe func(context.Context) (string, error)) Check {
	endpoint, err := probe(ctx)
	switch {
	case endpoint == "" && err == nil:
		return Check{Name: "cdp", Level: OK, Detail: noCDP}
	case err != nil:
		return Check{Name: "cdp", Level: Warn, Detail: fmt.Sprintf("the configured CDP endpoint %s cannot be reached: %v", endpoint, err),
			Fix: "start the browser it names with --remote-debugging-port, or remove the endpoint from fillgate's configuration"}
	}
	return Check{Name: "cdp", Level: OK, Detail: "the configured CDP endpoint " + endpoint + " answers"}
}

// checkHosts adds a check for each running host (its extension connected,
// not paused, in step with the host and this binary) and where its
// prompts open; or one that says none runs, and how to start one.
func checkHosts(ctx context.Context, d *Report, p Probes, su Setup, cdpOK bool) {
	hosts, err := p.Hosts(ctx)
	if err != nil {
		d.add(Check{Name: "host", Level: Fail, Detail: "could not ask the running host: " + err.Error(),
			Fix: "restart the browser, which restarts the host"})
		return
	}
	if len(hosts) == 0 {
		c := Check{Name: "host", Level: Fail, Detail: "no fillgate host is running: no browser has fillgate's extension connected"}
		if cdpOK {
			c.Level = Warn
			c.Detail += "; fills use the CDP fallback"
		}
		switch {
		case su.Start != "":
			c.Fix = su.Start + "; the browser starts the host when the extension loads"
		default:
			c.Fix = "run fillgate install, then load the extension as it says; the browser starts the host when the extension loads"
		}
		d.add(c)
		return
	}
	for _, h := range hosts {
		name := fmt.Sprintf("host %d", h.PID)
		where := h.Browser
		if h.Profile != "" {
			where += " (profile " + h.Profile + ")"
		}
		page := "the browser's extensions page"
		if b := browsertable.Lookup(h.Browser); b != nil {
			page = b.Page
		}
		switch {
		case !h.Connected:
			d.add(Check{Name: name, Level: Fail, Detail: "runs for " + where + ", but its extension is not connected", Fix: "reload fillgate on " + page})
		case h.Paused:
			d.add(Check{Name: name, Level: Warn, Detail: "fillgate is paused in " + where, Fix: "open fillgate's popup in the toolbar and turn it back on"})
		default:
			if c, ok := checkVersions(h, name, where, page, su.Carried, p.Version, su.Upgrade, p.origins()); ok {
				d.add(c)
				break
			}
			d.add(Check{Name: name, Level: OK, Detail: fmt.Sprintf("%s, extension %s connected", where, h.ExtensionVersion)})
		}
		if c, ok := doctorDrive(h, where); ok {
			d.add(c)
		}
	}
}

// checkVersions checks that the extension h runs and the host it talks
// to are one version, and that both are this binary's (carried is the
// version of the extension it carries, cli its own, upgrade how to bring
// it to a newer release). where names the browser, page its extensions
// page. The extension is either the unpacked copy fillgate install
// writes, which install and a reload bring in step, or a store's, which
// the store updates on its own: then the fix is to update whichever of the
// two is behind. origins tell a store's copy.
func checkVersions(h HostStatus, name, where, page, carried, cli, upgrade string, origins manifest.Origins) (Check, bool) {
	ext, host := h.ExtensionVersion, h.Version
	store := origins.IsStore(h.Caller)
	pair := ext != "" && host != "" && ext != host
	c := Check{Name: name, Level: Warn}
	switch {
	case pair:
		from := ""
		if store {
			from = " from the store"
		}
		c.Detail = fmt.Sprintf("%s runs extension %q%s with host %q; the two must be the same version", where, ext, from, host)
	case !store && carried != "" && ext != carried:
		c.Detail = fmt.Sprintf("%s runs extension %q; this binary carries %q", where, ext, carried)
	case cli != "" && host != cli:
		c.Detail = fmt.Sprintf("%s runs host %q; this binary is %q", where, host, cli)
	default:
		return Check{}, false
	}
	switch {
	case !store:
		c.Fix = "fillgate install, then reload fillgate on " + page
	case pair && !newer(ext, host):
		c.Fix = "update fillgate's extension: on " + page + " turn on Developer mode and click Update (or wait: the store updates it within a few hours)"
	case pair && (cli == "" || newer(ext, cli)):
		c.Fix = upgrade + ", then restart the browser"
	default: // only the host is behind, and this binary has caught up
		c.Fix = "restart the browser so it starts this binary"
	}
	return c, true
}

// newer reports whether version a is later than b. Extension versions are
// one to four dot-separated numbers (the stores require it); anything
// else compares as not newer.
func newer(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		x, errA := part(pa, i)
		y, errB := part(pb, i)
		if errA != nil || errB != nil {
			return false
		}
		if x != y {
			return x > y
		}
	}
	return false
}

func part(parts []string, i int) (int, error) {
	if i >= len(parts) {
		return 0, nil
	}
	return strconv.Atoi(parts[i])
}
