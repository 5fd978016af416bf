// Package harden makes the process that holds a secret value harder to
// read from outside: on Linux it is marked non-dumpable, so processes of
// the same user can no longer ptrace it or read /proc/<pid>/mem, and it
// writes no core dump.
package harden

// Process hardens the calling process. It is best effort: an error means
// the protection is not in place, and callers log it and go on.
func Process() error { return process() }
