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

// FieldNoun names the kind of field a value is for, as a noun standing
// alone in a sentence: "password", "one-time code", "passkey" (no kind:
// a password). Before "field" the kind's own word reads as it is ("the
// focused one-time-code field").
func FieldNoun(kind string) string {
	switch kind {
	case "":
		return "password"
	case "one-time-code":
		return "one-time code"
	}
	return kind
}

// Capitalize returns s with its first letter in upper case.
func Capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
