//go:build !linux

package drivable

// processDir is process pid's working directory: "" here, where fillgate
// does not read it (a relative --user-data-dir is then not looked at).
func processDir(int) string { return "" }
