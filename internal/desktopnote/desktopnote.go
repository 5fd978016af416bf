// Package desktopnote shows a notice through the desktop's own
// notifications, for the CDP path, where no extension runs that could show
// a browser notification: a fill that runs with no prompt (a lease, or
// approval = none) happens only after the desktop took its notice.
//
// On Linux (and the BSDs) that is the freedesktop.org notification service
// (org.freedesktop.Notifications) on the session bus: the GNOME and KDE
// shells, dunst, mako and the like. On macOS and Windows fillgate has no
// notifier it can vouch for yet, so New returns nil and every fill on the
// CDP path is asked in the prompt.
package desktopnote

import "github.com/fillgate/fillgate/internal/fill"

// appName is the application the desktop shows the notices under.
const appName = "fillgate"

// New returns the desktop's notifier, or nil where there is none.
func New() fill.Notifier { return newNotifier() }
