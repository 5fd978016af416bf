package extension

import (
	"io/fs"
	"regexp"
	"testing"
)

// TestDebuggerOnlyLists checks, in the source, that the extension uses the
// debugger permission for one thing only: chrome.debugger.getTargets(), to
// count the targets a debugger is attached to. No script may attach to a
// target, send a command or detach one, nor reach the API any other way
// (an alias, an index, a destructuring). The permission's name may also
// appear as the string "debugger" that otherDrivers looks for in other
// extensions' permissions.
func TestDebuggerOnlyLists(t *testing.T) {
	scripts, err := fs.Glob(Files, "*.js")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	mention := regexp.MustCompile(`\bdebugger\b`)
	listOnly := regexp.MustCompile(`^debugger\s*\??\.\s*getTargets\b`)
	permissionName := regexp.MustCompile(`\.includes\("$`)
	forbidden := regexp.MustCompile(`\b(attach|sendCommand|detach|onEvent|onDetach)\b`)
	uses := 0
	for _, name := range scripts {
		src, err := fs.ReadFile(Files, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range mention.FindAllIndex(src, -1) {
			if permissionName.Match(src[:at[0]]) && src[at[1]] == '"' {
				continue // the permission's name, looked for in other extensions'
			}
			if !listOnly.Match(src[at[0]:]) {
				t.Errorf("%s mentions the debugger API other than as debugger.getTargets: %q", name, line(src, at[0]))
				continue
			}
			uses++
		}
		for _, at := range forbidden.FindAllIndex(src, -1) {
			t.Errorf("%s names %q: the extension never attaches, commands or detaches a debugger", name, line(src, at[0]))
		}
	}
	if uses == 0 {
		t.Error("no script calls debugger.getTargets: the drivable reply cannot count attached debuggers")
	}
}

// line is the source line around offset i.
func line(src []byte, i int) string {
	start, end := i, i
	for start > 0 && src[start-1] != '\n' {
		start--
	}
	for end < len(src) && src[end] != '\n' {
		end++
	}
	return string(src[start:end])
}
