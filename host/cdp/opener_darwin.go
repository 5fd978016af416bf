package cdp

import (
	"context"
	"os/exec"
)

// systemOpen opens url with open(1).
func systemOpen(ctx context.Context, url string) error {
	return startDetached(exec.Command("open", url))
}
