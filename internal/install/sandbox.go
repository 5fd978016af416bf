package install

import (
	"fmt"

	"github.com/fillgate/fillgate/internal/browsertable"
	"github.com/fillgate/fillgate/internal/manifest"
)

// sandboxNote says what works for a browser installed as a Flatpak or
// Snap. A host manifest inside the sandbox could only name a path inside
// it, which cannot reach fillgate's binary, so fillgate never writes one
// there. What does work:
//
//   - Firefox as a Snap asks the WebExtensions portal of
//     xdg-desktop-portal (Ubuntu 22.04 and later) to start the host; the
//     portal reads the host's ~/.mozilla/native-messaging-hosts and asks
//     the user once
//     (firefox-source-docs.mozilla.org/toolkit/components/extensions/webextensions/native-messaging-portal-design.html).
//   - Firefox 157 and later as a Flatpak can use xdg-native-messaging-proxy
//     (github.com/flatpak/xdg-native-messaging-proxy; bugzilla 1955255),
//     off by default behind widget.use-xdg-desktop-portal.native-messaging-proxy.
//   - Chromium-family browsers use neither: the Chromium Snap does not
//     support native messaging, and no Chromium Flatpak uses the proxy
//     (flathub/com.microsoft.Edge issue 819, keepassxreboot/keepassxc
//     issue 12741).
func sandboxNote(b *browsertable.Browser, sb browsertable.Sandboxed) Sandboxed {
	n := Sandboxed{Browser: b.Name, Kind: sb.Kind, ID: sb.ID, Path: sb.Evidence}
	switch {
	case b.Family == manifest.Firefox && sb.Kind == "snap":
		n.Works = true
		n.Detail = fmt.Sprintf("%s is a Snap: it starts fillgate through the WebExtensions portal of xdg-desktop-portal (Ubuntu 22.04 and later), "+
			"which reads the manifest fillgate writes to ~/.mozilla/native-messaging-hosts. The first time, %s asks you to allow it. "+
			"The host then runs outside the sandbox, with the portal's environment.", b.Title, b.Title)
	case b.Family == manifest.Firefox:
		n.Works = true
		n.Detail = fmt.Sprintf("%s is a Flatpak (%s): it can reach fillgate only through xdg-native-messaging-proxy, with a Firefox 157 or later base. "+
			"Install xdg-native-messaging-proxy, run `systemctl --user enable --now xdg-native-messaging-proxy.service` and "+
			"`flatpak override --user --talk-name=org.freedesktop.NativeMessagingProxy %s`, "+
			"and set widget.use-xdg-desktop-portal.native-messaging-proxy to 1 in about:config. "+
			"The proxy reads Firefox's folder, ~/.mozilla/native-messaging-hosts (`fillgate install --browser firefox` writes it). "+
			"Without the proxy, use a %s installed outside Flatpak.", b.Title, sb.ID, sb.ID, b.Title)
		n.Fix = fmt.Sprintf("install xdg-native-messaging-proxy; systemctl --user enable --now xdg-native-messaging-proxy.service; "+
			"flatpak override --user --talk-name=org.freedesktop.NativeMessagingProxy %s; "+
			"in about:config set widget.use-xdg-desktop-portal.native-messaging-proxy to 1", sb.ID)
	case sb.Kind == "snap":
		n.Fix = "install " + b.Title + " from its vendor's .deb or .rpm, outside the Snap"
		n.Detail = fmt.Sprintf("%s is a Snap: its confinement does not let it start programs outside the sandbox, so no host manifest can work and fillgate writes none for it. "+
			"Install %s from its vendor's .deb or .rpm instead, or let fillgate use its CDP fallback.", b.Title, b.Title)
	default:
		n.Fix = "install " + b.Title + " from its vendor's .deb or .rpm, outside Flatpak"
		n.Detail = fmt.Sprintf("%s is a Flatpak (%s): the sandbox cannot start fillgate, and Chromium-based browsers do not use xdg-native-messaging-proxy yet, "+
			"so no host manifest can work and fillgate writes none inside it. Install %s from its vendor's .deb or .rpm instead, or let fillgate use its CDP fallback.",
			b.Title, sb.ID, b.Title)
	}
	return n
}
