package pinentry

// Zeroed reports whether c's line buffer holds nothing at all, for tests
// that check no secret lingers there.
func Zeroed(c *Conn) bool {
	return c.n == 0 && Clean(c)
}

// Clean reports whether c's line buffer holds nothing besides the input
// not yet handled (lines pinentry sent ahead of the next command).
func Clean(c *Conn) bool {
	for _, b := range c.buf[c.n:] {
		if b != 0 {
			return false
		}
	}
	return true
}
