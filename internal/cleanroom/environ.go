package cleanroom

import (
	"os"
	"runtime"
	"strings"
)

// keep are the variables of fillgate's environment a room's browser is
// started with: what it needs to find the user's home (fonts, trusted
// certificates), temporary files, the locale and time zone. Nothing that
// loads code into it (LD_PRELOAD, DYLD_*) or changes its flags
// (CHROME_*), and no display: it is headless.
var keep = map[string]bool{
	"HOME": true, "USER": true, "LOGNAME": true, "TMPDIR": true, "TZ": true, "LANG": true, "LANGUAGE": true,
	"XDG_RUNTIME_DIR": true, "XDG_CACHE_HOME": true, "XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true, "FONTCONFIG_FILE": true,
	// Windows
	"SYSTEMROOT": true, "WINDIR": true, "SYSTEMDRIVE": true, "TEMP": true, "TMP": true, "USERPROFILE": true,
	"LOCALAPPDATA": true, "APPDATA": true, "PROGRAMDATA": true, "PROGRAMFILES": true, "COMSPEC": true,
}

// environ is the room's browser's whole environment.
func environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		up := k
		if runtime.GOOS == "windows" {
			up = strings.ToUpper(k)
		}
		if keep[up] || strings.HasPrefix(up, "LC_") {
			out = append(out, kv)
		}
	}
	path := "/usr/local/bin:/usr/bin:/bin"
	if runtime.GOOS == "windows" {
		path = os.Getenv("SystemRoot") + `\System32;` + os.Getenv("SystemRoot")
	}
	return append(out, "PATH="+path)
}
