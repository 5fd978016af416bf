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
