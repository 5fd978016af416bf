//go:build !unix || darwin

package desktopnote

import "github.com/fillgate/fillgate/internal/fill"

func newNotifier() fill.Notifier { return nil }
