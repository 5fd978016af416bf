package policy

import "testing"

func TestServes(t *testing.T) {
	p := Default()
	for _, c := range []struct {
		service, field, origin, kind string
		want                         bool
	}{
		{"github.com", fieldPassword, "https://github.com", fieldPassword, true},
		{"github.com", fieldPassword, "https://gist.github.com", fieldPassword, true},
		{"github.com", fieldOTP, "https://github.com", fieldOTP, true},
		{"github.com", fieldOTP, "https://github.com", fieldPassword, false},
		{"github.com", fieldPassword, "https://github.com", fieldOther, false},
		{"github.com", fieldPassword, "http://github.com", fieldPassword, false},
		{"github.com", fieldPassword, "https://github.com.evil.test", fieldPassword, false},
		{"github.com", fieldPassword, "https://github.com:8443", fieldPassword, false},
		{"com", fieldPassword, "https://github.com", fieldPassword, false},
		{"localhost", fieldPassword, "http://localhost:8080", fieldPassword, true},
		{"github.com", fieldPassword, "null", fieldPassword, false},
		{"github.com", "other", "https://github.com", "other", false},
		{"github.com:8443", fieldPassword, "https://github.com:8443", fieldPassword, true},
		{"github.com:8443", fieldPassword, "https://github.com", fieldPassword, false},
		{"192.168.1.1:8443", fieldPassword, "https://192.168.1.1:8443", fieldPassword, true},
	} {
		if got := p.Serves(c.service, c.field, c.origin, c.kind); got != c.want {
			t.Errorf("Serves(%q, %q, %q, %q) = %v, want %v", c.service, c.field, c.origin, c.kind, got, c.want)
		}
	}
}
