// Package browsertable is the browsers fillgate knows and how each is laid
// out on each OS: where it reads host manifests and keeps its profiles, how
// to tell that it is installed, what its executable is called, and how its
// command line names a profile. install writes manifests from it, doctor
// checks them, drivable finds the profile a browser runs, and the host
// names the browser that started it.
package browsertable

import (
	"slices"

	"github.com/fillgate/fillgate/internal/manifest"
)

// Browser is one browser fillgate installs for.
type Browser struct {
	// Name is what --browser takes.
	Name string
	// Title is the browser's own name.
	Title string
	// Family decides the manifest's allow-list.
	Family manifest.Family
	// Page is the browser's extensions page.
	Page string
	// OS says where the browser reads host manifests on each OS ("linux",
	// "darwin", "windows"); an OS missing here has no such browser.
	OS map[string]Places
}

// Places is where one browser on one OS reads host manifests, and how
// fillgate tells that the browser is installed.
//
// Paths are templates: "~" is the home directory; "$XDG_CONFIG_HOME" is
// that variable or ~/.config (CHROME_CONFIG_HOME first for the Chromium
// family; see Expand); "%LOCALAPPDATA%", "%APPDATA%",
// "%ProgramFiles%", "%ProgramFiles(x86)%" and "%ProgramData%" are the
// Windows folders of those names.
type Places struct {
	// User are the per-user folders that hold <host name>.json (Linux,
	// macOS).
	User []string
	// System are the folders for every user (--system).
	System []string
	// SystemIfParent are system folders written only when their parent
	// already exists: a distribution uses one or the other.
	SystemIfParent []string
	// Keys are the registry keys (Windows) under HKCU, or HKLM with
	// --system, whose subkey <host name> has the manifest's path as its
	// default value.
	Keys []string

	// Found: a browser is on the machine when one of these exists: its
	// profile data (Chromium's "Local State", Firefox's profiles), its
	// program, or a command of one of these names on $PATH.
	Profile  []string
	Programs []string
	Commands []string

	// Flatpak and Snap name the sandboxed packages of the browser (Linux).
	Flatpak string
	Snap    string
}

// Sources for the table, read for every row (paths were checked against
// at least one of these, and against the browser's own docs where it has
// any):
//   - Chrome and Chromium: developer.chrome.com/docs/extensions/develop/concepts/native-messaging#native-messaging-host-location
//   - Edge: learn.microsoft.com/microsoft-edge/extensions/developer-guide/native-messaging
//     (step 3: /etc/opt/edge/native-messaging-hosts, /Library/Microsoft/Edge/NativeMessagingHosts,
//     HKCU\Software\Microsoft\Edge\NativeMessagingHosts)
//   - Firefox: developer.mozilla.org/docs/Mozilla/Add-ons/WebExtensions/Native_manifests#manifest_location;
//     manifests stay in ~/.mozilla even with Firefox 147's XDG profiles (bugzilla 2005167)
//   - Brave, Vivaldi, Chrome channels, Flatpak ids: bitwarden/clients apps/desktop/src/main/native-messaging.main.ts,
//     keepassxreboot/keepassxc src/browser/NativeMessageInstaller.cpp, browserpass/browserpass-native Makefile
//   - Opera reads Google Chrome's folders and key (help.opera.com/en/extensions/message-passing/;
//     Opera forum "Porting extension from Chrome: macOS native messaging"); Brave and Vivaldi read
//     /etc/opt/chrome system-wide, and Opera reads Chrome's folder on Linux (a public research note that
//     traced Brave 1.96, Vivaldi 8.2 and Opera 136 on Linux with a manifest in every candidate folder)
//   - Arc: keepassxreboot/keepassxc-browser wiki troubleshooting guide (issue 2171)
//   - LibreWolf: librewolf.net/docs/faq (native messaging), nixpkgs issue 414205 (~/.librewolf since 138),
//     ltguillaume/librewolf-portable issue 13 (Windows reads Software\Mozilla)
//   - Waterfox: BrowserWorks/Waterfox toolkit/components/extensions/NativeManifests.sys.mjs (Software\Mozilla;
//     on macOS "Waterfox" is mapped to the Mozilla folder), BrowserWorks/waterfox issue 3241 (~/.waterfox)

