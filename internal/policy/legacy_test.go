package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestLegacyEveryKey reads every key of the old format, and converts the
// file to TOML that says the same.
func TestLegacyEveryKey(t *testing.T) {
	text := "# every key\r\n" +
		"prompt_budget = 2m\r\n" +
		"no_response_cooldown=0s\n" +
		"rate_limit = 10 / 30s # ten per half minute\n" +
		"cdp_url = ws://DevBox.lan:9222/devtools/browser/abc\n" +
		"cdp_allow_hosts = DevBox.lan, 10.0.0.5,::2\n" +
		"\tprompt_opener = cdp-tab\n" +
		"via = extension\n" +
		"\n" +
		"[service GitHub.com]\n" +
		"frame_ancestors = https://portal.example.net, http://localhost:3000\n" +
		"agents = /usr/local/bin/claude, /opt/agent dir/../bin/agent\n" +
		"fields = otp, password\n" +
		"allow_via = extension, cdp\n" +
		"[ service   127.0.0.1 ]\n" +
		"fields = one-time-code\n"
	text = osText(text)
	got, err := ParseLegacy("every.policy", []byte(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := &Policy{
		PromptBudget:       2 * time.Minute,
		NoResponseCooldown: 0,
		RateLimit:          10,
		RateWindow:         30 * time.Second,
		CDPURL:             "ws://DevBox.lan:9222/devtools/browser/abc",
		CDPAllowHosts:      []string{"devbox.lan", "10.0.0.5", "::2"},
		PromptOpener:       OpenerCDPTab,
		Via:                ViaExtension,
		Prompt:             PromptAuto,
		Rules: []Rule{
			{
				Service:        "github.com",
				FrameAncestors: []string{"https://portal.example.net", "http://localhost:3000"},
				Agents:         []string{osPath("/usr/local/bin/claude"), osPath("/opt/bin/agent")},
				Fields:         []string{fieldOTP, fieldPassword},
				AllowVia:       []string{ViaExtension, ViaCDP},
			},
			{Service: "127.0.0.1", Fields: []string{fieldOTP}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Parse =\n%+v\nwant\n%+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	converted, err := Migrate("every.policy", []byte(text))
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	again, err := Parse("converted", converted)
	if err != nil || !reflect.DeepEqual(again, got) {
		t.Fatalf("Parse(Migrate()) = %+v, %v; want the same policy back", again, err)
	}
	for _, keep := range []string{"# every key\r\n", "rate_limit = \"10/30s\" # ten per half minute\n", "[service.\"GitHub.com\"]\n", "\tprompt_opener = \"cdp-tab\"\n", "prompt_budget = \"2m\"\r\n",
		"agents = [\"/usr/local/bin/claude\", \"/opt/agent dir/../bin/agent\"]\n", "[service.\"127.0.0.1\"]\n"} {
		if keep = osText(keep); !strings.Contains(string(converted), keep) {
			t.Errorf("the converted file does not hold %q:\n%s", keep, converted)
		}
	}
}

// TestLegacyErrors: the old-format reader (kept for migration) still
// finds every problem, by line.
func TestLegacyErrors(t *testing.T) {
	cases := []struct {
		name string
		text string
		want []string // "LINE: substring", one per problem, in order
	}{
		{"unknown key", "prompt_budget = 90s\npromt_budget = 90s\n", []string{"2: unknown key \"promt_budget\"; valid keys here: prompt_budget, no_response_cooldown"}},
		{"section key at top", "agents = /usr/bin/x\n", []string{"1: agents belongs in a [service HOST] section"}},
		{"top key in section", "[service github.com]\nvia = cdp\n", []string{"2: via is a top-level setting"}},
		{"unknown key in section", "[service github.com]\nallow = cdp\n", []string{"2: unknown key \"allow\"; valid keys here: frame_ancestors, agents, fields, allow_via"}},
		{"repeated key", "via = auto\n\nvia = cdp\n", []string{"3: via is already set on line 1"}},
		{"repeated key in section", "[service a.test]\nfields = password\nfields = otp\n", []string{"3: fields is already set on line 2"}},
		{"same key in two sections", "[service a.test]\nfields = password\n[service b.test]\nfields = otp\n", nil},
		{"repeated section", "[service a.test]\n\n[service A.test]\n", []string{"3: a second [service a.test] section; the first is on line 1"}},
		{"no equals", "prompt_budget 90s\n", []string{"1: expected `key = value`"}},
		{"no key", "= 90s\n", []string{"1: no key before ="}},
		{"no value", "prompt_budget =\n", []string{"1: prompt_budget has no value; write a duration from 5s to 15m"}},
		{"value only a comment", "via = # cdp\n", []string{"1: via has no value"}},
		{"unclosed section", "[service github.com\n", []string{"1: a section header must end with ]"}},
		{"unknown section", "[site github.com]\n", []string{"1: unknown section [site github.com]; the only section is [service HOST]"}},
		{"section without host", "[service]\n", []string{"1: unknown section"}},
		{"section public suffix", "[service co.uk]\n", []string{"1: service \"co.uk\": co.uk is a public suffix"}},
		{"section with scheme", "[service https://github.com]\n", []string{"1: service \"https://github.com\": write the host alone, without a scheme"}},
		{"keys under a refused section are checked", "[service com]\nfields = pin\nvia = cdp\n", []string{"1: public suffix", "2: fields: \"pin\" is not a field kind; use password or one-time-code", "3: via is a top-level setting"}},
		{"bad duration", "prompt_budget = 90\n", []string{"1: prompt_budget: \"90\" is not a duration; write it like 90s, 10m or 1h"}},
		{"budget too short", "prompt_budget = 1s\n", []string{"1: prompt_budget: 1s is out of range; use whole seconds from 5s to 15m"}},
		{"budget too long", "prompt_budget = 1h\n", []string{"1: prompt_budget: 1h is out of range"}},
		{"budget fraction", "prompt_budget = 1500ms\n", []string{"1: prompt_budget: 1.5s is out of range; use whole seconds"}},
		{"negative cooldown", "no_response_cooldown = -1m\n", []string{"1: no_response_cooldown: \"-1m\" is not a duration"}},
		{"cooldown too long", "no_response_cooldown = 25h\n", []string{"1: no_response_cooldown: 25h is out of range; use whole seconds from 0s (off) to 24h"}},
		{"rate without window", "rate_limit = 6\n", []string{"1: rate_limit: \"6\" is not a rate; write requests/window, like 6/1m"}},
		{"rate zero", "rate_limit = 0/1m\n", []string{"1: rate_limit: 0 requests is out of range; use 1 to 1000"}},
		{"rate huge", "rate_limit = 1001/1m\n", []string{"1: rate_limit: 1001 requests is out of range"}},
		{"rate bad window", "rate_limit = 6/soon\n", []string{"1: rate_limit: \"6/soon\": the window \"soon\" is not a duration"}},
		{"rate zero window", "rate_limit = 6/0s\n", []string{"1: rate_limit: a window of 0s is out of range"}},
		{"rate not a number", "rate_limit = six/1m\n", []string{"1: rate_limit: \"six/1m\" is not a rate"}},
		{"cdp not loopback", "cdp_url = http://devbox.lan:9222\n", []string{"1: cdp_url: \"http://devbox.lan:9222\" is not on a loopback host; list devbox.lan in cdp_allow_hosts"}},
		{"cdp not loopback, listed later", "cdp_url = http://devbox.lan:9222\ncdp_allow_hosts = devbox.lan\n", nil},
		{"cdp not loopback, other listed", "cdp_allow_hosts = devbox2.lan\n\ncdp_url = http://devbox.lan:9222\n", []string{"3: cdp_url: \"http://devbox.lan:9222\" is not on a loopback host"}},
		{"cdp loopback", "cdp_url = http://[::1]:9222\n", nil},
		{"cdp localhost", "cdp_url = ws://localhost:9222/devtools/browser/x\n", nil},
		{"cdp scheme", "cdp_url = ftp://127.0.0.1:9222\n", []string{"1: cdp_url: \"ftp://127.0.0.1:9222\": use an http://, https://, ws:// or wss:// URL"}},
		{"cdp no scheme", "cdp_url = 127.0.0.1:9222\n", []string{"1: cdp_url:"}},
		{"cdp user info", "cdp_url = http://u:p@127.0.0.1:9222\n", []string{"1: cdp_url: \"http://u:p@127.0.0.1:9222\": leave out user info, query and fragment"}},
		{"cdp query", "cdp_url = http://127.0.0.1:9222/?x=1\n", []string{"1: cdp_url: \"http://127.0.0.1:9222/?x=1\": leave out"}},
		{"cdp fragment", "cdp_url = http://127.0.0.1:9222/#x\n", []string{"1: cdp_url: \"http://127.0.0.1:9222/#x\": leave out"}},
		{"cdp bad port", "cdp_url = http://127.0.0.1:99999\n", []string{"1: cdp_url: \"http://127.0.0.1:99999\": bad port"}},
		{"cdp no host", "cdp_url = http:///json\n", []string{"1: cdp_url: \"http:///json\" has no host"}},
		{"cdp bad host", "cdp_url = http://a_b:9222\n", []string{"1: cdp_url: \"http://a_b:9222\": host: label \"a_b\""}},
		{"cdp host with port", "cdp_allow_hosts = devbox.lan:9222\n", []string{"1: cdp_allow_hosts: host \"devbox.lan:9222\": write the host alone, without a port"}},
		{"cdp host twice", "cdp_allow_hosts = devbox.lan, DEVBOX.lan\n", []string{"1: cdp_allow_hosts: \"DEVBOX.lan\" is listed twice"}},
		{"cdp empty item", "cdp_allow_hosts = a.lan,,b.lan\n", []string{"1: cdp_allow_hosts: an empty item"}},
		{"opener", "prompt_opener = browser\n", []string{"1: prompt_opener: \"browser\" is not valid; use system or cdp-tab"}},
		{"via", "via = native\n", []string{"1: via: \"native\" is not valid; use auto or extension or cdp"}},
		{"ancestor http", "[service a.test]\nframe_ancestors = http://portal.example.net\n", []string{"2: frame_ancestors: \"http://portal.example.net\" is not https"}},
		{"ancestor with path", "[service a.test]\nframe_ancestors = https://portal.example.net/\n", []string{"2: frame_ancestors: \"https://portal.example.net/\": not an origin: it has a path"}},
		{"ancestor host only", "[service a.test]\nframe_ancestors = portal.example.net\n", []string{"2: frame_ancestors: \"portal.example.net\": not an origin (scheme://host); write an origin like https://portal.example.net"}},
		{"ancestor upper case", "[service a.test]\nframe_ancestors = https://Portal.example.net\n", []string{"2: frame_ancestors: \"https://Portal.example.net\": host \"Portal.example.net\" is not written as a browser writes it"}},
		{"ancestor null", "[service a.test]\nframe_ancestors = null\n", []string{"2: frame_ancestors: \"null\": an opaque origin"}},
		{"ancestor port", "[service a.test]\nframe_ancestors = https://portal.example.net:8443\n", nil},
		{"service with a port", "[service nas.lan:8443]\n", []string{"1: service \"nas.lan:8443\": the old format has no ports"}},
		{"ancestor twice", "[service a.test]\nframe_ancestors = https://p.test, https://p.test\n", []string{"2: frame_ancestors: \"https://p.test\" is listed twice"}},
		{"agent relative", "[service a.test]\nagents = claude\n", []string{"2: agents: \"claude\" is not an absolute path to an executable"}},
		{"agent twice", "[service a.test]\nagents = /bin/a, /bin/../bin/a\n", []string{"2: agents: \"/bin/../bin/a\" is listed twice"}},
		{"fields", "[service a.test]\nfields = password, pin\n", []string{"2: fields: \"pin\" is not a field kind"}},
		{"allow_via auto", "[service a.test]\nallow_via = auto\n", []string{"2: allow_via: \"auto\" is not valid; use extension or cdp"}},
		{"bad utf-8", "via = auto\nvia = \xff\n", []string{"2: not valid UTF-8 text"}},
		{"control character", "via = au\x00to\n", []string{"1: contains a control character"}},
		{"hash inside a value", "prompt_opener = system#x\n", []string{"1: prompt_opener: \"system#x\" is not valid"}},
		{"comment after value", "prompt_opener = cdp-tab # for the headed browser\nvia = cdp\t# always\n", nil},
		{"every problem, in line order", "cdp_url = http://devbox.lan:9222\nbogus = 1\nvia = x\n[service com]\nprompt_budget = 0s\n",
			[]string{"1: cdp_url", "2: unknown key", "3: via", "4: public suffix", "5: prompt_budget is a top-level setting"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.text = osText(c.text)
			p, err := ParseLegacy("t.policy", []byte(c.text))
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("ParseLegacy: %v", err)
				}
				return
			}
			if _, merr := Migrate("t.policy", []byte(c.text)); merr == nil {
				t.Errorf("Migrate converted a file with problems")
			}
			if p != nil || err == nil {
				t.Fatalf("ParseLegacy = %+v, %v; want an error", p, err)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(pe.Problems) != len(c.want) || len(lines) != len(c.want) {
				t.Fatalf("got %d problems:\n%v\nwant %d", len(pe.Problems), err, len(c.want))
			}
			for i, w := range c.want {
				w = osText(w)
				wantPrefix := "t.policy:" + w
				line, msg, _ := strings.Cut(w, ": ")
				if !strings.HasPrefix(lines[i], "t.policy:"+line+": ") || !strings.Contains(lines[i], msg) {
					t.Errorf("problem %d = %q; want %q", i, lines[i], wantPrefix)
				}
				if pe.Problems[i].String() != lines[i] || pe.Problems[i].File != "t.policy" {
					t.Errorf("problem %d: %+v does not render as %q", i, pe.Problems[i], lines[i])
				}
			}
		})
	}
}
