package cleanroom

import (
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/websession"
)

func TestRoomURL(t *testing.T) {
	for _, c := range []struct {
		raw, want string // want "" means refused
	}{
		{"https://example.com/login", "https://example.com/login"},
		{"https://example.com/login?next=%2Fhome&lang=en", "https://example.com/login?next=%2Fhome&lang=en"},
		{"https://idp.example/authorize?client=app&state=Zx_9-a&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&scope=openid+profile",
			"https://idp.example/authorize?client=app&state=Zx_9-a&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&scope=openid+profile"},
		{"https://example.com/app/#/login", "https://example.com/app/#/login"},
		{"https://example.com/app/#!/sign-in", "https://example.com/app/#!/sign-in"},
		{"https://example.com/login;jsessionid=ABC123", "https://example.com/login;jsessionid=ABC123"},
		// A fragment that is not a plain route is left out.
		{"https://example.com/login#alert(1)", "https://example.com/login"},
		{"https://example.com/login#fetch(`//x`+pw.value)", "https://example.com/login"},
		{"https://example.com/login#token=abc", "https://example.com/login"},
		// Refused: markup or script in the query or path, however encoded.
		{"https://example.com/login?error=<script>x</script>", ""},
		{"https://example.com/login?error=%3Cscript%3E", ""},
		{"https://example.com/login?error=%253Cscript%253E", ""},
		{"https://example.com/login?error=%26lt%3Bscript%26gt%3B", ""},
		{"https://example.com/login?e=%22%20onfocus%3Dx", ""},
		{"https://example.com/login?cb=x%3Balert%601%60", ""},
		{"https://example.com/login?next=javascript:alert", ""},
		{"https://example.com/login?next=JavaScript%3Aalert", ""},
		{"https://example.com/login?n=a%0Ab", ""},
		{"https://example.com/a%3Cb/login", ""},
		{"https://example.com/login(1)", ""},
		{"https://user:pw@example.com/login", ""},
	} {
		got, err := roomURL(c.raw)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("roomURL(%q) = %q; want it refused", c.raw, got)
		case c.want != "" && err != nil:
			t.Errorf("roomURL(%q): %v; want %q", c.raw, err, c.want)
		case c.want != "" && got != c.want:
			t.Errorf("roomURL(%q) = %q; want %q", c.raw, got, c.want)
		}
	}
}

func TestRoomAccount(t *testing.T) {
	for account, ok := range map[string]bool{
		"ada":                           true,
		"ada.lovelace+work@example.com": true,
		"o'brien@example.ie":            true,
		"":                              true,
		"<img src=x onerror=x>":         false,
		`ada" autofocus onfocus=x`:      false,
		"ada%3Cb%3E":                    false,
		"x');alert(1);//":               false,
		"ada\nb":                        false,
	} {
		if err := roomAccount(account); (err == nil) != ok {
			t.Errorf("roomAccount(%q): %v; want ok %v", account, err, ok)
		}
	}
}

func TestRoomCookies(t *testing.T) {
	in := []websession.Cookie{
		{Name: "sid", Value: "Zm9vYmFyYmF6cXV4"},
		{Name: "jwt", Value: "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZGEifQ."},
		{Name: "device", Value: "a1b2c3=="},
		{Name: "banner", Value: "<script>eval(atob(/x/.source))</script>"},
		{Name: "theme", Value: "dark%22%3E%3Cscript%3E"},
		{Name: "prefs", Value: `{"consent":true}`},
		{Name: "x<y", Value: "1"},
	}
	kept, left := roomCookies(in)
	var names []string
	for _, c := range kept {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "sid,jwt,device" || left != 4 {
		t.Errorf("kept %s, left out %d; want sid,jwt,device and 4", got, left)
	}
}

func TestRoomTab(t *testing.T) {
	const chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
	for ua, keep := range map[string]bool{
		chrome: true,
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36 Edg/142.0.0.0": true,
		"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Mobile Safari/537.36":               true,
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/142.0.0.0 Safari/537.36":                 true,
		"Mozilla/5.0 (X11; <script>x</script>) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36":                   false,
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36 x;alert(1)":              false,
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36\n":                       false,
		"curl/8.0": false,
		"":         false,
	} {
		got, _ := roomTab(websession.Tab{UserAgent: ua})
		if (got != "" && got == ua) != keep {
			t.Errorf("roomTab(%q) took %q; want it kept %v", ua, got, keep)
		}
	}
	_, langs := roomTab(websession.Tab{UserAgent: chrome, Languages: []string{"en-US", "en", "de-CH-1996", "x<y>", "en;q=0.9", ""}})
	if got := strings.Join(langs, ","); got != "en-US,en,de-CH-1996" {
		t.Errorf("languages %s", got)
	}
}

func TestWithoutParams(t *testing.T) {
	for _, c := range []struct{ raw, opened, want string }{
		{"https://a.example/home?next=c1~c2&sid=1", "https://a.example/login?next=c1~c2", "https://a.example/home?sid=1"},
		{"https://a.example/home?next=other", "https://a.example/login?next=c1", "https://a.example/home?next=other"},
		{"https://a.example/#/home/c1", "https://a.example/#/home/c1", "https://a.example/"},
		{"https://a.example/#/home/c1", "https://a.example/#/login", "https://a.example/#/home/c1"},
	} {
		if got := withoutParams(c.raw, c.opened); got != c.want {
			t.Errorf("withoutParams(%q, %q) = %q; want %q", c.raw, c.opened, got, c.want)
		}
	}
}
