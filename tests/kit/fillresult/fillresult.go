// Package fillresult reads what `fillgate fill --json` leaves the agent
// that ran it: its one JSON result and its exit code.
package fillresult

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"

	"github.com/fillgate/fillgate/internal/fill"
)

// Decode reads stdout, which must hold one fill.Result and nothing else:
// no second value, no field the type does not know.
func Decode(stdout []byte) (fill.Result, error) {
	var res fill.Result
	dec := json.NewDecoder(bytes.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		return fill.Result{}, fmt.Errorf("decode the result: %w", err)
	}
	if dec.More() {
		return fill.Result{}, errors.New("more than one result")
	}
	return res, nil
}

// ExitCode is the exit code of a process whose Wait returned waitErr: 0
// for nil, the status of an *exec.ExitError, and waitErr itself for any
// other error (the process could not be run or waited for).
func ExitCode(waitErr error) (int, error) {
	var exit *exec.ExitError
	switch {
	case waitErr == nil:
		return 0, nil
	case errors.As(waitErr, &exit):
		return exit.ExitCode(), nil
	}
	return 0, waitErr
}
