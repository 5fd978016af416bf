package policy

import (
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseEmptyIsDefault(t *testing.T) {
	for _, text := range []string{"", "\n\n", "# only a comment\n   \n\t# another\n", "\ufeff# with a byte-order mark\n"} {
		p, err := Parse("empty.policy", []byte(text))
		if err != nil {
			t.Fatalf("Parse(%q): %v", text, err)
		}
		if !reflect.DeepEqual(p, Default()) {
			t.Errorf("Parse(%q) = %+v; want the defaults", text, p)
		}
	}
}

func TestDefault(t *testing.T) {
	p := Default()
	if p.PromptBudget != 90*time.Second || p.NoResponseCooldown != 10*time.Minute ||
		p.RateLimit != 6 || p.RateWindow != time.Minute || p.CDPURL != "" ||
		len(p.CDPAllowHosts) != 0 || p.PromptOpener != OpenerSystem || p.Via != ViaAuto || len(p.Rules) != 0 {
		t.Fatalf("Default() = %+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
	p.Rules = append(p.Rules, Rule{Service: "x.test"})
	if len(Default().Rules) != 0 {
		t.Fatal("Default() shares state between calls")
	}
}

func TestParseEveryKey(t *testing.T) {
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
	got, err := Parse("every.policy", []byte(text))
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
		Rules: []Rule{
			{
				Service:        "github.com",
				FrameAncestors: []string{"https://portal.example.net", "http://localhost:3000"},
				Agents:         []string{"/usr/local/bin/claude", "/opt/bin/agent"},
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
	again, err := Parse("formatted", got.Format())
	if err != nil || !reflect.DeepEqual(again, got) {
		t.Fatalf("Parse(Format()) = %+v, %v; want the same policy back", again, err)
	}
}

func TestParseErrors(t *testing.T) {
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
		{"ancestor port", "[service a.test]\nframe_ancestors = https://portal.example.net:8443\n", []string{"2: frame_ancestors: \"https://portal.example.net:8443\" uses a non-default port"}},
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
			p, err := Parse("t.policy", []byte(c.text))
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if p != nil || err == nil {
				t.Fatalf("Parse = %+v, %v; want an error", p, err)
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

func TestExample(t *testing.T) {
	p, err := Parse("example.policy", Example())
	if err != nil {
		t.Fatalf("example.policy: %v", err)
	}
	d := Default()
	if p.PromptBudget != d.PromptBudget || p.NoResponseCooldown != d.NoResponseCooldown ||
		p.RateLimit != d.RateLimit || p.RateWindow != d.RateWindow || p.PromptOpener != d.PromptOpener || p.Via != d.Via {
		t.Errorf("example.policy does not set the defaults: %+v", p)
	}
	if len(p.Rules) != 2 {
		t.Errorf("example.policy has %d rules; want 2", len(p.Rules))
	}
	text := string(Example())
	lines := strings.Split(text, "\n")
	setAt := func(key string) int {
		for i, l := range lines {
			if strings.HasPrefix(l, key+" = ") || strings.HasPrefix(l, "# "+key+" = ") {
				return i
			}
		}
		return -1
	}
	for _, key := range topKeys() {
		i := setAt(key)
		if i < 1 {
			t.Errorf("example.policy does not show %s = …", key)
			continue
		}
		if prev := lines[i-1]; !strings.HasPrefix(prev, "# ") || strings.Contains(prev, " = ") {
			t.Errorf("example.policy does not explain %s above it", key)
		}
	}
	for _, key := range ruleKeys() {
		if setAt(key) < 0 || !strings.Contains(text, "\n#   "+key+" ") {
			t.Errorf("example.policy does not show and explain %s", key)
		}
	}
	// Every commented-out setting in the example is valid too.
	var uncommented []string
	for _, l := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(l, "# "); ok && strings.Contains(rest, " = ") && !strings.Contains(rest, "(") {
			if key, _, _ := strings.Cut(rest, " = "); !strings.Contains(key, " ") {
				l = rest
			}
		}
		uncommented = append(uncommented, l)
	}
	all, err := Parse("example.policy (all keys)", []byte(strings.Join(uncommented, "\n")))
	switch {
	case err != nil && runtime.GOOS == "windows" && strings.Contains(err.Error(), "absolute path"):
	case err != nil:
		t.Errorf("the commented-out settings of example.policy are not valid: %v", err)
	case all.CDPURL == "" || len(all.CDPAllowHosts) == 0 || len(all.Rules[1].Agents) == 0:
		t.Errorf("the commented-out settings of example.policy were not all read: %+v", all)
	}
	b := Example()
	b[0] = 'X'
	if Example()[0] == 'X' {
		t.Error("Example() returns shared memory")
	}
}

func TestValidate(t *testing.T) {
	bad := &Policy{
		PromptBudget:       time.Second,
		NoResponseCooldown: -time.Second,
		RateLimit:          0,
		RateWindow:         time.Minute,
		CDPURL:             "http://remote.test:9222",
		CDPAllowHosts:      []string{"Remote.test"},
		PromptOpener:       "",
		Via:                "native",
		Rules: []Rule{
			{Service: "GitHub.com", FrameAncestors: []string{"http://evil.test"}, Agents: []string{"agent"}, Fields: []string{"otp"}, AllowVia: []string{ViaAuto}},
			{Service: "a.test"},
			{Service: "a.test"},
		},
	}
	err := bad.Validate()
	if err == nil {
		t.Fatal("Validate accepted a bad policy")
	}
	for _, want := range []string{
		"prompt_budget: 1s is out of range",
		"no_response_cooldown: -1s is out of range",
		"rate_limit: 0 requests",
		`cdp_allow_hosts: "Remote.test" is not in normal form; write "remote.test"`,
		`cdp_url: "http://remote.test:9222" is not on a loopback host`,
		`prompt_opener: "" is not valid`,
		`via: "native" is not valid`,
		`[service GitHub.com] service: "GitHub.com" is not in normal form; write "github.com"`,
		`[service GitHub.com] frame_ancestors: "http://evil.test" is not https`,
		`[service GitHub.com] agents: "agent" is not an absolute path`,
		`[service GitHub.com] fields: "otp" is not in normal form; write "one-time-code"`,
		`[service GitHub.com] allow_via: "auto" is not valid`,
		"[service a.test]: a second section for the same service",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error does not say %q:\n%v", want, err)
		}
	}
	good := mustParse(t, string(Example()))
	if err := good.Validate(); err != nil {
		t.Fatalf("a parsed policy does not validate: %v", err)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 90 * time.Second: "90s", 10 * time.Minute: "10m", 2 * time.Hour: "2h",
		61 * time.Minute: "61m", 1500 * time.Millisecond: "1.5s", -time.Second: "-1s",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q; want %q", d, got, want)
		}
	}
}
