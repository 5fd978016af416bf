package cleanroom

import (
	"os"
	"path/filepath"
)

// places are the usual install places of the Chromium-family browsers.
func places() []string {
	var out []string
	for _, base := range []string{os.Getenv("ProgramFiles"), os.Getenv("ProgramFiles(x86)"), os.Getenv("LOCALAPPDATA")} {
		if base == "" {
			continue
		}
		out = append(out,
			filepath.Join(base, `Google\Chrome\Application\chrome.exe`),
			filepath.Join(base, `Microsoft\Edge\Application\msedge.exe`),
			filepath.Join(base, `BraveSoftware\Brave-Browser\Application\brave.exe`),
			filepath.Join(base, `Chromium\Application\chrome.exe`),
			filepath.Join(base, `Vivaldi\Application\vivaldi.exe`))
	}
	return out
}
