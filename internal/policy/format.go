package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// formatDuration writes d the way the file spells durations: 90s, 10m, 2h.
func formatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d < 0 || d%time.Second != 0:
		return d.String()
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return strconv.FormatInt(int64(d/time.Second), 10) + "s"
}

// tomlString writes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < ' ' || r == 0x7f || r == utf8.RuneError:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlList writes a list of strings as a TOML array.
func tomlList(items []string) string {
	q := make([]string, len(items))
	for i, it := range items {
		q[i] = tomlString(it)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Format writes p as a TOML policy file that Parse reads back to the same
// policy: every top-level setting, then every rule with its source tables.
func (p *Policy) Format() []byte {
	var b strings.Builder
	w := func(key, value string) { fmt.Fprintf(&b, "%s = %s\n", key, value) }
	w(keyPromptBudget, tomlString(formatDuration(p.PromptBudget)))
	w(keyCooldown, tomlString(formatDuration(p.NoResponseCooldown)))
	w(keyRateLimit, tomlString(fmt.Sprintf("%d/%s", p.RateLimit, formatDuration(p.RateWindow))))
	if p.CDPURL != "" {
		w(keyCDPURL, tomlString(p.CDPURL))
	} else {
		fmt.Fprintf(&b, "# %s is not set: FILLGATE_CDP_URL, BROWSER_CDP_URL or http://127.0.0.1:9222 apply\n", keyCDPURL)
	}
	if len(p.CDPAllowHosts) > 0 {
		w(keyCDPAllowHosts, tomlList(p.CDPAllowHosts))
	} else {
		fmt.Fprintf(&b, "# %s is not set: CDP endpoints must be on loopback\n", keyCDPAllowHosts)
	}
	w(keyPromptOpener, tomlString(p.PromptOpener))
	w(keyVia, tomlString(p.Via))
	w(keyPrompt, tomlString(p.Prompt))
	if p.Pinentry != "" {
		w(keyPinentry, tomlString(p.Pinentry))
	}
	w(keyDriven, tomlString(p.Driven))
	if p.RoomBrowser != "" {
		w(keyRoomBrowser, tomlString(p.RoomBrowser))
	}
	for _, r := range p.Rules {
		fmt.Fprintf(&b, "\n%s\n", serviceTable(r.Service))
		for _, kv := range []struct {
			key  string
			list []string
		}{{keyFrameAncestors, r.FrameAncestors}, {keyAgents, r.Agents}, {keyFields, r.Fields}, {keyAllowVia, r.AllowVia}} {
			if len(kv.list) > 0 {
				w(kv.key, tomlList(kv.list))
			}
		}
		if r.Then != "" {
			w(keyThen, tomlString(r.Then))
		}
		if r.Driven != "" {
			w(keyDriven, tomlString(r.Driven))
		}
		if r.Subdomains != nil {
			w(keySubdomains, strconv.FormatBool(*r.Subdomains))
		}
		if r.Approval != "" {
			w(keyApproval, tomlString(r.Approval))
		}
		if r.Lease != 0 {
			w(keyLease, tomlString(formatDuration(r.Lease)))
		}
		if r.Remember != nil {
			w(keyRemember, strconv.FormatBool(*r.Remember))
		}
		for _, fs := range []struct {
			key string
			src *Source
		}{{keyPassword, r.Password}, {keyOTP, r.OTP}} {
			if fs.src == nil {
				continue
			}
			fmt.Fprintf(&b, "\n[service.%s.%s]\n", tomlString(r.Service), fs.key)
			for _, key := range sourceKeys() {
				if v := fs.src.get(key); v != "" || key == keySource {
					w(key, tomlString(v))
				}
			}
		}
	}
	return []byte(b.String())
}
