// Package wine tells a test whether it runs under Wine, where tests/windows
// runs the Windows build, so that a test that cannot run there skips and
// says why (docs/windows.md lists them).
package wine

// Skipper is the part of testing.TB Skip needs.
type Skipper interface {
	Helper()
	Skip(args ...any)
}

// Skip skips the test when it runs under Wine, saying why.
func Skip(t Skipper, why string) {
	t.Helper()
	if Running() {
		t.Skip("cannot run under Wine: " + why + " (docs/windows.md)")
	}
}
