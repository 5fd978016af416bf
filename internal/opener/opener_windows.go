package opener

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// osLauncher is the shell's URL handler (what `start` uses), run as
// rundll32.exe from the system directory Windows reports (not from
// %SystemRoot%, which the caller's environment could change), without
// going through cmd.exe and its quoting rules. It gets the page as a
// file: URL, which needs no quoting either.
func osLauncher(environ []string) launcher {
	sys, err := windows.GetSystemDirectory()
	if err != nil {
		sys = ""
	}
	path := sys
	if sys != "" {
		path = sys + ";" + filepath.Dir(sys)
	}
	return launcher{
		dirs: []string{sys},
		name: "rundll32.exe",
		args: func(p string) []string {
			u := url.URL{Scheme: "file", Path: "/" + filepath.ToSlash(p)}
			return []string{"url.dll,FileProtocolHandler", u.String()}
		},
		env: minimalEnv(environ, keepDesktopVar, path),
	}
}

// keepDesktopVar reports whether the shell and the browser it starts need
// variable name.
func keepDesktopVar(name string) bool {
	switch strings.ToUpper(name) {
	case "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "OS",
		"USERPROFILE", "USERNAME", "USERDOMAIN", "HOMEDRIVE", "HOMEPATH",
		"APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "ALLUSERSPROFILE", "PUBLIC",
		"PROGRAMFILES", "PROGRAMFILES(X86)", "PROGRAMW6432",
		"COMMONPROGRAMFILES", "COMMONPROGRAMFILES(X86)", "COMMONPROGRAMW6432",
		"TEMP", "TMP", "COMPUTERNAME", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE":
		return true
	}
	return false
}

// runnable reports whether fi may be run as the opener. The system
// directory's ACLs already keep other users out.
func runnable(os.FileInfo) (bool, error) { return true, nil }