// mozillaKey is where Firefox and its forks look on Windows.
const mozillaKey = `Software\Mozilla\NativeMessagingHosts`

// chromeKey is Google Chrome's key, which Opera reads and Brave and Vivaldi
// fall back to.
const chromeKey = `Software\Google\Chrome\NativeMessagingHosts`

// browsers is the table: every browser fillgate knows, in the order
// reports list them. Table returns a copy.
var browsers = []Browser{
	{
		Name: "chrome", Title: "Google Chrome", Family: manifest.Chromium, Page: "chrome://extensions",
		OS: map[string]Places{
			"linux": {
				User:     []string{"$XDG_CONFIG_HOME/google-chrome/NativeMessagingHosts"},
				System:   []string{"/etc/opt/chrome/native-messaging-hosts"},
				Profile:  []string{"$XDG_CONFIG_HOME/google-chrome/Local State"},
				Programs: []string{"/opt/google/chrome/chrome"},
				Commands: []string{"google-chrome", "google-chrome-stable"},
				Flatpak:  "com.google.Chrome",
			},
			"darwin": {
				User:     []string{"~/Library/Application Support/Google/Chrome/NativeMessagingHosts"},
				System:   []string{"/Library/Google/Chrome/NativeMessagingHosts"},
				Profile:  []string{"~/Library/Application Support/Google/Chrome/Local State"},
				Programs: []string{"/Applications/Google Chrome.app", "~/Applications/Google Chrome.app"},
			},
			"windows": {
				Keys:     []string{chromeKey},
				Profile:  []string{`%LOCALAPPDATA%\Google\Chrome\User Data\Local State`},
				Programs: []string{`%ProgramFiles%\Google\Chrome\Application\chrome.exe`, `%ProgramFiles(x86)%\Google\Chrome\Application\chrome.exe`, `%LOCALAPPDATA%\Google\Chrome\Application\chrome.exe`},
			},
		},
	},
	{
		Name: "chrome-beta", Title: "Google Chrome Beta", Family: manifest.Chromium, Page: "chrome://extensions",
		OS: map[string]Places{
			"linux": {
				User:     []string{"$XDG_CONFIG_HOME/google-chrome-beta/NativeMessagingHosts"},
				System:   []string{"/etc/opt/chrome/native-messaging-hosts"},
				Profile:  []string{"$XDG_CONFIG_HOME/google-chrome-beta/Local State"},
				Programs: []string{"/opt/google/chrome-beta/chrome"},
				Commands: []string{"google-chrome-beta"},
			},
			"darwin": {
				User:     []string{"~/Library/Application Support/Google/Chrome Beta/NativeMessagingHosts"},
				System:   []string{"/Library/Google/Chrome/NativeMessagingHosts"},
				Profile:  []string{"~/Library/Application Support/Google/Chrome Beta/Local State"},
				Programs: []string{"/Applications/Google Chrome Beta.app", "~/Applications/Google Chrome Beta.app"},
			},
			"windows": {
				Keys:     []string{chromeKey},
				Profile:  []string{`%LOCALAPPDATA%\Google\Chrome Beta\User Data\Local State`},
				Programs: []string{`%ProgramFiles%\Google\Chrome Beta\Application\chrome.exe`},
			},
		},
	},
	{
		Name: "chrome-dev", Title: "Google Chrome Dev", Family: manifest.Chromium, Page: "chrome://extensions",
		OS: map[string]Places{
			"linux": {
				User:     []string{"$XDG_CONFIG_HOME/google-chrome-unstable/NativeMessagingHosts"},
				System:   []string{"/etc/opt/chrome/native-messaging-hosts"},
				Profile:  []string{"$XDG_CONFIG_HOME/google-chrome-unstable/Local State"},
				Programs: []string{"/opt/google/chrome-unstable/chrome"},
				Commands: []string{"google-chrome-unstable"},
			},
			"darwin": {
				User:     []string{"~/Library/Application Support/Google/Chrome Dev/NativeMessagingHosts"},
				System:   []string{"/Library/Google/Chrome/NativeMessagingHosts"},
				Profile:  []string{"~/Library/Application Support/Google/Chrome Dev/Local State"},
				Programs: []string{"/Applications/Google Chrome Dev.app", "~/Applications/Google Chrome Dev.app"},
			},
			"windows": {
				Keys:     []string{chromeKey},
				Profile:  []string{`%LOCALAPPDATA%\Google\Chrome Dev\User Data\Local State`},
				Programs: []string{`%ProgramFiles%\Google\Chrome Dev\Application\chrome.exe`},
			},
		},
	},
	{
		Name: "chromium", Title: "Chromium", Family: manifest.Chromium, Page: "chrome://extensions",
		OS: map[string]Places{
			"linux": {
				User:     []string{"$XDG_CONFIG_HOME/chromium/NativeMessagingHosts"},
				System:   []string{"/etc/chromium/native-messaging-hosts"},
				Profile:  []string{"$XDG_CONFIG_HOME/chromium/Local State"},
				Programs: []string{"/usr/lib/chromium/chromium"},
				Commands: []string{"chromium", "chromium-browser"},
				Flatpak:  "org.chromium.Chromium",
				Snap:     "chromium",
			},
			"darwin": {
				User:     []string{"~/Library/Application Support/Chromium/NativeMessagingHosts"},
				System:   []string{"/Library/Application Support/Chromium/NativeMessagingHosts"},
				Profile:  []string{"~/Library/Application Support/Chromium/Local State"},
				Programs: []string{"/Applications/Chromium.app", "~/Applications/Chromium.app"},
			},
			"windows": {
				Keys:     []string{`Software\Chromium\NativeMessagingHosts`},
				Profile:  []string{`%LOCALAPPDATA%\Chromium\User Data\Local State`},
				Programs: []string{`%LOCALAPPDATA%\Chromium\Application\chrome.exe`},
			},
		},
	},
	{
		Name: "brave", Title: "Brave", Family: manifest.Chromium, Page: "brave://extensions",
		OS: map[string]Places{
			"linux": {
				User:     []string{"$XDG_CONFIG_HOME/BraveSoftware/Brave-Browser/NativeMessagingHosts"},
				System:   []string{"/etc/opt/chrome/native-messaging-hosts"},
				Profile:  []string{"$XDG_CONFIG_HOME/BraveSoftware/Brave-Browser/Local State"},
				Programs: []string{"/opt/brave.com/brave/brave"},
				Commands: []string{"brave-browser", "brave"},
				Flatpak:  "com.brave.Browser",
				Snap:     "brave",
			},
			"darwin": {
				User:     []string{"~/Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts"},
				System:   []string{"/Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts"},
				Profile:  []string{"~/Library/Application Support/BraveSoftware/Brave-Browser/Local State"},
				Programs: []string{"/Applications/Brave Browser.app", "~/Applications/Brave Browser.app"},
			},
			"windows": {
				Keys:     []string{`Software\BraveSoftware\Brave-Browser\NativeMessagingHosts`, chromeKey},
				Profile:  []string{`%LOCALAPPDATA%\BraveSoftware\Brave-Browser\User Data\Local State`},
				Programs: []string{`%ProgramFiles%\BraveSoftware\Brave-Browser\Application\brave.exe`, `%LOCALAPPDATA%\BraveSoftware\Brave-Browser\Application\brave.exe`},
			},
		},
	},
	{
		Name: "edge", Title: "Microsoft Edge", Family: manifest.Chromium, Page: "edge://extensions",
		OS: map[string]Places{
			"linux": {
				User:     []string{"$XDG_CONFIG_HOME/microsoft-edge/NativeMessagingHosts"},
				System:   []string{"/etc/opt/edge/native-messaging-hosts"},
				Profile:  []string{"$XDG_CONFIG_HOME/microsoft-edge/Local State"},
				Programs: []string{"/opt/microsoft/msedge/msedge"},
				Commands: []string{"microsoft-edge", "microsoft-edge-stable"},
				Flatpak:  "com.microsoft.Edge",
			},
			"darwin": {
				User:     []string{"~/Library/Application Support/Microsoft Edge/NativeMessagingHosts"},
				System:   []string{"/Library/Microsoft/Edge/NativeMessagingHosts"},
				Profile:  []string{"~/Library/Application Support/Microsoft Edge/Local State"},
				Programs: []string{"/Applications/Microsoft Edge.app", "~/Applications/Microsoft Edge.app"},
			},
			"windows": {
				Keys:     []string{`Software\Microsoft\Edge\NativeMessagingHosts`},
				Profile:  []string{`%LOCALAPPDATA%\Microsoft\Edge\User Data\Local State`},
				Programs: []string{`%ProgramFiles(x86)%\Microsoft\Edge\Application\msedge.exe`, `%ProgramFiles%\Microsoft\Edge\Application\msedge.exe`},
			},
		},
	},
	{
		Name: "edge-beta", Title: "Microsoft Edge Beta", Family: manifest.Chromium, Page: "edge://extensions",
		OS: map[string]Places{
			"linux": {
				User:     []string{"$XDG_CONFIG_HOME/microsoft-edge-beta/NativeMessagingHosts"},
				System:   []string{"/etc/opt/edge/native-messaging-hosts"},
				Profile:  []string{"$XDG_CONFIG_HOME/microsoft-edge-beta/Local State"},
				Programs: []string{"/opt/microsoft/msedge-beta/msedge"},
				Commands: []string{"microsoft-edge-beta"},
			},
			"darwin": {
				User:     []string{"~/Library/Application Support/Microsoft Edge Beta/NativeMessagingHosts"},
				System:   []string{"/Library/Microsoft/Edge/NativeMessagingHosts"},
				Profile:  []string{"~/Library/Application Support/Microsoft Edge Beta/Local State"},
				Programs: []string{"/Applications/Microsoft Edge Beta.app", "~/Applications/Microsoft Edge Beta.app"},
			},
			"windows": {
				Keys:     []string{`Software\Microsoft\Edge\NativeMessagingHosts`},
				Profile:  []string{`%LOCALAPPDATA%\Microsoft\Edge Beta\User Data\Local State`},
				Programs: []string{`%ProgramFiles(x86)%\Microsoft\Edge Beta\Application\msedge.exe`},
			},
		},
	},
	{
		Name: "edge-dev", Title: "Microsoft Edge Dev", Family: manifest.Chromium, Page: "edge://extensions",
		OS: map[string]Places{
			"linux": {
				User:     []string{"$XDG_CONFIG_HOME/microsoft-edge-dev/NativeMessagingHosts"},
				System:   []string{"/etc/opt/edge/native-messaging-hosts"},
				Profile:  []string{"$XDG_CONFIG_HOME/microsoft-edge-dev/Local State"},
				Programs: []string{"/opt/microsoft/msedge-dev/msedge"},
				Commands: []string{"microsoft-edge-dev"},
			},
			"darwin": {
				User:     []string{"~/Library/Application Support/Microsoft Edge Dev/NativeMessagingHosts"},
				System:   []string{"/Library/Microsoft/Edge/NativeMessagingHosts"},
				Profile:  []string{"~/Library/Application Support/Microsoft Edge Dev/Local State"},
				Programs: []string{"/Applications/Microsoft Edge Dev.app", "~/Applications/Microsoft Edge Dev.app"},
			},
			"windows": {
				Keys:     []string{`Software\Microsoft\Edge\NativeMessagingHosts`},
				Profile:  []string{`%LOCALAPPDATA%\Microsoft\Edge Dev\User Data\Local State`},
				Programs: []string{`%ProgramFiles(x86)%\Microsoft\Edge Dev\Application\msedge.exe`},
			},
		},
	},
	{
		Name: "vivaldi", Title: "Vivaldi", Family: manifest.Chromium, Page: "vivaldi://extensions",
		OS: map[string]Places{
			"linux": {
				User:     []string{"$XDG_CONFIG_HOME/vivaldi/NativeMessagingHosts"},
				System:   []string{"/etc/opt/chrome/native-messaging-hosts"},
				Profile:  []string{"$XDG_CONFIG_HOME/vivaldi/Local State"},
				Programs: []string{"/opt/vivaldi/vivaldi"},
				Commands: []string{"vivaldi", "vivaldi-stable"},
				Flatpak:  "com.vivaldi.Vivaldi",
			},
			"darwin": {
				User:     []string{"~/Library/Application Support/Vivaldi/NativeMessagingHosts"},
				System:   []string{"/Library/Application Support/Vivaldi/NativeMessagingHosts"},
				Profile:  []string{"~/Library/Application Support/Vivaldi/Local State"},
				Programs: []string{"/Applications/Vivaldi.app", "~/Applications/Vivaldi.app"},
			},
			"windows": {
				Keys:     []string{`Software\Vivaldi\NativeMessagingHosts`, chromeKey},
				Profile:  []string{`%LOCALAPPDATA%\Vivaldi\User Data\Local State`},
				Programs: []string{`%LOCALAPPDATA%\Vivaldi\Application\vivaldi.exe`, `%ProgramFiles%\Vivaldi\Application\vivaldi.exe`},
			},
		},
	},
	{
		// Opera has no folder or key of its own: it reads Google Chrome's.
		Name: "opera", Title: "Opera", Family: manifest.Chromium, Page: "opera://extensions",
		OS: map[string]Places{
			"linux": {
				User:     []string{"$XDG_CONFIG_HOME/google-chrome/NativeMessagingHosts"},
				System:   []string{"/etc/opt/chrome/native-messaging-hosts"},
				Profile:  []string{"$XDG_CONFIG_HOME/opera/Local State"},
				Programs: []string{"/usr/lib/x86_64-linux-gnu/opera/opera"},
				Commands: []string{"opera"},
				Flatpak:  "com.opera.Opera",
				Snap:     "opera",
			},
			"darwin": {
				User:     []string{"~/Library/Application Support/Google/Chrome/NativeMessagingHosts"},
				System:   []string{"/Library/Google/Chrome/NativeMessagingHosts"},
				Profile:  []string{"~/Library/Application Support/com.operasoftware.Opera/Local State"},
				Programs: []string{"/Applications/Opera.app", "~/Applications/Opera.app"},
			},
			"windows": {
				Keys:     []string{chromeKey},
				Profile:  []string{`%APPDATA%\Opera Software\Opera Stable\Local State`},
				Programs: []string{`%LOCALAPPDATA%\Programs\Opera\opera.exe`},
			},
		},
	},
	{
		// Arc is on macOS (and Windows, which fillgate does not list until
		// its manifest lookup is known). It has no system-wide folder.
		Name: "arc", Title: "Arc", Family: manifest.Chromium, Page: "arc://extensions",
		OS: map[string]Places{
			"darwin": {
				User:     []string{"~/Library/Application Support/Arc/User Data/NativeMessagingHosts"},
				Profile:  []string{"~/Library/Application Support/Arc/User Data/Local State"},
				Programs: []string{"/Applications/Arc.app", "~/Applications/Arc.app"},
			},
		},
	},
	{
		Name: "firefox", Title: "Firefox", Family: manifest.Firefox, Page: "about:debugging#/runtime/this-firefox",
		OS: map[string]Places{
			"linux": {
				User:           []string{"~/.mozilla/native-messaging-hosts"},
				System:         []string{"/usr/lib/mozilla/native-messaging-hosts"},
				SystemIfParent: []string{"/usr/lib64/mozilla/native-messaging-hosts"},
				Profile:        []string{"~/.mozilla/firefox/profiles.ini", "$XDG_CONFIG_HOME/mozilla/firefox/profiles.ini"},
				Programs:       []string{"/usr/lib/firefox/firefox", "/usr/lib/firefox-esr/firefox-esr"},
				Commands:       []string{"firefox", "firefox-esr"},
				Flatpak:        "org.mozilla.firefox",
				Snap:           "firefox",
			},
			"darwin": {
				User:     []string{"~/Library/Application Support/Mozilla/NativeMessagingHosts"},
				System:   []string{"/Library/Application Support/Mozilla/NativeMessagingHosts"},
				Profile:  []string{"~/Library/Application Support/Firefox/profiles.ini"},
				Programs: []string{"/Applications/Firefox.app", "~/Applications/Firefox.app"},
			},
			"windows": {
				Keys:     []string{mozillaKey},
				Profile:  []string{`%APPDATA%\Mozilla\Firefox\profiles.ini`},
				Programs: []string{`%ProgramFiles%\Mozilla Firefox\firefox.exe`, `%ProgramFiles(x86)%\Mozilla Firefox\firefox.exe`},
			},
		},
	},
	{
		Name: "librewolf", Title: "LibreWolf", Family: manifest.Firefox, Page: "about:debugging#/runtime/this-firefox",
		OS: map[string]Places{
			"linux": {
				User:     []string{"~/.librewolf/native-messaging-hosts"},
				System:   []string{"/usr/lib/librewolf/native-messaging-hosts"},
				Profile:  []string{"~/.librewolf/profiles.ini"},
				Programs: []string{"/usr/share/librewolf/librewolf"},
				Commands: []string{"librewolf"},
				Flatpak:  "io.gitlab.librewolf-community",
			},
			"darwin": {
				User:     []string{"~/Library/Application Support/LibreWolf/NativeMessagingHosts"},
				System:   []string{"/Library/Application Support/LibreWolf/NativeMessagingHosts"},
				Programs: []string{"/Applications/LibreWolf.app", "~/Applications/LibreWolf.app"},
			},
			"windows": {
				Keys:     []string{mozillaKey},
				Profile:  []string{`%APPDATA%\librewolf\profiles.ini`},
				Programs: []string{`%ProgramFiles%\LibreWolf\librewolf.exe`},
			},
		},
	},
	{
		Name: "waterfox", Title: "Waterfox", Family: manifest.Firefox, Page: "about:debugging#/runtime/this-firefox",
		OS: map[string]Places{
			"linux": {
				User:     []string{"~/.waterfox/native-messaging-hosts"},
				System:   []string{"/usr/lib/waterfox/native-messaging-hosts"},
				Profile:  []string{"~/.waterfox/profiles.ini"},
				Programs: []string{"/usr/lib/waterfox/waterfox"},
				Commands: []string{"waterfox"},
				Flatpak:  "net.waterfox.waterfox",
			},
			"darwin": {
				User:     []string{"~/Library/Application Support/Mozilla/NativeMessagingHosts"},
				System:   []string{"/Library/Application Support/Mozilla/NativeMessagingHosts"},
				Programs: []string{"/Applications/Waterfox.app", "~/Applications/Waterfox.app"},
			},
			"windows": {
				Keys:     []string{mozillaKey},
				Profile:  []string{`%APPDATA%\Waterfox\profiles.ini`},
				Programs: []string{`%ProgramFiles%\Waterfox\waterfox.exe`},
			},
		},
	},
}

// aliases are other names --browser accepts.
var aliases = map[string]string{
	"google-chrome":          "chrome",
	"chrome-unstable":        "chrome-dev",
	"google-chrome-unstable": "chrome-dev",
	"microsoft-edge":         "edge",
	"firefox-esr":            "firefox",
}

// Names lists the names --browser takes, in the table's order (aliases
// left out).
func Names() []string {
	var out []string
	for _, b := range browsers {
		out = append(out, b.Name)
	}
	return out
}

// Table returns every browser fillgate knows, in the order reports list
// them.
func Table() []Browser { return slices.Clone(browsers) }

// Lookup returns the browser called name (or one of its aliases), or nil.
func Lookup(name string) *Browser {
	if a, ok := aliases[name]; ok {
		name = a
	}
	for i := range browsers {
		if browsers[i].Name == name {
			b := browsers[i]
			return &b
		}
	}
	return nil
}

// Column is the column of the table for goos: BSDs and other Unixes read
// the Linux folders.
func Column(goos string) string {
	switch goos {
	case "darwin", "windows":
		return goos
	}
	return "linux"
}
