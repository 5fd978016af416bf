package cdp

import (
	"context"
	"os/exec"
)

// systemOpen opens url with the shell's URL handler (what `start` uses),
// without going through cmd.exe and its quoting rules.
func systemOpen(ctx context.Context, url string) error {
	return startDetached(exec.Command("rundll32", "url.dll,FileProtocolHandler", url))
}
