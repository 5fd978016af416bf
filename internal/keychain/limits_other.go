//go:build !linux && !darwin && !windows

package keychain

// fits checks a value of n bytes for user: the Secret Service, as on
// Linux.
func fits(_ string, n int) error { return linuxFits(n) }
