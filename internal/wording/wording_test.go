package wording

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                            "0 s",
		-time.Second:                 "0 s",
		45 * time.Second:             "45 s",
		1500 * time.Millisecond:      "2 s",
		2 * time.Minute:              "2 min",
		90 * time.Second:             "1 min 30 s",
		61*time.Minute + time.Second: "61 min 1 s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestCapitalize(t *testing.T) {
	for in, want := range map[string]string{
		"":              "",
		"the password":  "The password",
		"émail address": "Émail address",
		"Already":       "Already",
		"1 code":        "1 code",
	} {
		if got := Capitalize(in); got != want {
			t.Errorf("Capitalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFieldNoun(t *testing.T) {
	for kind, want := range map[string]string{
		"":              "password",
		"password":      "password",
		"one-time-code": "one-time code",
		"passkey":       "passkey",
	} {
		if got := FieldNoun(kind); got != want {
			t.Errorf("FieldNoun(%q) = %q, want %q", kind, got, want)
		}
	}
}
