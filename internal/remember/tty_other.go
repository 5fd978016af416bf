//go:build !linux && !darwin

package remember

import (
	"os"

	"golang.org/x/term"
)

// readHidden reads one line from the terminal f without echo (the
// console's own hidden input), after showing prompt.
func readHidden(f *os.File, prompt func(), _ int) ([]byte, error) {
	prompt()
	return term.ReadPassword(int(f.Fd()))
}
