package fakehuman

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// field is a named control and its value (hidden inputs, buttons). These
// are never secrets.
type field struct {
	name, value string
}

// form is the one form of a prompt page as a browser sees it.
type form struct {
	action         *url.URL
	hidden         []field // hidden inputs, in tree order
	secret         string  // the name of the password input
	secretRequired bool
	submit         field // the default button: the first submit button
	cancel         field // the first submit button marked formnovalidate
	hasCancel      bool
}

// parseForm finds the page's form. A page without a form gives nil; a
// form the fake human could not answer the way a browser would (not POST,
// no password input or more than one, no submit button) is an error.
func parseForm(page []byte, base *url.URL) (*form, error) {
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		return nil, fmt.Errorf("parse html: %w", err)
	}
	fn := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Form })
	if fn == nil {
		return nil, nil
	}
	if m := strings.ToLower(attr(fn, "method")); m != "post" {
		return nil, fmt.Errorf("form method %q: want post", m)
	}
	action, err := base.Parse(attr(fn, "action"))
	if err != nil {
		return nil, fmt.Errorf("form action: %w", err)
	}
	action.Fragment = ""
	f := &form{action: action}
	secrets, buttons := 0, 0
	for n := range fn.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		name := attr(n, "name")
		switch {
		case n.DataAtom == atom.Input && strings.EqualFold(attr(n, "type"), "hidden"):
			f.hidden = append(f.hidden, field{name, attr(n, "value")})
		case n.DataAtom == atom.Input && strings.EqualFold(attr(n, "type"), "password"):
			secrets++
			f.secret, f.secretRequired = name, hasAttr(n, "required")
		case isSubmitButton(n):
			b := field{name, attr(n, "value")}
			if buttons == 0 {
				f.submit = b
			}
			buttons++
			if hasAttr(n, "formnovalidate") && !f.hasCancel {
				f.cancel, f.hasCancel = b, true
			}
		}
	}
	switch {
	case secrets != 1:
		return nil, fmt.Errorf("the form has %d password inputs: want 1", secrets)
	case f.secret == "":
		return nil, errors.New("the password input has no name")
	case buttons == 0:
		return nil, errors.New("the form has no submit button")
	}
	return f, nil
}

// isSubmitButton reports whether n submits its form: a <button> of type
// submit (the default) or an <input type=submit>.
func isSubmitButton(n *html.Node) bool {
	t := strings.ToLower(attr(n, "type"))
	switch n.DataAtom {
	case atom.Button:
		return t == "" || t == "submit"
	case atom.Input:
		return t == "submit"
	}
	return false
}

// encode builds the body a browser sends when submitter is pressed with
// typed in the password field: every named hidden input, the password
// input, then the submitter, in application/x-www-form-urlencoded. The
// caller zeroes the result.
func (f *form) encode(typed []byte, submitter field) []byte {
	n := 0
	for _, h := range f.hidden {
		n += 3*(len(h.name)+len(h.value)) + 2
	}
	n += 3*(len(f.secret)+len(typed)+len(submitter.name)+len(submitter.value)) + 4
	out := make([]byte, 0, n) // big enough that appends never copy the value
	add := func(name string, value []byte) {
		if len(out) > 0 {
			out = append(out, '&')
		}
		out = appendEncoded(out, []byte(name))
		out = append(out, '=')
		out = appendEncoded(out, value)
	}
	for _, h := range f.hidden {
		if h.name != "" {
			add(h.name, []byte(h.value))
		}
	}
	add(f.secret, typed)
	if submitter.name != "" {
		add(submitter.name, []byte(submitter.value))
	}
	return out
}

// appendEncoded appends b encoded as the form-urlencoded serializer of the
// URL standard does: ASCII letters, digits and *-._ as they are, space as
// '+', every other byte as %XX.
func appendEncoded(out, b []byte) []byte {
	const hex = "0123456789ABCDEF"
	for _, c := range b {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '*', c == '-', c == '.', c == '_':
			out = append(out, c)
		case c == ' ':
			out = append(out, '+')
		default:
			out = append(out, '%', hex[c>>4], hex[c&15])
		}
	}
	return out
}

// find is the first node under n, in tree order, for which match holds.
func find(n *html.Node, match func(*html.Node) bool) *html.Node {
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && match(d) {
			return d
		}
	}
	return nil
}

// attr is n's attribute key, or "".
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// hasAttr reports whether n has attribute key.
func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}
