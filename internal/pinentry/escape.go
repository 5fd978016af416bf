package pinentry

// AppendEscaped appends s to dst, percent-escaped for an Assuan line: '%',
// CR, LF, every other control character (below 0x20, and DEL) and a
// leading space (which Assuan would take as a separator) become %XX. Other
// bytes, UTF-8 included, go as they are.
func AppendEscaped(dst []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' || c < 0x20 || c == 0x7f || (c == ' ' && i == 0) {
			dst = append(dst, '%', hex[c>>4], hex[c&0x0f])
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// Escape returns s percent-escaped as AppendEscaped does.
func Escape(s string) string {
	return string(AppendEscaped(nil, s))
}

// Unescape decodes the %XX escapes of b in place and returns the decoded
// prefix of b. A '%' that is not followed by two hex digits is kept as it
// is. The bytes of b past the returned slice are zeroed, so that nothing
// decoded twice lingers there.
func Unescape(b []byte) []byte {
	j := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '%' && i+2 < len(b) && isHex(b[i+1]) && isHex(b[i+2]) {
			c = unhex(b[i+1])<<4 | unhex(b[i+2])
			i += 2
		}
		b[j] = c
		j++
	}
	clear(b[j:])
	return b[:j]
}

// isHex reports whether c is a hex digit.
func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// unhex is the value of the hex digit c.
func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
