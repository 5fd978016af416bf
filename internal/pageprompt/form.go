package pageprompt

import (
	"bytes"
	"errors"
)

// rawField is one field of a POST body, still percent-encoded. It is a
// slice of the body and dies with it.
type rawField struct {
	b  []byte
	ok bool // the field was present (possibly empty)
}

// form holds the fields of a prompt POST that the handler reads. Fields
// with other names are ignored.
type form struct {
	csrf, action, answer rawField
	value                rawField // only ever checked for presence: the page never sends it
}

// Names of the form's fields, as the page's template writes them.
const (
	fieldCSRF   = "csrf"
	fieldAction = "action"
	fieldAnswer = "answer" // the encrypted answer, base64url
	fieldValue  = "value"  // a plaintext value: refused unread
)

// Values of the action field. More actions fit in by name.
const (
	actionSubmit  = "submit"  // the encrypted answer of what was typed
	actionApprove = "approve" // the encrypted approval of the saved value
	actionCancel  = "cancel"
	actionWatch   = "watch" // the page's watch on the prompt's end
)

var (
	errDuplicateField = errors.New("a form field appears twice")
	errBadEscape      = errors.New("bad percent-encoding in the form")
)

// parseForm splits an application/x-www-form-urlencoded body into the
// fields the prompt reads, without copying or decoding anything. A field
// that appears twice is an error, so a body cannot smuggle a second CSRF
// token or answer past the first.
func parseForm(body []byte) (form, error) {
	var f form
	for len(body) > 0 {
		var pair []byte
		pair, body, _ = bytes.Cut(body, []byte("&"))
		if len(pair) == 0 {
			continue
		}
		name, val, _ := bytes.Cut(pair, []byte("="))
		var dst *rawField
		switch string(name) {
		case fieldCSRF:
			dst = &f.csrf
		case fieldValue:
			dst = &f.value
		case fieldAction:
			dst = &f.action
		case fieldAnswer:
			dst = &f.answer
		default:
			continue
		}
		if dst.ok {
			return form{}, errDuplicateField
		}
		*dst = rawField{b: val, ok: true}
	}
	return f, nil
}

// percentDecode decodes one form field ('+' is a space, %XX a byte) into
// a fresh slice that is never longer than raw, so it never grows and
// leaves no stale copy behind. On error the partial output is zeroed and
// the error says nothing about the content.
func percentDecode(raw []byte) ([]byte, error) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '+':
			out = append(out, ' ')
		case '%':
			if i+2 >= len(raw) {
				clear(out[:cap(out)])
				return nil, errBadEscape
			}
			hi, ok1 := unhex(raw[i+1])
			lo, ok2 := unhex(raw[i+2])
			if !ok1 || !ok2 {
				clear(out[:cap(out)])
				return nil, errBadEscape
			}
			out = append(out, hi<<4|lo)
			i += 2
		default:
			out = append(out, c)
		}
	}
	return out, nil
}

// unhex is the value of one hex digit.
func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
