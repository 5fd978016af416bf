package keychain

// fits checks a value of n bytes for user against this OS's keyring.
func fits(user string, n int) error { return macFits(user, n) }
