package doctor

import (
	"fmt"
	"strings"

	"github.com/fillgate/fillgate/internal/policy"
)

// promptFix is how to have prompts leave a browser that can be driven.
const promptFix = `set prompt = "auto" in fillgate's policy file (or remove the line: auto is the default), so that prompts move to a native dialog on your desktop while a program can drive the browser`

// doctorDrive is the check of where prompts for h's browser open (where
// names the browser): in the browser, or, while a program can drive it, in
// a native dialog on the desktop. It says what drives it. A host that does
// not say, or whose extension is not connected, gets none.
func doctorDrive(h HostStatus, where string) (Check, bool) {
	if h.Drive == nil || !h.Connected {
		return Check{}, false
	}
	name := fmt.Sprintf("prompts %d", h.PID)
	driven := "no program can drive " + where + " now"
	if h.Drive.Driven {
		driven = where + " can be driven by a program"
		if len(h.Drive.Reasons) > 0 {
			driven += " (" + strings.Join(h.Drive.Reasons, "; ") + ")"
		}
	}
	switch mode := h.Prompt; {
	case mode == policy.PromptBrowser && h.Drive.Driven:
		return Check{Name: name, Level: Warn, Fix: promptFix,
			Detail: driven + `, and prompt = "browser" keeps prompts for it in the browser, where that program could read or answer them`}, true
	case mode == policy.PromptBrowser:
		return Check{Name: name, Level: Warn, Fix: promptFix,
			Detail: driven + `; prompts for it open in the browser, and with prompt = "browser" they stay there even while a program drives it, where that program could read or answer them`}, true
	case mode == policy.PromptNative:
		return Check{Name: name, Level: OK, Detail: driven + `; prompts for it open as a native dialog on your desktop, outside the browser (prompt = "native")`}, true
	case h.Drive.Driven:
		return Check{Name: name, Level: OK, Detail: driven + "; prompts for it open as a native dialog on your desktop, outside the browser"}, true
	}
	return Check{Name: name, Level: OK, Detail: driven + "; prompts for it open in the browser (they move to a native dialog on your desktop while a program can drive it)"}, true
}
