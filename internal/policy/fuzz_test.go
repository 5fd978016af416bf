package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse: Parse either returns a policy that validates and formats back
// to itself, or a *ParseError whose every problem has a place in the file.
// Seeds: the examples (f.Add below) and testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add(Example())
	f.Add([]byte(uncommentSettings(string(Example()))))
	f.Add([]byte(rulesText))
	f.Add([]byte(everyKeyText))
	f.Add([]byte(settingsText))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("f", data)
		if err != nil {
			var pe *ParseError
			if p != nil || !errors.As(err, &pe) || len(pe.Problems) == 0 {
				t.Fatalf("Parse = %v, %v; want nil and a *ParseError with problems", p, err)
			}
			lines := strings.Count(string(data), "\n") + 1
			for _, pr := range pe.Problems {
				if pr.File != "f" || pr.Line < 1 || pr.Line > lines || pr.Column < 0 || pr.Message == "" {
					t.Fatalf("bad problem %+v in a %d-line file", pr, lines)
				}
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("a parsed policy does not validate: %v", err)
		}
		again, err := Parse("formatted", p.Format())
		if err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("Parse(Format(p)) = %+v, %v; want %+v", again, err, p)
		}
	})
}

// FuzzMigrate: a file the old reader accepts converts to TOML that says
// the same (Migrate checks that itself), and is refused as the old format.
func FuzzMigrate(f *testing.F) {
	f.Add([]byte("prompt_budget = 90s\nrate_limit = 6/1m\ncdp_url = http://127.0.0.1:9222\n"))
	f.Add([]byte("cdp_allow_hosts = a.lan, ::2\ncdp_url = ws://a.lan:1/x\n[service a.test]\nagents = /a, /b\n"))
	f.Add([]byte("\ufeffvia = auto # c\r\n[ service  GitHub.com ]\r\nframe_ancestors = https://p.test\r\n"))
	f.Add([]byte("[service a.test]\nagents = /opt/a\"b\\c, /x#y\nfields = otp # c\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		want, err := ParseLegacy("f", data)
		if err != nil {
			return
		}
		converted, err := Migrate("f", data)
		if err != nil {
			t.Fatalf("Migrate of a valid old file: %v", err)
		}
		got, err := Parse("converted", converted)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("Parse(Migrate) = %+v, %v; want %+v", got, err, want)
		}
		if _, err := Parse("f", data); err == nil && !reflect.DeepEqual(want, Default()) {
			t.Fatalf("an old-format file with settings parses as TOML")
		}
	})
}
