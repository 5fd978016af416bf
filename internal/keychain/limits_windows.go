package keychain

// fits checks a value of n bytes for user against this OS's keyring.
func fits(_ string, n int) error { return windowsFits(n) }
