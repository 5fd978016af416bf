//go:build !windows

package storecmd

import "io/fs"

// exeSuffixes are the file name endings a program may have.
func exeSuffixes(func(string) string) []string { return []string{""} }

// executableMode reports whether a file's mode lets someone run it.
func executableMode(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o111 != 0 }
