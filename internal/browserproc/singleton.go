package browserproc

import (
	"os"
	"path/filepath"
)

// RemoveSingleton removes what a Chromium-family browser keeps outside
// its profile while it runs: on Linux and macOS the profile's
// SingletonSocket is a link into a directory of its own in the system's
// temporary directory (org.chromium.Chromium.XXXXXX), which the browser
// removes only when it exits cleanly, never when it is killed. Each
// throw-away profile would otherwise leave one such directory behind.
//
// Call it when the browser has exited, before the profile is removed. It
// removes only files named SingletonSocket or SingletonCookie and then
// the directory if it is empty, so a link that points elsewhere removes
// nothing else.
func RemoveSingleton(profile string) {
	target, err := os.Readlink(filepath.Join(profile, "SingletonSocket"))
	if err != nil || !filepath.IsAbs(target) || filepath.Base(target) != "SingletonSocket" {
		return
	}
	dir := filepath.Dir(target)
	for _, name := range []string{"SingletonSocket", "SingletonCookie"} {
		_ = os.Remove(filepath.Join(dir, name))
	}
	_ = os.Remove(dir) // only if empty
}
