package policy

import (
	"strings"
	"testing"
)

// rulesText is a policy with rules the Evaluate table uses.
const rulesText = `
[service."login.example.com"]
frame_ancestors = ["https://portal.example.net", "http://127.0.0.1:8080"]

[service."guarded.example"]
agents = ["/usr/bin/agent"]
fields = ["password"]
allow_via = ["extension"]

[service."example.org"]
agents = ["/usr/bin/agent"]

[service."login.example.org"]
frame_ancestors = ["https://portal.example.net"]

[service."nas.lan:8443"]
agents = ["/usr/bin/agent"]

[service."exact.example"]
subdomains = false

[service."[::1]:8443"]
fields = ["password"]
`

func mustParse(t testing.TB, text string) *Policy {
	t.Helper()
	p, err := Parse("test.policy", []byte(osText(text)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

// base is a request that the default policy allows.
func base() Input {
	return Input{
		Service:   "github.com",
		Field:     fieldPassword,
		Origins:   []string{"https://github.com"},
		FieldKind: fieldPassword,
		AgentExe:  osPath("/usr/bin/agent"),
		Via:       ViaExtension,
	}
}

func TestEvaluate(t *testing.T) {
	rules := mustParse(t, rulesText)
	type tc struct {
		name   string
		p      *Policy // nil: Default()
		edit   func(*Input)
		check  string // "" means allowed
		detail string // a substring of Detail
	}
	origins := func(o ...string) func(*Input) { return func(in *Input) { in.Origins = o } }
	svc := func(s string, o ...string) func(*Input) {
		return func(in *Input) { in.Service, in.Origins = s, o }
	}
	cases := []tc{
		// The focused frame's origin.
		{name: "exact host", edit: origins("https://github.com"), detail: "belongs to github.com"},
		{name: "subdomain", edit: origins("https://gist.github.com")},
		{name: "deep subdomain", edit: origins("https://a.b.github.com")},
		{name: "service in upper case", edit: svc("GitHub.com", "https://github.com")},
		{name: "look-alike suffix", edit: origins("https://github.com.evil.test"), check: CheckOrigin, detail: "https://github.com.evil.test, which is not github.com or a subdomain"},
		{name: "look-alike prefix", edit: origins("https://evilgithub.com"), check: CheckOrigin, detail: "not github.com"},
		{name: "look-alike dash", edit: origins("https://evil-github.com"), check: CheckOrigin},
		{name: "parent of service", edit: svc("gist.github.com", "https://github.com"), check: CheckOrigin},
		{name: "sibling of service", edit: svc("gist.github.com", "https://api.github.com"), check: CheckOrigin},
		{name: "user info", edit: origins("https://github.com@evil.test"), check: CheckOrigin, detail: "user info"},
		{name: "path", edit: origins("https://evil.test/github.com"), check: CheckOrigin},
		{name: "trailing slash", edit: origins("https://github.com/"), check: CheckOrigin},
		{name: "trailing dot", edit: origins("https://github.com."), check: CheckOrigin, detail: "without the trailing dot"},
		{name: "upper case origin", edit: origins("https://GitHub.com"), check: CheckOrigin, detail: "upper case"},
		{name: "idn homograph", edit: origins("https://xn--gthub-n4a.com"), check: CheckOrigin},
		{name: "raw unicode host", edit: origins("https://gіthub.com"), check: CheckOrigin},
		{name: "http", edit: origins("http://github.com"), check: CheckOrigin, detail: "not https"},
		{name: "non-default port", edit: origins("https://github.com:8443"), check: CheckOrigin, detail: "is on port 8443, and a service without a port covers only the default port (ask for github.com:8443 to fill there)"},
		{name: "default port spelled out", edit: origins("https://github.com:443"), check: CheckOrigin, detail: "default port"},
		{name: "port zero", edit: origins("https://github.com:0"), check: CheckOrigin, detail: "bad port"},
		{name: "port too big", edit: origins("https://github.com:65536"), check: CheckOrigin},
		{name: "port leading zero", edit: origins("https://github.com:08443"), check: CheckOrigin},
		{name: "empty port", edit: origins("https://github.com:"), check: CheckOrigin},
		{name: "empty v6 port", edit: svc("::1", "http://[::1]:"), check: CheckOrigin},
		{name: "text after v6", edit: svc("::1", "http://[::1]x"), check: CheckOrigin},
		{name: "unclosed v6", edit: svc("::1", "http://[::1"), check: CheckOrigin},
		{name: "a name in brackets", edit: svc("github.com", "https://[github.com]"), check: CheckOrigin},
		{name: "ipv4 in brackets", edit: svc("127.0.0.1", "http://[127.0.0.1]:8080"), check: CheckOrigin},
		{name: "opaque", edit: origins("null"), check: CheckOrigin, detail: "opaque"},
		{name: "empty origin", edit: origins(""), check: CheckOrigin},
		{name: "no origins", edit: origins(), check: CheckOrigin, detail: "no origin"},
		{name: "extension page", edit: origins("chrome-extension://eibglhghnpiamfbahofmkedefkffabnh"), check: CheckOrigin, detail: "not a web page"},
		{name: "file page", edit: origins("file://"), check: CheckOrigin},
		{name: "ws scheme", edit: origins("wss://github.com"), check: CheckOrigin},
		{name: "hex ip host", edit: origins("https://0x7f.0.0.1"), check: CheckOrigin},
		{name: "ip host for name service", edit: origins("https://140.82.112.3"), check: CheckOrigin},
		{name: "unbracketed v6", edit: origins("http://::1:8080"), check: CheckOrigin},

		// Public suffixes.
		{name: "service github.io", edit: svc("github.io", "https://user.github.io"), check: CheckService, detail: "public suffix"},
		{name: "service co.uk", edit: svc("co.uk", "https://example.co.uk"), check: CheckService, detail: "public suffix"},
		{name: "service com", edit: svc("com", "https://github.com"), check: CheckService},
		{name: "user.github.io", edit: svc("user.github.io", "https://user.github.io")},
		{name: "under user.github.io", edit: svc("user.github.io", "https://x.user.github.io")},
		{name: "other github.io user", edit: svc("user.github.io", "https://other.github.io"), check: CheckOrigin},
		{name: "github.io suffix trick", edit: svc("user.github.io", "https://user.github.io.evil.test"), check: CheckOrigin},
		{name: "co.uk site", edit: svc("example.co.uk", "https://www.example.co.uk")},
		{name: "co.uk look-alike", edit: svc("example.co.uk", "https://example.co.uk.evil.test"), check: CheckOrigin},
		{name: "across a private suffix", edit: svc("amazonaws.com", "https://bucket.s3.amazonaws.com"), check: CheckOrigin, detail: "under the public suffix s3.amazonaws.com"},
		{name: "across a wildcard suffix", edit: svc("amazonaws.com", "https://a.compute.amazonaws.com"), check: CheckOrigin},
		{name: "frame across a suffix", edit: svc("amazonaws.com", "https://amazonaws.com", "https://bucket.s3.amazonaws.com"), check: CheckFrame},
		{name: "service with scheme", edit: svc("https://github.com", "https://github.com"), check: CheckService, detail: "without a scheme"},
		{name: "service with port 443", edit: svc("github.com:443", "https://github.com"), check: CheckService, detail: "443 is the default https port"},
		{name: "service wildcard", edit: svc("*.github.com", "https://gist.github.com"), check: CheckService},
		{name: "empty service", edit: svc("", "https://github.com"), check: CheckService},

		// Loopback: http and other ports only there.
		{name: "localhost http port", edit: svc("localhost", "http://localhost:3000")},
		{name: "localhost https port", edit: svc("localhost", "https://localhost:8443")},
		{name: "localhost http", edit: svc("localhost", "http://localhost")},
		{name: "under localhost", edit: svc("localhost", "http://app.localhost:3000")},
		{name: "named localhost service", edit: svc("app.localhost", "http://app.localhost:3000")},
		{name: "sibling under localhost", edit: svc("app.localhost", "http://other.localhost:3000"), check: CheckOrigin},
		{name: "localhost look-alike", edit: svc("localhost", "http://localhost.evil.test"), check: CheckOrigin},
		{name: "name service on localhost", edit: svc("example.com", "http://example.com.localhost:3000"), check: CheckOrigin},
		{name: "localhost service, ip page", edit: svc("localhost", "http://127.0.0.1:3000"), check: CheckOrigin},
		{name: "ipv4 loopback", edit: svc("127.0.0.1", "http://127.0.0.1:8080")},
		{name: "ipv4 loopback no port", edit: svc("127.0.0.1", "http://127.0.0.1")},
		{name: "second loopback", edit: svc("127.0.0.2", "http://127.0.0.2:8080")},
		{name: "other loopback ip", edit: svc("127.0.0.1", "http://127.0.0.2:8080"), check: CheckOrigin},
		{name: "ip service, name page", edit: svc("127.0.0.1", "http://localhost:8080"), check: CheckOrigin},
		{name: "ipv6 loopback", edit: svc("::1", "http://[::1]:8080")},
		{name: "ipv6 long service", edit: svc("0:0:0:0:0:0:0:1", "http://[::1]:8080")},
		{name: "ipv6 long origin", edit: svc("::1", "http://[0:0:0:0:0:0:0:1]:8080"), check: CheckOrigin},
		{name: "ipv6 mapped origin", edit: svc("127.0.0.1", "http://[::ffff:127.0.0.1]:8080"), check: CheckOrigin},
		{name: "lan ip https", edit: svc("192.168.1.1", "https://192.168.1.1")},
		{name: "lan ip http", edit: svc("192.168.1.1", "http://192.168.1.1"), check: CheckOrigin, detail: "not https"},
		{name: "lan ip port", edit: svc("192.168.1.1", "https://192.168.1.1:8443"), check: CheckOrigin, detail: "ask for 192.168.1.1:8443"},

		// Services with a port: exactly that port, and no port means the
		// default one (any port on loopback).
		{name: "port service", edit: svc("nas.lan:8443", "https://nas.lan:8443"), detail: "belongs to nas.lan:8443"},
		{name: "port service, subdomain", edit: svc("nas.lan:8443", "https://a.nas.lan:8443")},
		{name: "port service, other port", edit: svc("nas.lan:8443", "https://nas.lan:9443"), check: CheckOrigin, detail: "is on port 9443, not nas.lan:8443's port 8443"},
		{name: "port service, default port", edit: svc("nas.lan:8443", "https://nas.lan"), check: CheckOrigin, detail: "is on port 443"},
		{name: "port service, http", edit: svc("nas.lan:8443", "http://nas.lan:8443"), check: CheckOrigin, detail: "not https"},
		{name: "port service, upper case", edit: svc("NAS.lan:8443", "https://nas.lan:8443")},
		{name: "ip port service", edit: svc("192.168.1.1:8443", "https://192.168.1.1:8443")},
		{name: "ip port service, other port", edit: svc("192.168.1.1:8443", "https://192.168.1.1:8444"), check: CheckOrigin},
		{name: "ip port service, other ip", edit: svc("192.168.1.1:8443", "https://192.168.1.2:8443"), check: CheckOrigin},
		{name: "v6 port service", edit: svc("[2001:db8::1]:8443", "https://[2001:db8::1]:8443")},
		{name: "v6 port service, no port", edit: svc("[2001:db8::1]:8443", "https://[2001:db8::1]"), check: CheckOrigin},
		{name: "https port 80", edit: svc("nas.lan:80", "https://nas.lan:80")},
		{name: "loopback port service", edit: svc("localhost:3000", "http://localhost:3000")},
		{name: "loopback port service, other port", edit: svc("localhost:3000", "http://localhost:3001"), check: CheckOrigin, detail: "port 3001"},
		{name: "loopback port 80 service", edit: svc("localhost:80", "http://localhost")},
		{name: "loopback port 443 service", edit: svc("localhost:443", "https://localhost")},
		{name: "loopback port 443 service, http", edit: svc("localhost:443", "http://localhost"), check: CheckOrigin, detail: "is on port 80"},
		{name: "loopback v6 port service", edit: svc("[::1]:8443", "https://[::1]:8443")},
		{name: "frame on other port", edit: svc("nas.lan:8443", "https://nas.lan:8443", "https://nas.lan:9443"), check: CheckFrame, detail: "inside a page from https://nas.lan:9443, which is on port 9443"},
		{name: "frame on same port", edit: svc("nas.lan:8443", "https://nas.lan:8443", "https://nas.lan:8443")},
		{name: "rule with port holds", p: rules, edit: func(in *Input) {
			in.Service, in.Origins, in.AgentExe = "nas.lan:8443", []string{"https://nas.lan:8443"}, osPath("/usr/bin/other")
		}, check: CheckAgent},
		{name: "rule with port, other port", p: rules, edit: func(in *Input) {
			in.Service, in.Origins, in.AgentExe = "nas.lan:9443", []string{"https://nas.lan:9443"}, osPath("/usr/bin/other")
		}},
		{name: "rule with v6 port holds", p: rules, edit: func(in *Input) {
			in.Service, in.Origins, in.Field, in.FieldKind = "[::1]:8443", []string{"https://[::1]:8443"}, fieldOTP, fieldOTP
		}, check: CheckField},

		// subdomains = false: the exact host only.
		{name: "exact host", p: rules, edit: svc("exact.example", "https://exact.example")},
		{name: "exact host, subdomain page", p: rules, edit: svc("exact.example", "https://www.exact.example"), check: CheckOrigin, detail: "is not exact.example itself (the policy allows exact.example on that exact host only, not its subdomains)"},
		{name: "exact host, subdomain frame", p: rules, edit: svc("exact.example", "https://exact.example", "https://www.exact.example"), check: CheckFrame},
		{name: "exact host, subdomain service", p: rules, edit: svc("www.exact.example", "https://www.exact.example")},

		// Frame chains.
		{name: "same-origin iframe", edit: origins("https://github.com", "https://github.com")},
		{name: "subdomain frame in site", edit: origins("https://auth.github.com", "https://github.com")},
		{name: "site frame in subdomain", edit: origins("https://github.com", "https://www.github.com")},
		{name: "frame in other site", edit: origins("https://github.com", "https://evil.test"), check: CheckFrame, detail: "inside a page from https://evil.test"},
		{name: "frame deep in other site", edit: origins("https://github.com", "https://github.com", "https://evil.test"), check: CheckFrame},
		{name: "other site in the middle", edit: origins("https://github.com", "https://evil.test", "https://github.com"), check: CheckFrame},
		{name: "opaque ancestor", edit: origins("https://github.com", "null"), check: CheckFrame, detail: "opaque"},
		{name: "http ancestor", edit: origins("https://github.com", "http://github.com"), check: CheckFrame, detail: "not https"},
		{name: "look-alike ancestor", edit: origins("https://github.com", "https://github.com.evil.test"), check: CheckFrame},
		{name: "garbage ancestor", edit: origins("https://github.com", "https://a/b"), check: CheckFrame},
		{name: "loopback frames", edit: svc("127.0.0.1", "http://127.0.0.1:8080", "http://127.0.0.1:8080")},
		{name: "loopback frame in other loopback", edit: svc("127.0.0.2", "http://127.0.0.2:8081", "http://127.0.0.1:8080"), check: CheckFrame},
		{name: "named ancestor", p: rules, edit: svc("login.example.com", "https://login.example.com", "https://portal.example.net")},
		{name: "named loopback ancestor", p: rules, edit: svc("login.example.com", "https://login.example.com", "http://127.0.0.1:8080")},
		{name: "named ancestor, service is parent", p: rules, edit: svc("example.com", "https://login.example.com", "https://portal.example.net")},
		{name: "named ancestor, deeper page", p: rules, edit: svc("login.example.com", "https://a.login.example.com", "https://portal.example.net")},
		{name: "named ancestor, other port", p: rules, edit: svc("login.example.com", "https://login.example.com", "https://portal.example.net:8443"), check: CheckFrame},
		{name: "named ancestor, subdomain of it", p: rules, edit: svc("login.example.com", "https://login.example.com", "https://x.portal.example.net"), check: CheckFrame},
		{name: "named ancestor, plus another", p: rules, edit: svc("login.example.com", "https://login.example.com", "https://portal.example.net", "https://evil.test"), check: CheckFrame},
		{name: "named ancestor, page on sibling", p: rules, edit: svc("example.com", "https://www.example.com", "https://portal.example.net"), check: CheckFrame},
		{name: "named ancestor is not the focused frame", p: rules, edit: svc("login.example.com", "https://portal.example.net"), check: CheckOrigin},
		{name: "named ancestor for another service", p: rules, edit: origins("https://github.com", "https://portal.example.net"), check: CheckFrame},
		{name: "named ancestor without rules", edit: svc("login.example.com", "https://login.example.com", "https://portal.example.net"), check: CheckFrame},

		// Field kinds.
		{name: "one-time code", edit: func(in *Input) { in.Field, in.FieldKind = fieldOTP, fieldOTP }, detail: "one-time code field"},
		{name: "split code", edit: func(in *Input) { in.Field, in.FieldKind, in.FieldSplit = fieldOTP, fieldOTP, 6 }},
		{name: "split code max", edit: func(in *Input) { in.Field, in.FieldKind, in.FieldSplit = fieldOTP, fieldOTP, MaxSplit }},
		{name: "split code too many", edit: func(in *Input) { in.Field, in.FieldKind, in.FieldSplit = fieldOTP, fieldOTP, MaxSplit+1 }, check: CheckField},
		{name: "split code one box", edit: func(in *Input) { in.Field, in.FieldKind, in.FieldSplit = fieldOTP, fieldOTP, 1 }, check: CheckField},
		{name: "split negative", edit: func(in *Input) { in.Field, in.FieldKind, in.FieldSplit = fieldOTP, fieldOTP, -1 }, check: CheckField},
		{name: "split password", edit: func(in *Input) { in.FieldSplit = 6 }, check: CheckField, detail: "only one-time codes"},
		{name: "password asked, code focused", edit: func(in *Input) { in.FieldKind = fieldOTP }, check: CheckField, detail: "is a one-time code field, but a password was asked for"},
		{name: "code asked, password focused", edit: func(in *Input) { in.Field = fieldOTP }, check: CheckField, detail: "click into the one-time code field"},
		{name: "nothing focused", edit: func(in *Input) { in.FieldKind = fieldNone }, check: CheckField, detail: "click into the password field"},
		{name: "username focused", edit: func(in *Input) { in.FieldKind = fieldOther }, check: CheckField, detail: "click into the password field"},
		{name: "nothing focused, code", edit: func(in *Input) { in.Field, in.FieldKind = fieldOTP, fieldNone }, check: CheckField, detail: "click into the one-time code field"},
		{name: "unknown kind", edit: func(in *Input) { in.FieldKind = "text" }, check: CheckField},
		{name: "empty kind", edit: func(in *Input) { in.FieldKind = "" }, check: CheckField},
		{name: "field alias otp", edit: func(in *Input) { in.Field, in.FieldKind = "otp", fieldOTP }, check: CheckField, detail: "not valid"},
		{name: "empty field", edit: func(in *Input) { in.Field = "" }, check: CheckField},
		{name: "hidden", edit: func(in *Input) { in.FieldProblem = "hidden" }, check: CheckField, detail: "is hidden"},
		{name: "tiny", edit: func(in *Input) { in.FieldProblem = "tiny" }, check: CheckField, detail: "too small"},
		{name: "covered", edit: func(in *Input) { in.FieldProblem = "covered" }, check: CheckField, detail: "covered by another element"},
		{name: "transparent", edit: func(in *Input) { in.FieldProblem = "transparent" }, check: CheckField, detail: "transparent"},
		{name: "offscreen", edit: func(in *Input) { in.FieldProblem = "offscreen" }, check: CheckField, detail: "outside the visible part"},
		{name: "disabled", edit: func(in *Input) { in.FieldProblem = "disabled" }, check: CheckField, detail: "disabled"},
		{name: "readonly", edit: func(in *Input) { in.FieldProblem = "readonly" }, check: CheckField, detail: "read-only"},
		{name: "background", edit: func(in *Input) { in.FieldProblem = "background" }, check: CheckField, detail: "tab or window that is not shown"},
		{name: "masked", edit: func(in *Input) { in.FieldProblem = "masked" }, check: CheckField, detail: "CSS mask"},
		{name: "clipped", edit: func(in *Input) { in.FieldProblem = "clipped" }, check: CheckField, detail: "clipped away"},
		{name: "filtered", edit: func(in *Input) { in.FieldProblem = "filtered" }, check: CheckField, detail: "CSS filter"},
		{name: "blurred", edit: func(in *Input) { in.FieldProblem = "blurred" }, check: CheckField, detail: "is blurred"},
		{name: "blended", edit: func(in *Input) { in.FieldProblem = "blended" }, check: CheckField, detail: "mix-blend-mode"},
		{name: "unreadable", edit: func(in *Input) { in.FieldProblem = "unreadable" }, check: CheckField, detail: "colour that cannot be seen"},
		{name: "unclickable", edit: func(in *Input) { in.FieldProblem = "unclickable" }, check: CheckField, detail: "pointer-events: none"},
		{name: "unknown problem", edit: func(in *Input) { in.FieldProblem = "<b>odd</b>" }, check: CheckField, detail: `not usable ("<b>odd</b>")`},
		{name: "problem on code", edit: func(in *Input) { in.Field, in.FieldKind, in.FieldProblem = fieldOTP, fieldOTP, "covered" }, check: CheckField},
		{name: "origin checked before field", edit: func(in *Input) { in.Origins, in.FieldKind = []string{"https://evil.test"}, fieldNone }, check: CheckOrigin},

		// Paths.
		{name: "cdp", edit: func(in *Input) { in.Via = ViaCDP }},
		{name: "via auto is not a path", edit: func(in *Input) { in.Via = ViaAuto }, check: CheckVia},
		{name: "empty via", edit: func(in *Input) { in.Via = "" }, check: CheckVia},

		// Rules: agents, fields, paths.
		{name: "rule allows", p: rules, edit: svc("guarded.example", "https://guarded.example")},
		{name: "rule, other agent", p: rules, edit: func(in *Input) {
			in.Service, in.Origins, in.AgentExe = "guarded.example", []string{"https://guarded.example"}, osPath("/usr/bin/other")
		}, check: CheckAgent, detail: quote(osPath("/usr/bin/other")) + " is not one of them"},
		{name: "rule, agent path prefix", p: rules, edit: func(in *Input) {
			in.Service, in.Origins, in.AgentExe = "guarded.example", []string{"https://guarded.example"}, osPath("/usr/bin/agent2")
		}, check: CheckAgent},
		{name: "rule, unknown agent", p: rules, edit: func(in *Input) {
			in.Service, in.Origins, in.AgentExe = "guarded.example", []string{"https://guarded.example"}, ""
		}, check: CheckAgent, detail: "executable is unknown"},
		{name: "rule, field not allowed", p: rules, edit: func(in *Input) {
			in.Service, in.Origins, in.Field, in.FieldKind = "guarded.example", []string{"https://guarded.example"}, fieldOTP, fieldOTP
		}, check: CheckField, detail: "does not allow filling a one-time code"},
		{name: "rule, path not allowed", p: rules, edit: func(in *Input) {
			in.Service, in.Origins, in.Via = "guarded.example", []string{"https://guarded.example"}, ViaCDP
		}, check: CheckVia, detail: "only through the extension, not the DevTools protocol"},
		{name: "parent rule holds for subdomain service", p: rules, edit: func(in *Input) {
			in.Service, in.Origins, in.AgentExe = "accounts.example.org", []string{"https://accounts.example.org"}, osPath("/usr/bin/other")
		}, check: CheckAgent},
		{name: "parent rule, listed agent", p: rules, edit: svc("accounts.example.org", "https://accounts.example.org")},
		{name: "both rules hold", p: rules, edit: func(in *Input) {
			in.Service, in.Origins, in.AgentExe = "example.org", []string{"https://login.example.org", "https://portal.example.net"}, osPath("/usr/bin/other")
		}, check: CheckAgent},
		{name: "ancestors from the nearer rule", p: rules, edit: svc("example.org", "https://login.example.org", "https://portal.example.net")},
		{name: "rule for other service", p: rules, edit: func(in *Input) { in.AgentExe = osPath("/usr/bin/other"); in.Via = ViaCDP }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := base()
			if c.edit != nil {
				c.edit(&in)
			}
			d := c.p.Evaluate(in)
			if d.Allow != (c.check == "") || d.Check != c.check {
				t.Fatalf("Evaluate(%+v) = %+v; want check %q", in, d, c.check)
			}
			if !strings.Contains(d.Detail, c.detail) {
				t.Errorf("detail %q does not say %q", d.Detail, c.detail)
			}
			if d.Detail == "" || !strings.HasSuffix(d.Detail, ".") || d.Detail[0] < 'A' || d.Detail[0] > 'Z' {
				t.Errorf("detail %q is not a sentence", d.Detail)
			}
		})
	}
}

func TestEvaluateDoesNotChangeInput(t *testing.T) {
	p := mustParse(t, rulesText)
	in := base()
	in.Service, in.Origins = "login.example.com", []string{"https://login.example.com", "https://portal.example.net"}
	want := append([]string(nil), in.Origins...)
	for range 2 {
		if d := p.Evaluate(in); !d.Allow {
			t.Fatalf("Evaluate = %+v; want allowed", d)
		}
	}
	for i := range want {
		if in.Origins[i] != want[i] {
			t.Fatalf("Evaluate changed its input")
		}
	}
}

func TestEvaluateNilPolicyIsDefault(t *testing.T) {
	var p *Policy
	if d := p.Evaluate(base()); !d.Allow {
		t.Fatalf("nil policy refused %+v: %+v", base(), d)
	}
}

func BenchmarkEvaluate(b *testing.B) {
	p := mustParse(b, string(example)+rulesText[strings.Index(rulesText, "[service.\"guarded"):])
	in := base()
	in.Service, in.Origins = "example.org", []string{"https://login.example.org", "https://www.example.org", "https://portal.example.net"}
	b.Run("allow", func(b *testing.B) {
		for b.Loop() {
			if !p.Evaluate(in).Allow {
				b.Fatal("refused")
			}
		}
	})
	evil := base()
	evil.Origins = []string{"https://github.com", "https://evil.test"}
	b.Run("refuse", func(b *testing.B) {
		for b.Loop() {
			if p.Evaluate(evil).Allow {
				b.Fatal("allowed")
			}
		}
	})
}
