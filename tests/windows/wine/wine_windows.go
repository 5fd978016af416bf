package wine

import (
	"sync"

	"golang.org/x/sys/windows"
)

// Running reports whether this process runs under Wine: Wine's ntdll
// exports wine_get_version, Windows' does not.
var Running = sync.OnceValue(func() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
})
