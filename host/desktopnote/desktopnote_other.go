//go:build !unix || darwin

package desktopnote

import "github.com/fillgate/fillgate/host/fill"

func newNotifier() fill.Notifier { return nil }
