package main

import (
	"context"
	"fmt"
	"io"
)

// app is what every command's Run gets.
type app struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	env    func(string) string
}

// exitCode is an error that only carries the process exit code; the
// command has already said what happened.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit %d", int(e)) }

// usageError is a malformed command line found after parsing.
type usageError struct{ error }
