//go:build !linux && !darwin && !windows

package procinfo

import (
	"errors"
	"fmt"
)

func get(pid int) (Process, error) {
	return Process{}, fmt.Errorf("describing processes on this OS: %w", errors.ErrUnsupported)
}

func args(int) ([]string, error) {
	return nil, fmt.Errorf("reading another process's command line on this OS: %w", errors.ErrUnsupported)
}
