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

	offers Offers // what the page offers besides typing
	picked string // the account radio checked when the page loaded

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
	if err := f.readOffers(doc, box); err != nil {
		return nil, err
	}
	if err := f.readCancelForm(doc, base); err != nil {
		return nil, err
	}
	return f, nil
}

// Offers is what a prompt page offers besides typing a value, as a person
// reads it off the page.
type Offers struct {
	// As is the account the page says the value is for, "" for none.
	As string
	// From is where the saved value the person may approve comes from
	// ("from pass: work/github"), "" when there is no Approve.
	From string
	// Accounts are the accounts the person may pick, in page order.
	Accounts []string
	// Ask is the label of what the store needs typed before Approve, ""
	// for nothing.
	Ask string
	// Remember reports a "Remember" box for a typed value.
	Remember bool
}

// readOffers reads the saved-value section, the account choice, the
// store's field and the Remember box. Each control the script reads must
// be where it looks for it: inside the answer box, outside any form.
func (f *form) readOffers(doc, box *html.Node) error {
	inForm := func(n *html.Node) bool {
		return find(doc, func(fn *html.Node) bool { return fn.DataAtom == atom.Form && contains(fn, n) }) != nil
	}
	byID := func(id string) *html.Node { return find(box, func(n *html.Node) bool { return attr(n, "id") == id }) }
	if dd := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Dt && text(n) == "As" }); dd != nil {
		for n := dd.NextSibling; n != nil; n = n.NextSibling {
			if n.DataAtom == atom.Dd {
				if c := find(n, func(c *html.Node) bool { return c.DataAtom == atom.Code }); c != nil {
					f.offers.As = text(c)
				}
				break
			}
		}
	}
	approve := byID("approve")
	if from := byID("from"); from != nil {
		if approve == nil || approve.DataAtom != atom.Button {
			return errors.New("the prompt names a saved value but has no Approve button")
		}
		f.offers.From = text(from)
	} else if approve != nil {
		return errors.New("the prompt has an Approve button but names no saved value")
	}
	for n := range box.Descendants() {
		if n.DataAtom != atom.Input || attr(n, "name") != "account" {
			continue
		}
		if !strings.EqualFold(attr(n, "type"), "radio") || inForm(n) {
			return errors.New("an account choice is not a radio button outside any form")
		}
		f.offers.Accounts = append(f.offers.Accounts, attr(n, "value"))
		if hasAttr(n, "checked") {
			f.picked = attr(n, "value")
		}
	}
	if len(f.offers.Accounts) > 0 && (f.offers.From == "" || f.picked == "") {
		return errors.New("the prompt offers accounts without a saved value, or with none checked")
	}
	if ask := byID("ask"); ask != nil {
		if f.offers.From == "" || ask.DataAtom != atom.Input || inForm(ask) || !strings.EqualFold(attr(ask, "type"), "text") {
			return errors.New("the store's field is not a text field next to a saved value, outside any form")
		}
		label := find(box, func(n *html.Node) bool { return n.DataAtom == atom.Label && attr(n, "for") == "ask" })
		if label == nil {
			return errors.New("the store's field has no label")
		}
		f.offers.Ask = text(label)
	}
	if rm := byID("remember"); rm != nil {
		if !strings.EqualFold(attr(rm, "type"), "checkbox") || inForm(rm) {
			return errors.New("the Remember box is not a checkbox outside any form")
		}
		f.offers.Remember = true
	}
	return nil
}

// text is the text inside n, spaces collapsed.
func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
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
