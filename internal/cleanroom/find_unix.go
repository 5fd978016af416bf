//go:build unix && !darwin

package cleanroom

// places are the usual install places of the Chromium-family browsers.
func places() []string {
	return []string{"/usr/bin/chromium", "/usr/lib/chromium/chromium", "/snap/bin/chromium", "/opt/google/chrome/chrome",
		"/opt/brave.com/brave/brave", "/opt/microsoft/msedge/msedge", "/opt/vivaldi/vivaldi"}
}
