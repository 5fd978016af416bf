package doctor

import "testing"

func TestNewer(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"0.2.0", "0.1.0", true}, {"0.10.0", "0.9.0", true}, {"1.0", "0.9.9", true}, {"0.1.0.1", "0.1.0", true},
		{"0.1.0", "0.1.0", false}, {"0.1.0", "0.2.0", false}, {"0.1.0", "0.1.0.0", false}, {"x", "0.1.0", false}, {"0.2.0", "", false},
	} {
		if got := newer(c.a, c.b); got != c.want {
			t.Errorf("%s > %s: got %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
