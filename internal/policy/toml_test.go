package policy

import (
	"errors"

	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	toml "github.com/pelletier/go-toml/v2"
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

func ptr[T any](v T) *T { return &v }

// everyKeyText sets every key of the file, in all the spellings Parse
// normalises.
const everyKeyText = "# every key\r\n" +
	"prompt_budget = \"2m\"\r\n" +
	"no_response_cooldown='0s'\n" +
	"rate_limit = \"10/30s\" # ten per half minute\n" +
	"cdp_url = \"ws://DevBox.lan:9222/devtools/browser/abc\"\n" +
	"cdp_allow_hosts = [\"DevBox.lan\", \"10.0.0.5\",\"::2\"]\n" +
	"\tprompt_opener = \"cdp-tab\"\n" +
	"via = \"extension\"\n" +
	"prompt = \"native\"\n" +
	"pinentry = \"/usr/bin/pinentry-qt\"\n" +
	"driven = \"in-page\"\n" +
	"clean_room_browser = \"/usr/bin/chromium\"\n" +
	"\n" +
	"[service.\"GitHub.com\"]\n" +
	"frame_ancestors = [\"https://portal.example.net\", \"http://localhost:3000\", \"https://sso.example.net:8443\"]\n" +
	"agents = [\"/usr/local/bin/claude\", \"/opt/agent dir/../bin/agent\"]\n" +
	"fields = [\"otp\", \"password\"]\n" +
	"allow_via = [\"extension\", \"cdp\"]\n" +
	"then = \"none\"\n" +
	"driven = \"clean-room\"\n" +
	"subdomains = false\n" +
	"approval = \"lease\"\n" +
	"lease = \"30m\"\n" +
	"remember = false\n" +
	"password = { source = \"pass\", entry = \"work/github\", store_dir = \"/home/a/.password-store/\", command = \"/usr/bin/pass\" }\n" +
	"[service.\"GitHub.com\".otp]\n" +
	"source = \"keepassxc\"\n" +
	"database = \"/home/a/p.kdbx\"\n" +
	"entry = \"/work/github\"\n" +
	"key_file = \"/home/a/p.keyx\"\n" +
	"db_password = \"none\"\n" +
	"[ service . '127.0.0.1' ]\n" +
	"fields = [\"one-time-code\"]\n" +
	"[service.\"NAS.lan:8443\"]\n" +
	"approval = \"none\"\n" +
	"[service.\"NAS.lan:8443\".password]\n" +
	"source = \"op\"\n" +
	"ref = \"op://Private/NAS box/password\"\n" +
	"account = \"my.1password.com\"\n" +
	"[service.\"NAS.lan:8443\".otp]\n" +
	"source = \"op\"\n" +
	"item = \"NAS box\"\n" +
	"vault = \"Private\"\n" +
	"[service.\"[::1]:8443\".password]\n" +
	"source = \"bw\"\n" +
	"item = \"0f6c1a52\"\n" +
	"[service.\"[::1]:8443\".otp]\n" +
	"source = \"rbw\"\n" +
	"entry = \"local\"\n" +
	"user = \"alice\"\n" +
	"folder = \"dev\"\n" +
	"[service.\"keyring.example\".password]\n" +
	"source = \"keyring\"\n"

func TestParseEveryKey(t *testing.T) {
	got, err := Parse("every.policy", []byte(osText(everyKeyText)))
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
		Prompt:             PromptNative,
		Pinentry:           osRaw("/usr/bin/pinentry-qt"),
		Driven:             DrivenInPage,
		RoomBrowser:        osRaw("/usr/bin/chromium"),
		Rules: []Rule{
			{
				Service:        "github.com",
				FrameAncestors: []string{"https://portal.example.net", "http://localhost:3000", "https://sso.example.net:8443"},
				Agents:         []string{osPath("/usr/local/bin/claude"), osPath("/opt/bin/agent")},
				Fields:         []string{fieldOTP, fieldPassword},
				AllowVia:       []string{ViaExtension, ViaCDP},
				Then:           ThenNone,
				Driven:         DrivenCleanRoom,
				Subdomains:     ptr(false),
				Approval:       ApprovalLease,
				Lease:          30 * time.Minute,
				Remember:       ptr(false),
				Password:       &Source{Store: StorePass, Entry: "work/github", StoreDir: osPath("/home/a/.password-store"), Command: osPath("/usr/bin/pass")},
				OTP:            &Source{Store: StoreKeePassXC, Database: osPath("/home/a/p.kdbx"), Entry: "/work/github", KeyFile: osPath("/home/a/p.keyx"), DBPassword: DBPasswordNone},
			},
			{Service: "127.0.0.1", Fields: []string{fieldOTP}},
			{
				Service:  "nas.lan:8443",
				Approval: ApprovalNone,
				Password: &Source{Store: StoreOnePass, Ref: "op://Private/NAS box/password", Account: "my.1password.com"},
				OTP:      &Source{Store: StoreOnePass, Item: "NAS box", Vault: "Private"},
			},
			{
				Service:  "[::1]:8443",
				Password: &Source{Store: StoreBitwarden, Item: "0f6c1a52"},
				OTP:      &Source{Store: StoreRbw, Entry: "local", User: "alice", Folder: "dev"},
			},
			{Service: "keyring.example", Password: &Source{Store: StoreKeyring}},
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
		t.Fatalf("Parse(Format()) = %+v, %v; want the same policy back\n%s", again, err, got.Format())
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name string
		text string
		want []string // "LINE:COL: substring[|another substring]", one per problem, in order
	}{
		// Syntax and types, from the strict decoder.
		{"unknown key", "prompt_budget = \"90s\"\npromt_budget = \"90s\"\n", []string{"2:1: unknown key \"promt_budget\"; valid keys here: prompt_budget, no_response_cooldown"}},
		{"two unknown keys", "a = 1\n\nb = 2\n", []string{"1:1: unknown key \"a\"", "3:1: unknown key \"b\""}},
		{"section key at top", "agents = [\"/usr/bin/x\"]\n", []string{"1:1: agents belongs in a service's table"}},
		{"top key in service", "[service.\"github.com\"]\nvia = \"cdp\"\n", []string{"2:1: via is a top-level setting; put it above the first"}},
		{"source key in service", "[service.\"github.com\"]\nentry = \"x\"\n", []string{"2:1: entry belongs in the service's password or otp table, like [service.\"github.com\".password]"}},
		{"unknown key in service", "[service.\"github.com\"]\nallow = [\"cdp\"]\n", []string{"2:1: unknown key \"allow\" in [service.\"github.com\"]; valid keys here: frame_ancestors, agents"}},
		{"unquoted dotted service", "[service.github.com]\nfields = [\"password\"]\n", []string{"1:2: unknown key \"com\" in [service.\"github\"]|quote it: [service.\"github.com\"]"}},
		{"unquoted deeper", "[service.login.example.com]\n", []string{"1:2: a service name with dots must be quoted: [service.\"login.example.com\"]"}},
		{"wrong type", "prompt_budget = 90\n", []string{"1:17: prompt_budget must be a duration from 5s to 15m, like \"90s\", not a number"}},
		{"list not a string", "[service.\"a.test\"]\nfields = \"password\"\n", []string{"2:10: fields must be a list of field kinds, like [\"password\", \"otp\"], not a string"}},
		{"item not a string", "[service.\"a.test\"]\nfields = [\"password\", 3]\n", []string{"2:23: fields must be"}},
		{"bool as string", "[service.\"a.test\"]\nsubdomains = \"no\"\n", []string{"2:14: subdomains must be true or false, not a string"}},
		{"source not a table", "[service.\"a.test\"]\npassword = \"pass\"\n", []string{"2:12: password must be a table naming the source"}},
		{"source value not a string", "[service.\"a.test\".password]\nsource = \"pass\"\nentry = 1\n", []string{"3:9: the source key entry must be"}},
		{"service not a table", "service = 3\n", []string{"1:11: service must be one table per service"}},
		{"array of tables", "[[service]]\nx = 1\n", []string{"1:3: write one table per service, like [service.\"github.com\"], not [[service]]"}},
		{"repeated key", "via = \"auto\"\n\nvia = \"cdp\"\n", []string{"3:1: key via is already defined"}},
		{"repeated table", "[service.\"a.test\"]\n[service.\"a.test\"]\n", []string{"2:"}},
		{"bare value", "prompt_budget = \"90s\"\nvia = sideways\n", []string{"2:7: unexpected character|looks like fillgate's old line format"}},

		// Values, checked with their place.
		{"bad duration", "prompt_budget = \"90\"\n", []string{"1:17: prompt_budget: \"90\" is not a duration; write it like 90s, 10m or 1h"}},
		{"empty string", "prompt_budget = \"\"\n", []string{"1:17: prompt_budget is empty; leave the key out, or write a duration"}},
		{"budget too long", "prompt_budget = \"1h\"\n", []string{"1:17: prompt_budget: 1h is out of range"}},
		{"rate", "rate_limit = \"6\"\n", []string{"1:14: rate_limit: \"6\" is not a rate"}},
		{"cdp not loopback", "cdp_url = \"http://devbox.lan:9222\"\n", []string{"1:11: cdp_url: \"http://devbox.lan:9222\" is not on a loopback host; list devbox.lan in cdp_allow_hosts"}},
		{"cdp listed after", "cdp_url = \"http://devbox.lan:9222\"\ncdp_allow_hosts = [\"devbox.lan\"]\n", nil},
		{"cdp host with port", "cdp_allow_hosts = [\"a.lan\", \"devbox.lan:9222\"]\n", []string{"1:29: cdp_allow_hosts: host \"devbox.lan:9222\": write the host alone, without a port"}},
		{"cdp host twice", "cdp_allow_hosts = [\"devbox.lan\", \"DEVBOX.lan\"]\n", []string{"1:34: cdp_allow_hosts: \"DEVBOX.lan\" is listed twice"}},
		{"empty list", "cdp_allow_hosts = []\n", []string{"1:1: cdp_allow_hosts is an empty list; leave the key out"}},
		{"opener", "prompt_opener = \"browser\"\n", []string{"1:17: prompt_opener: \"browser\" is not valid; use system or cdp-tab"}},
		{"prompt", "prompt = \"page\"\n", []string{"1:10: prompt: \"page\" is not valid; use auto or native or browser"}},
		{"pinentry relative", "pinentry = \"pinentry-gtk-2\"\n", []string{"1:12: pinentry: \"pinentry-gtk-2\" is not an absolute path"}},
		{"service public suffix", "[service.\"co.uk\"]\n", []string{"1:10: service \"co.uk\": co.uk is a public suffix"}},
		{"service with scheme", "[service.\"https://github.com\"]\n", []string{"1:10: service \"https://github.com\": write the host alone, without a scheme"}},
		{"service port 443", "[service.\"github.com:443\"]\n", []string{"1:10: 443 is the default https port; write the host alone, github.com"}},
		{"service bad port", "[service.\"nas.lan:0\"]\n", []string{"1:10: bad port \"0\""}},
		{"service twice", "[service.\"a.test\"]\nfields = [\"password\"]\n\n[service.\"A.test\"]\n", []string{"4:10: a second table for the service a.test; the first, [service.\"a.test\"], is on line 1"}},
		{"ancestor http", "[service.\"a.test\"]\nframe_ancestors = [\"http://portal.example.net\"]\n", []string{"2:20: frame_ancestors: \"http://portal.example.net\" is not https"}},
		{"agent relative", "[service.\"a.test\"]\nagents = [\"claude\"]\n", []string{"2:11: agents: \"claude\" is not an absolute path"}},
		{"fields", "[service.\"a.test\"]\nfields = [\"password\", \"pin\"]\n", []string{"2:23: fields: \"pin\" is not a field kind"}},
		{"then", "[service.\"a.test\"]\nthen = \"click\"\n", []string{"2:8: then: \"click\" is not valid; use submit or none"}},
		{"approval", "[service.\"a.test\"]\napproval = \"always\"\n", []string{"2:12: approval: \"always\" is not valid; use each or lease or none"}},
		{"lease too long", "[service.\"a.test\"]\napproval = \"lease\"\nlease = \"2h\"\n", []string{"3:9: lease: 2h is out of range; use whole seconds from 1m to 1h"}},
		{"lease without approval", "[service.\"a.test\"]\nlease = \"10m\"\n", []string{"2:1: lease: a lease is only for approval = \"lease\""}},
		{"source missing", "[service.\"a.test\".password]\nentry = \"x\"\n", []string{"1:19: password has no source; write source = \"keyring\""}},
		{"unknown store", "[service.\"a.test\".password]\nsource = \"lastpass\"\n", []string{"2:10: password.source: \"lastpass\" is not a store; use keyring, pass, keepassxc, op, bw, rbw"}},
		{"store needs a key", "[service.\"a.test\".password]\nsource = \"pass\"\n", []string{"2:10: password.source: source = \"pass\" needs entry (the pass entry, like \"work/github\")"}},
		{"store needs a key, empty", "[service.\"a.test\".password]\nsource = \"pass\"\nentry = \"\"\n", []string{"2:10: password.source: source = \"pass\" needs entry"}},
		{"store does not take a key", "[service.\"a.test\".password]\nsource = \"bw\"\nitem = \"x\"\nentry = \"y\"\n", []string{"4:1: password.entry: source = \"bw\" does not take entry; it takes item, command"}},
		{"unknown source key", "[service.\"a.test\".otp]\nsource = \"keyring\"\nseed = \"x\"\n", []string{"3:1: unknown key \"seed\" in a source table"}},
		{"op otp needs item", "[service.\"a.test\".otp]\nsource = \"op\"\nref = \"op://a/b/c\"\n", []string{"2:10: otp.source: source = \"op\" needs item", "3:1: otp.ref: source = \"op\" does not take ref"}},
		{"op bad ref", "[service.\"a.test\".password]\nsource = \"op\"\nref = \"Private/x\"\n", []string{"3:7: ref: \"Private/x\" is not a secret reference"}},
		{"pass entry escapes", "[service.\"a.test\".password]\nsource = \"pass\"\nentry = \"../x\"\n", []string{"3:9: entry: \"../x\" is not a pass entry"}},
		{"option-like entry", "[service.\"a.test\".password]\nsource = \"rbw\"\nentry = \"--raw\"\n", []string{"3:9: entry: \"--raw\" starts with -, which the store would read as an option"}},
		{"relative database", "[service.\"a.test\".password]\nsource = \"keepassxc\"\ndatabase = \"p.kdbx\"\nentry = \"x\"\n", []string{"3:12: database: \"p.kdbx\" is not an absolute path"}},
		{"db password none without key file", "[service.\"a.test\".password]\nsource = \"keepassxc\"\ndatabase = \"/p.kdbx\"\nentry = \"x\"\ndb_password = \"none\"\n", []string{"5:1: password.db_password: db_password = \"none\" opens the database with its key file alone; set key_file too"}},
		{"approval none with a typed database password", "[service.\"a.test\"]\napproval = \"none\"\n[service.\"a.test\".password]\nsource = \"keepassxc\"\ndatabase = \"/p.kdbx\"\nentry = \"x\"\n", []string{"2:1: approval: approval = \"none\" fills with no prompt, so nobody could type the KeePassXC database password"}},
		{"control character", "[service.\"a.test\".password]\nsource = \"pass\"\nentry = \"a\\u0007b\"\n", []string{"3:9: entry: \"a\\ab\" contains a control character"}},
		{"every problem, in file order", "[service.\"com\"]\nfields = [\"pin\"]\n[service.\"a.test\"]\nthen = \"x\"\n", []string{"1:10: public suffix", "2:11: fields", "4:8: then"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.text = osText(c.text)
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
			if errors.Is(err, ErrOldFormat) {
				t.Fatalf("a TOML file with problems is taken for the old format: %v", err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(pe.Problems) != len(c.want) || len(lines) != len(c.want) {
				t.Fatalf("got %d problems:\n%v\nwant %d", len(pe.Problems), err, len(c.want))
			}
			for i, w := range c.want {
				w = osText(w)
				pos, msgs, _ := strings.Cut(w, ": ")
				if !strings.HasPrefix(lines[i], "t.policy:"+pos) {
					t.Errorf("problem %d = %q; want it at %s", i, lines[i], pos)
				}
				for _, msg := range strings.Split(msgs, "|") {
					if !strings.Contains(lines[i], msg) {
						t.Errorf("problem %d = %q; want it to say %q", i, lines[i], msg)
					}
				}
				if pe.Problems[i].String() != lines[i] || pe.Problems[i].File != "t.policy" || pe.Problems[i].Line < 1 {
					t.Errorf("problem %d: %+v does not render as %q", i, pe.Problems[i], lines[i])
				}
			}
		})
	}
}

func TestOldFormatIsRefused(t *testing.T) {
	old := "# my policy\nprompt_budget = 2m\n\n[service github.com]\nfields = password\n"
	_, err := Parse("old.policy", []byte(old))
	if !errors.Is(err, ErrOldFormat) || !strings.HasPrefix(err.Error(), "old.policy:2:") || strings.Count(err.Error(), "\n") != 0 {
		t.Fatalf("Parse(old format) = %v; want one problem on line 2, wrapping ErrOldFormat", err)
	}
	for _, advice := range []string{"old line format", "no longer reads", "rewrite it in TOML", "`fillgate policy example`"} {
		if !strings.Contains(err.Error(), advice) {
			t.Errorf("Parse(old format) = %v; want it to say %q", err, advice)
		}
	}
	// The advice holds: the same file in TOML says what the old one said.
	rewritten := "# my policy\nprompt_budget = \"2m\"\n\n[service.\"github.com\"]\nfields = [\"password\"]\n"
	p, err := Parse("rewritten.policy", []byte(rewritten))
	if err != nil || p.PromptBudget != 2*time.Minute || len(p.Rules) != 1 || p.Rules[0].Service != "github.com" || !slices.Equal(p.Rules[0].Fields, []string{"password"}) {
		t.Fatalf("Parse(rewritten) = %+v, %v", p, err)
	}
	// Every shape of old file is refused as one: settings only, headers,
	// comments, a byte order mark and CRLF line ends.
	for _, old := range []string{
		"prompt_budget = 90s\nrate_limit = 6/1m\ncdp_url = http://127.0.0.1:9222\n",
		"cdp_allow_hosts = a.lan, ::2\ncdp_url = ws://a.lan:1/x\n[service a.test]\nagents = /a, /b\n",
		"\ufeffvia = auto # c\r\n[ service  GitHub.com ]\r\nframe_ancestors = https://p.test\r\n",
		"[service a.test]\nagents = /opt/a\"b\\c, /x#y\nfields = otp # c\n",
	} {
		if _, err := Parse("old.policy", []byte(old)); !errors.Is(err, ErrOldFormat) || !strings.Contains(err.Error(), "`fillgate policy example`") {
			t.Errorf("Parse(%q) = %v; want it refused as the old format", old, err)
		}
	}
	// A file with a line that only looks old is not taken for the old
	// format; that line gets the hint.
	_, err = Parse("broken.policy", []byte("via = auto\nbogus = 1\n"))
	if errors.Is(err, ErrOldFormat) || !strings.Contains(err.Error(), "broken.policy:1:7:") || !strings.Contains(err.Error(), "`fillgate policy example`") {
		t.Fatalf("Parse(broken old format) = %v", err)
	}
}

// serviceHeader matches a whole [service."HOST"] or [service."HOST".otp]
// header line.
var serviceHeader = regexp.MustCompile(`^\[service\."[^"]+"(\.[a-z]+)?\]$`)

// uncommentSettings turns the commented-out settings of an example file
// ("# key = value", "# [service...]") into settings.
func uncommentSettings(text string) string {
	keys := append(append(append(topKeys(), ruleKeys()...), sourceKeys()...), keyPassword, keyOTP)
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(l, "# "); ok {
			key, _, isSetting := strings.Cut(rest, " = ")
			if isSetting && slices.Contains(keys, key) || serviceHeader.MatchString(rest) {
				l = rest
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func TestExample(t *testing.T) {
	p, err := Parse("example.toml", Example())
	if err != nil {
		t.Fatalf("example.toml: %v", err)
	}
	d := Default()
	if p.PromptBudget != d.PromptBudget || p.NoResponseCooldown != d.NoResponseCooldown ||
		p.RateLimit != d.RateLimit || p.RateWindow != d.RateWindow || p.PromptOpener != d.PromptOpener || p.Via != d.Via {
		t.Errorf("example.toml does not set the defaults: %+v", p)
	}
	if len(p.Rules) != 2 {
		t.Errorf("example.toml has %d rules; want 2", len(p.Rules))
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
			t.Errorf("example.toml does not show %s = …", key)
			continue
		}
		if prev := lines[i-1]; !strings.HasPrefix(prev, "# ") || strings.Contains(prev, " = ") {
			t.Errorf("example.toml does not explain %s above it", key)
		}
	}
	for _, key := range append(ruleKeys(), sourceKeys()...) {
		if setAt(key) < 0 || !strings.Contains(text, "\n#   "+key+" ") {
			t.Errorf("example.toml does not show and explain %s", key)
		}
	}
	for _, store := range stores() {
		if !strings.Contains(text, tomlString(store)+": ") && !strings.Contains(text, tomlString(store)+" (") {
			t.Errorf("example.toml does not explain source = %s", tomlString(store))
		}
	}
	// Every commented-out setting in the example is valid too.
	all, err := Parse("example.toml (all keys)", []byte(osText(uncommentSettings(text))))
	switch {
	case err != nil:
		t.Errorf("the commented-out settings of example.toml are not valid: %v", err)
	case all.CDPURL == "" || len(all.CDPAllowHosts) == 0 || len(all.Rules) != 5 || len(all.Rules[1].Agents) == 0 ||
		all.Rules[1].Password == nil || all.Rules[1].Password.Command == "" || all.Rules[2].Password == nil || all.Rules[2].Password.KeyFile == "":
		t.Errorf("the commented-out settings of example.toml were not all read: %+v", all)
	}
	b := Example()
	b[0] = 'X'
	if Example()[0] == 'X' {
		t.Error("Example() returns shared memory")
	}
}

// TestExamplesDir: every file in examples/ parses, validates and formats
// back to itself.
func TestExamplesDir(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("examples", "*.toml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("examples: %v, %v", files, err)
	}
	for _, want := range []string{"strict-allowlist.toml", "team-sso-frame.toml", "headless-cdp.toml"} {
		if _, err := os.Stat(filepath.Join("examples", want)); err != nil {
			t.Errorf("examples/%s: %v", want, err)
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(f, []byte(osText(string(data))))
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if len(p.Rules) == 0 {
			t.Errorf("%s has no service tables", f)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		again, err := Parse("formatted "+f, p.Format())
		if err != nil || !reflect.DeepEqual(again, p) {
			t.Errorf("%s does not format back to itself: %v", f, err)
		}
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
			{Service: "GitHub.com", FrameAncestors: []string{"http://evil.test"}, Agents: []string{"agent"}, Fields: []string{"otp"}, AllowVia: []string{ViaAuto}, Then: "click"},
			{Service: "a.test", Approval: "always", Lease: 2 * time.Hour},
			{Service: "a.test"},
			{Service: "b.test", Lease: time.Minute, Password: &Source{Store: StorePass}, OTP: &Source{Store: "lastpass"}},
			{Service: "c.test", Password: &Source{Store: StoreKeePassXC, Database: "rel.kdbx", Entry: "x", Ref: "op://a/b/c"}},
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
		`[service."GitHub.com"] service: "GitHub.com" is not in normal form; write "github.com"`,
		`[service."GitHub.com"] frame_ancestors: "http://evil.test" is not https`,
		`[service."GitHub.com"] agents: "agent" is not an absolute path`,
		`[service."GitHub.com"] fields: "otp" is not in normal form; write "one-time-code"`,
		`[service."GitHub.com"] allow_via: "auto" is not valid`,
		`[service."GitHub.com"] then: "click" is not valid`,
		`[service."a.test"] approval: "always" is not valid`,
		`[service."a.test"] lease: 2h is out of range`,
		`[service."a.test"]: a second table for the same service`,
		`[service."b.test"] lease: a lease is only for approval = "lease"`,
		`[service."b.test"] password.source: source = "pass" needs entry`,
		`[service."b.test"] otp.source: "lastpass" is not a store`,
		`[service."c.test"] password.database: "rel.kdbx" is not an absolute path`,
		`[service."c.test"] password.ref: source = "keepassxc" does not take ref`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error does not say %q:\n%v", want, err)
		}
	}
	good := mustParse(t, uncommentSettings(string(Example())))
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

func TestTOMLString(t *testing.T) {
	for _, s := range []string{"", "plain", `C:\Tools\a.exe`, `say "hi"`, "tab\there", "nl\nx\r", "bell\a", "del\x7f", "ünïcødé", "#not a comment", "'single'"} {
		var m map[string]string
		if err := toml.Unmarshal([]byte("x = "+tomlString(s)), &m); err != nil || m["x"] != s {
			t.Errorf("tomlString(%q) = %s reads back as %q, %v", s, tomlString(s), m["x"], err)
		}
	}
	var m map[string][]string
	list := []string{"a", `b"c`, `d\e`}
	if err := toml.Unmarshal([]byte("x = "+tomlList(list)), &m); err != nil || !reflect.DeepEqual(m["x"], list) {
		t.Errorf("tomlList(%q) reads back as %q, %v", list, m["x"], err)
	}
}

// BenchmarkParse reads the documented example with every setting on: the
// policy file is read afresh for every request.
func BenchmarkParse(b *testing.B) {
	text := []byte(uncommentSettings(string(Example())))
	for b.Loop() {
		if _, err := Parse("example", text); err != nil {
			b.Fatal(err)
		}
	}
}
