package browsertable

import (
	"fmt"
	"strings"

	"github.com/fillgate/fillgate/internal/manifest"
)

// MarkdownTable renders the browser × OS table for docs/browsers.md, from
// the table install uses. docs/browsers.md holds its output between its
// browser-table markers; a test keeps the two in step (go test
// ./internal/browsertable -update rewrites that section).
func MarkdownTable() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	code := func(ss []string) string {
		var out []string
		for _, s := range ss {
			out = append(out, "`"+strings.ReplaceAll(s, "$XDG_CONFIG_HOME", "~/.config")+"`")
		}
		if len(out) == 0 {
			return "—"
		}
		return strings.Join(out, "<br>")
	}

	w("<!-- Generated from internal/browsertable/table.go by `go test ./internal/browsertable -update`; do not edit by hand. -->\n")
	w("## Where browsers look for fillgate\n\n")
	w("`fillgate install` writes the host manifest `%s` (name `%s`) where each browser reads it, ", manifest.FileName, manifest.HostName)
	w("per user by default or for every user with `--system`. Chromium-family manifests allow the extension by origin ")
	w("(`allowed_origins`), Firefox-family ones by add-on id (`allowed_extensions`: `%s`). ", manifest.FirefoxID)
	w("With no `--browser`, it installs for every browser found on the machine: one whose profile data or program ")
	w("in the last column exists, or whose command is on `$PATH`. `~/.config` stands for `$XDG_CONFIG_HOME` when that is set, and for Chromium-family browsers `$CHROME_CONFIG_HOME` first (Chromium on Linux reads it).\n\n")

	for _, col := range []struct{ os, title string }{{"linux", "Linux"}, {"darwin", "macOS"}} {
		w("### %s\n\n", col.title)
		w("| Browser | `--browser` | per user | system-wide (`--system`) | found when one exists |\n")
		w("|---|---|---|---|---|\n")
		for _, br := range browsers {
			pl, ok := br.OS[col.os]
			if !ok {
				continue
			}
			found := code(append(append([]string{}, pl.Profile...), pl.Programs...))
			for _, c := range pl.Commands {
				found += "<br>`" + c + "` on `$PATH`"
			}
			sys := code(pl.System)
			if len(pl.SystemIfParent) > 0 {
				sys += "<br>" + code(pl.SystemIfParent) + " (where its parent exists)"
			}
			w("| %s | `%s` | %s | %s | %s |\n", br.Title, br.Name, code(pl.User), sys, found)
		}
		w("\n")
	}
	w("On Linux and macOS, any Chromium-family browser started with `--user-data-dir DIR` also reads `DIR/NativeMessagingHosts/`: ")
	w("`fillgate install --user-data-dir DIR` writes only there (Brave and Opera ignore it and read their default folder).\n\n")
	w("On Linux, a browser installed as a Flatpak or Snap cannot start a program outside its sandbox, so fillgate writes no manifest inside it. ")
	w("Firefox as a Snap reaches fillgate through the WebExtensions portal, and Firefox 157+ as a Flatpak through `xdg-native-messaging-proxy`; ")
	w("both read the ordinary `~/.mozilla/native-messaging-hosts/`. Chromium-family Flatpaks and Snaps have no such route; `fillgate install` and `fillgate doctor` say so.\n\n")

	w("### Windows\n\n")
	w("Windows browsers find hosts through the registry only: the default value of `<key>\\%s` is the manifest's path. ", manifest.HostName)
	w("fillgate writes the keys under `HKCU` (or `HKLM` with `--system`), in the 64-bit view, and the manifests to ")
	w("`%%LOCALAPPDATA%%\\fillgate\\NativeMessagingHosts\\<family>\\%s` ", manifest.FileName)
	w("(`%%ProgramData%%\\fillgate\\…` with `--system`), where `<family>` is `chromium` or `firefox`.\n\n")
	w("| Browser | `--browser` | registry keys | found when one exists |\n")
	w("|---|---|---|---|\n")
	for _, br := range browsers {
		pl, ok := br.OS["windows"]
		if !ok {
			continue
		}
		w("| %s | `%s` | %s | %s |\n", br.Title, br.Name, code(pl.Keys), code(append(append([]string{}, pl.Profile...), pl.Programs...)))
	}
	return b.String()
}
