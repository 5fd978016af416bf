package fakehuman

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// field is a named control and its value (hidden inputs, buttons). These
// are never secrets.
type field struct {
	name, value string
}

// form is a prompt page as its script sees it: the field the human types
// into (outside any form), the data the script encrypts to, and the
// Cancel form, which also works without the script.
type form struct {
	action         *url.URL      // where the script posts: the page's data-path
	path           string        // data-path as written: the encryption binds to it
	key            []byte        // the prompt's X25519 public key (data-key)
	closesIn       time.Duration // data-closes-in; negative for no limit
	secretRequired bool

	cancelAction *url.URL // the Cancel form's action
	hidden       []field  // the Cancel form's hidden inputs, in tree order
	cancel       field    // the Cancel form's submit button
}

// parseForm reads the prompt out of page. A page without one (a final
// page, a refusal) gives nil; a page that has one the fake human could not
// answer the way the page's script does is an error.
func parseForm(page []byte, base *url.URL) (*form, error) {
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		return nil, fmt.Errorf("parse html: %w", err)
	}
	box := find(doc, func(n *html.Node) bool { return attr(n, "id") == "answer" })
	if box == nil {
		return nil, nil
	}
	f := &form{path: attr(box, "data-path"), closesIn: -1}
	if f.path == "" || !strings.HasPrefix(f.path, "/") {
		return nil, errors.New("the prompt names no path to answer to")
	}
	if f.action, err = base.Parse(f.path); err != nil {
		return nil, fmt.Errorf("the prompt's path: %w", err)
	}
	key, err := base64.RawURLEncoding.DecodeString(attr(box, "data-key"))
	if err != nil || len(key) != 32 {
		return nil, errors.New("the prompt's key is not 32 bytes of base64url")
	}
	f.key = key
	if s := attr(box, "data-closes-in"); s != "" {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("the prompt's data-closes-in %q is not a number of milliseconds", s)
		}
		f.closesIn = time.Duration(ms) * time.Millisecond
	}
	secret := find(box, func(n *html.Node) bool { return n.DataAtom == atom.Input && attr(n, "id") == "value" })
	if secret == nil {
		return nil, errors.New("the prompt has no field to type into")
	}
	if t := strings.ToLower(attr(secret, "type")); t != "text" && t != "password" {
		return nil, fmt.Errorf("the prompt's field has type %q", t)
	}
	if find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Form && contains(n, secret) }) != nil {
		return nil, errors.New("the prompt's field is inside a form, where a browser would remember it")
	}
	f.secretRequired = hasAttr(secret, "required")
	if err := f.readCancelForm(doc, base); err != nil {
		return nil, err
	}
	return f, nil
}

// readCancelForm reads the form Cancel posts without the script.
func (f *form) readCancelForm(doc *html.Node, base *url.URL) error {
	fn := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Form })
	if fn == nil {
		return errors.New("the prompt has no Cancel form")
	}
	if m := strings.ToLower(attr(fn, "method")); m != "post" {
		return fmt.Errorf("the Cancel form's method is %q: want post", m)
	}
	action, err := base.Parse(attr(fn, "action"))
	if err != nil {
		return fmt.Errorf("the Cancel form's action: %w", err)
	}
	action.Fragment = ""
	f.cancelAction = action
	buttons := 0
	for n := range fn.Descendants() {
		switch {
		case n.Type != html.ElementNode:
		case n.DataAtom == atom.Input && strings.EqualFold(attr(n, "type"), "hidden"):
			f.hidden = append(f.hidden, field{attr(n, "name"), attr(n, "value")})
		case isSubmitButton(n):
			if buttons == 0 {
				f.cancel = field{attr(n, "name"), attr(n, "value")}
			}
			buttons++
		}
	}
	if buttons == 0 {
		return errors.New("the Cancel form has no submit button")
	}
	if f.csrf() == "" {
		return errors.New("the Cancel form holds no csrf token")
	}
	return nil
}

// csrf is the token the page's script sends with every post: the Cancel
// form's hidden csrf input.
func (f *form) csrf() string {
	for _, h := range f.hidden {
		if h.name == "csrf" {
			return h.value
		}
	}
	return ""
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

// encodeFields builds an application/x-www-form-urlencoded body of
// fields, in order, as the URL standard's serializer (and so both a form
// and URLSearchParams) does. The caller zeroes the result when it may
// hold a secret.
func encodeFields(fields ...field) []byte {
	var out []byte
	for _, f := range fields {
		if len(out) > 0 {
			out = append(out, '&')
		}
		out = appendEncoded(out, []byte(f.name))
		out = append(out, '=')
		out = appendEncoded(out, []byte(f.value))
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

// contains reports whether d is below n.
func contains(n, d *html.Node) bool {
	for p := d.Parent; p != nil; p = p.Parent {
		if p == n {
			return true
		}
	}
	return false
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
