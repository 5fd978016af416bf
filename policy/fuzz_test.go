package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	f.Add(Example())
	f.Add([]byte(rulesText))
	f.Add([]byte("prompt_budget = 90s\nrate_limit = 6/1m\ncdp_url = http://127.0.0.1:9222\n"))
	f.Add([]byte("cdp_allow_hosts = a.lan, ::2\ncdp_url = ws://a.lan:1/x\n[service a.test]\nagents = /a, /b\n"))
	f.Add([]byte("[service com]\nfields = pin\nvia = x\n\xff\n= 1\n[x\n"))
	f.Add([]byte("\ufeffvia = auto # c\r\n[ service  GitHub.com ]\r\nframe_ancestors = https://p.test\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("f", data)
		if err != nil {
			var pe *ParseError
			if p != nil || !errors.As(err, &pe) || len(pe.Problems) == 0 {
				t.Fatalf("Parse = %v, %v; want nil and a *ParseError with problems", p, err)
			}
			lines := strings.Count(string(data), "\n") + 1
			for _, pr := range pe.Problems {
				if pr.File != "f" || pr.Line < 1 || pr.Line > lines || pr.Message == "" {
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
