// Package wording is how fillgate words a few things for a person, in the
// native dialog and on the loopback page alike: a duration, a sentence's
// first letter.
package wording

import (
	"fmt"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// Duration renders d, rounded to the second (a negative d as 0), as
// "45 s", "2 min" or "1 min 30 s".
func Duration(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	m, s := int(d/time.Minute), int((d%time.Minute)/time.Second)
	switch {
	case m == 0:
		return strconv.Itoa(s) + " s"
	case s == 0:
		return strconv.Itoa(m) + " min"
	}
	return fmt.Sprintf("%d min %d s", m, s)
}

// Capitalize returns s with its first letter in upper case.
func Capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
