//go:build !windows

package install

// defaultRegistry is nil off Windows: there is no registry to write, and a
// caller faking GOOS "windows" must pass its own.
func defaultRegistry() Registry { return nil }
