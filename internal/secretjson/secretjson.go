// Package secretjson writes a secret value into a JSON message without
// leaving a copy of it anywhere but the one buffer its caller wipes. It is
// the only encoder of a value into a message that leaves the process: the
// native messaging insert request (internal/bridge) and the argument of
// the CDP in-page insert (internal/cdp) are both built by Message.
//
// The value is never made into a Go string and never passed to
// encoding/json: the JSON string is written byte by byte into a buffer
// allocated once at its exact length, so no reallocation abandons a
// partial copy. Escaping follows RFC 8259 (quotation mark, reverse solidus
// and the control characters U+0000 to U+001F), plus U+2028 and U+2029,
// which JSON allows raw but JavaScript source before ES2019 does not.
// Invalid UTF-8 is refused rather than altered.
package secretjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrNotUTF8 is returned for a value that is not valid UTF-8. Such a value
// cannot travel as a JSON string without being altered, so it is refused.
// The error says nothing of the value.
var ErrNotUTF8 = errors.New("secretjson: value is not valid UTF-8")

// valueKey is the member that holds the value in every message.
const valueKey = `"value":`

// Message returns the JSON object that meta encodes to (with
// encoding/json), with one more member, "value", holding value as a JSON
// string, last. meta must encode to a JSON object without a "value"
// member, and must hold no secret.
//
// The message is allocated once, at its exact length, and value is copied
// into it only: the caller clears the message (clear(msg)) when it has
// been sent or refused. For a value that is not valid UTF-8, Message
// returns ErrNotUTF8 before it allocates anything. Message neither changes
// nor keeps value.
func Message(meta any, value []byte) ([]byte, error) {
	n, err := StringLen(value)
	if err != nil {
		return nil, err
	}
	head, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("secretjson: encode the metadata: %w", err)
	}
	if len(head) < 2 || head[0] != '{' || head[len(head)-1] != '}' {
		return nil, errors.New("secretjson: the metadata is not a JSON object")
	}
	head = head[:len(head)-1] // drop the closing brace
	sep := ","
	if len(head) == 1 {
		sep = "" // no member before the value
	}
	msg := make([]byte, 0, len(head)+len(sep)+len(valueKey)+n+1)
	msg = append(msg, head...)
	msg = append(msg, sep...)
	msg = append(msg, valueKey...)
	msg = appendValid(msg, value)
	return append(msg, '}'), nil
}

// StringLen returns how many bytes AppendString appends for v (the quotes
// included), so a caller can size its buffer once. It returns ErrNotUTF8
// for invalid UTF-8.
func StringLen(v []byte) (int, error) {
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

// AppendString appends v to dst as a quoted JSON string: the only copy it
// makes of v is the one in dst.
//
// If dst lacks room, AppendString grows it once, before any of v is
// copied, so no abandoned buffer holds part of v. The caller must size dst
// for whatever it appends afterwards too (see StringLen): a later append
// that reallocates would leave an uncleared copy behind. On ErrNotUTF8 dst
// is returned unchanged.
func AppendString(dst, v []byte) ([]byte, error) {
	need, err := StringLen(v)
	if err != nil {
		return dst, err
	}
	if cap(dst)-len(dst) < need {
		grown := make([]byte, len(dst), len(dst)+need)
		copy(grown, dst)
		dst = grown
	}
	return appendValid(dst, v), nil
}

const hexDigits = "0123456789abcdef"

// appendValid appends v, valid UTF-8, as a JSON string to dst, which has
// room for it (StringLen).
func appendValid(dst, v []byte) []byte {
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
	return append(dst, '"')
}
