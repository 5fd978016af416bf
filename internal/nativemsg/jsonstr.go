package nativemsg

import (
	"errors"
	"unicode/utf8"
)

// ErrNotUTF8 is returned for a value that is not valid UTF-8. Such a value
// cannot travel as a JSON string without being altered, so it is refused
// rather than silently changed.
var ErrNotUTF8 = errors.New("nativemsg: value is not valid UTF-8")

const hexDigits = "0123456789abcdef"

// JSONStringLen returns how many bytes AppendJSONString will append for v
// (the quotes included), so a caller can size its buffer once. It returns
// ErrNotUTF8 for invalid UTF-8.
func JSONStringLen(v []byte) (int, error) {
	n := 2
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(v[i:])
		if r == utf8.RuneError && size == 1 {
			return 0, ErrNotUTF8
		}
		if r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += size
		}
		i += size
	}
	return n, nil
}

// AppendJSONString appends v to dst as a quoted JSON string, without making
// a Go string of it: the only copy is the one in dst. Control characters,
// quotes, backslashes and U+2028/U+2029 are escaped.
//
// If dst lacks room, AppendJSONString grows it once, before any of v is
// copied, so no abandoned buffer holds part of v. The caller must size dst
// for whatever it appends afterwards too (see JSONStringLen): a later append
// that reallocates would leave an unzeroed copy behind. On ErrNotUTF8 dst
// is returned unchanged.
func AppendJSONString(dst, v []byte) ([]byte, error) {
	need, err := JSONStringLen(v)
	if err != nil {
		return dst, err
	}
	if cap(dst)-len(dst) < need {
		grown := make([]byte, len(dst), len(dst)+need)
		copy(grown, dst)
		dst = grown
	}
	dst = append(dst, '"')
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(v[i:])
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		} else {
			dst = append(dst, v[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"'), nil
}
