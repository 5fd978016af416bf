//go:build !darwin && !windows

package cdp

import (
	"context"
	"os/exec"
)

// systemOpen opens url with xdg-open, the freedesktop opener.
func systemOpen(ctx context.Context, url string) error {
	return startDetached(exec.Command("xdg-open", url))
}
