package envlist

import "testing"

func TestGet(t *testing.T) {
	env := []string{"HOME=/a", "PATH=/bin", "HOME=/b", "EMPTY=", "NOEQUALS"}
	for key, want := range map[string]string{"HOME": "/b", "PATH": "/bin", "EMPTY": "", "NOEQUALS": "", "MISSING": ""} {
		if got := Get(env, key); got != want {
			t.Errorf("Get(%q) = %q, want %q", key, got, want)
		}
	}
}
