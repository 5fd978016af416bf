package sessionsite

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// The tests log in with Go's HTTP client; a failure message never holds
// the password (only "matched" or a status).

// newClient is a browser stand-in: a cookie jar, redirects followed.
func newClient(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar}
}

// noFollow is c without following redirects.
func noFollow(c *http.Client) *http.Client {
	return &http.Client{Jar: c.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// do sends req with c and returns the answer and its body.
func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read: %v", req.Method, req.URL.Path, err)
	}
	return resp, string(body)
}

// get GETs u with c.
func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, c, req)
}

// post POSTs the form vals to u with c.
func post(t *testing.T, c *http.Client, u string, vals url.Values) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(vals.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(t, c, req)
}

// postJSONBody POSTs the JSON body to u with c.
func postJSONBody(t *testing.T, c *http.Client, u, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return do(t, c, req)
}

// jsonCreds is a script login's JSON body.
func jsonCreds(t *testing.T, fields map[string]string) string {
	t.Helper()
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantWhoAmI fails t unless u answers c with status (and, for 200, "ada").
func wantWhoAmI(t *testing.T, c *http.Client, u string, status int) {
	t.Helper()
	resp, body := get(t, c, u)
	if resp.StatusCode != status || (status == http.StatusOK && body != User) {
		t.Errorf("GET %s: %d %q, want %d", resp.Request.URL.Path, resp.StatusCode, body, status)
	}
}

// ada is the form fields of a login as ada with pw.
func ada(pw []byte) url.Values {
	return url.Values{"user": {User}, "password": {string(pw)}}
}

// csrfField finds the CSRF token in a login page.
var csrfField = regexp.MustCompile(`name=csrf value="([^"]*)"`)

// formLogins log c in to an archetype that needs no script, with pw, and
// return the last answer (redirects followed).
var formLogins = map[string]func(t *testing.T, s *Site, c *http.Client, pw []byte) (*http.Response, string){
	"form":        classicLogin("form"),
	"dbsc":        classicLogin("dbsc"),
	"redirect307": classicLogin("redirect307"),
	"steps": func(t *testing.T, s *Site, c *http.Client, pw []byte) (*http.Response, string) {
		a := s.Archetype("steps")
		resp, body := post(t, c, a.Login, url.Values{"user": {User}})
		if resp.Request.URL.Path != "/steps/password" || !strings.Contains(body, "id=pw") {
			t.Fatalf("steps: the first step ended at %s (%d), not on the password page", resp.Request.URL.Path, resp.StatusCode)
		}
		return post(t, c, s.App+"/steps/password", url.Values{"password": {string(pw)}})
	},
	"csrf": func(t *testing.T, s *Site, c *http.Client, pw []byte) (*http.Response, string) {
		a := s.Archetype("csrf")
		_, body := get(t, c, a.Login)
		m := csrfField.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("csrf: no token in the login page")
		}
		vals := ada(pw)
		vals.Set("csrf", m[1])
		return post(t, c, a.Login, vals)
	},
	"oauth": func(t *testing.T, s *Site, c *http.Client, pw []byte) (*http.Response, string) {
		resp, _ := get(t, c, s.OAuthStart())
		return authorize(t, s, c, resp.Request.URL, pw)
	},
}

// classicLogin GETs the login page of arch and posts its form.
func classicLogin(arch string) func(t *testing.T, s *Site, c *http.Client, pw []byte) (*http.Response, string) {
	return func(t *testing.T, s *Site, c *http.Client, pw []byte) (*http.Response, string) {
		a := s.Archetype(arch)
		if resp, body := get(t, c, a.Login); resp.StatusCode != http.StatusOK || !strings.Contains(body, "id=pw") {
			t.Fatalf("%s: the login page: %d, field pw there: %v", arch, resp.StatusCode, strings.Contains(body, "id=pw"))
		}
		return post(t, c, a.Login, ada(pw))
	}
}

// authorize posts the IdP's login form for the authorization request at u.
func authorize(t *testing.T, s *Site, c *http.Client, u *url.URL, pw []byte) (*http.Response, string) {
	t.Helper()
	if got := u.Scheme + "://" + u.Host + u.Path; got != s.Archetype("oauth").Login {
		t.Fatalf("oauth: the start ended at %s, not at the IdP's /authorize", got)
	}
	vals := ada(pw)
	for _, k := range []string{"client", "state", "redirect_uri"} {
		vals.Set(k, u.Query().Get(k))
	}
	return post(t, c, s.IdP+"/authorize", vals)
}

// start is a site with a random right password.
func start(t *testing.T) (*Site, []byte) {
	s := Start(t)
	pw := leakscan.NewSecret(t)
	s.SetPassword(pw)
	return s, pw
}

func TestFormLogins(t *testing.T) {
	for name, login := range formLogins {
		t.Run(name, func(t *testing.T) {
			s, pw := start(t)
			a := s.Archetype(name)

			c := newClient(t)
			resp, _ := login(t, s, c, leakscan.NewSecret(t))
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("a wrong password: %d at %s, want 401", resp.StatusCode, resp.Request.URL.Path)
			}
			wantWhoAmI(t, c, a.WhoAmI, http.StatusUnauthorized)
			if n := s.Logins(name); n != 0 {
				t.Errorf("Logins after a wrong password: %d", n)
			}

			c = newClient(t)
			resp, body := login(t, s, c, pw)
			if resp.StatusCode != http.StatusOK || resp.Request.URL.String() != a.Home || !strings.Contains(body, "id=welcome") {
				t.Errorf("the right password ended at %s (%d, #welcome there: %v), want %s", resp.Request.URL, resp.StatusCode, strings.Contains(body, "id=welcome"), a.Home)
			}
			wantWhoAmI(t, c, a.WhoAmI, http.StatusOK)
			if resp, body := get(t, c, a.Home); resp.Request.URL.String() != a.Home || !strings.Contains(body, "id=welcome") {
				t.Errorf("home again: ended at %s", resp.Request.URL)
			}
			if n := s.Logins(name); n != 1 {
				t.Errorf("Logins: %d, want 1", n)
			}

			fresh := newClient(t)
			wantWhoAmI(t, fresh, a.WhoAmI, http.StatusUnauthorized)
			if resp, _ := get(t, fresh, a.Home); resp.Request.URL.String() == a.Home {
				t.Errorf("home without cookies: not sent away")
			}
		})
	}
}

func TestNoPasswordSetNoLogin(t *testing.T) {
	s := Start(t)
	resp, _ := post(t, newClient(t), s.Archetype("form").Login, ada(nil))
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an empty password before SetPassword: %d, want 401", resp.StatusCode)
	}
}

func TestStepsNeedThePendingLogin(t *testing.T) {
	s, pw := start(t)
	c := newClient(t)
	resp, _ := post(t, c, s.App+"/steps/password", url.Values{"user": {User}, "password": {string(pw)}})
	if resp.Request.URL.Path != "/steps/login" || s.Logins("steps") != 0 {
		t.Errorf("a password step without the first: ended at %s, logins %d", resp.Request.URL.Path, s.Logins("steps"))
	}
}

func TestOAuthWithoutTheStateCookie(t *testing.T) {
	s, pw := start(t)
	resp, _ := get(t, noFollow(newClient(t)), s.OAuthStart())
	u, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil {
		t.Fatalf("start: %d, Location %v", resp.StatusCode, err)
	}
	// Another browser (without App's state cookie) goes on from there.
	resp, body := authorize(t, s, newClient(t), u, pw)
	if resp.StatusCode != http.StatusBadRequest || resp.Request.URL.Path != "/oauth/callback" || !strings.Contains(body, "state mismatch") {
		t.Errorf("a callback without the state cookie: %d at %s, want 400 state mismatch", resp.StatusCode, resp.Request.URL.Path)
	}
	if n := s.Logins("oauth"); n != 0 {
		t.Errorf("Logins: %d, want 0", n)
	}
}

func TestOAuthCallbackOnce(t *testing.T) {
	s, pw := start(t)
	c := newClient(t)
	resp, _ := get(t, c, s.OAuthStart())
	resp, _ = authorize(t, s, noFollow(c), resp.Request.URL, pw)
	back := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(back, s.App+"/oauth/callback?") {
		t.Fatalf("authorize: %d to %s", resp.StatusCode, back)
	}
	if resp, _ := get(t, c, back); resp.Request.URL.String() != s.Archetype("oauth").Home {
		t.Fatalf("callback: ended at %s", resp.Request.URL)
	}
	if resp, _ := get(t, c, back); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("the same callback again: %d, want 400", resp.StatusCode)
	}
}

func TestOAuthSingleSignOn(t *testing.T) {
	s, pw := start(t)
	c := newClient(t)
	formLogins["oauth"](t, s, c, pw)
	// The IdP knows the browser now: a new start comes straight back.
	resp, body := get(t, c, s.OAuthStart())
	if resp.Request.URL.String() != s.Archetype("oauth").Home || !strings.Contains(body, "id=welcome") {
		t.Errorf("a second start ended at %s", resp.Request.URL)
	}
	if n := s.Logins("oauth"); n != 2 {
		t.Errorf("Logins: %d, want 2", n)
	}
	// The IdP's session does not open App.
	idp := cookieValue(t, c, s.IdP, "idp")
	req, _ := http.NewRequest(http.MethodGet, s.Archetype("oauth").WhoAmI, nil)
	req.AddCookie(&http.Cookie{Name: "app", Value: idp})
	if resp, _ := do(t, &http.Client{}, req); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the IdP session as App's: %d, want 401", resp.StatusCode)
	}
}

func TestCSRFWrongToken(t *testing.T) {
	s, pw := start(t)
	c := newClient(t)
	get(t, c, s.Archetype("csrf").Login)
	vals := ada(pw)
	vals.Set("csrf", "not-the-token")
	if resp, _ := post(t, c, s.Archetype("csrf").Login, vals); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a wrong token: %d, want 403", resp.StatusCode)
	}

	// The right token from another browser's page: no pre-session here.
	_, body := get(t, c, s.Archetype("csrf").Login)
	vals.Set("csrf", csrfField.FindStringSubmatch(body)[1])
	if resp, _ := post(t, newClient(t), s.Archetype("csrf").Login, vals); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a token without its pre-session: %d, want 403", resp.StatusCode)
	}
	if n := s.Logins("csrf"); n != 0 {
		t.Errorf("Logins: %d, want 0", n)
	}
}

func TestDBSCHeader(t *testing.T) {
	s, pw := start(t)
	const want = `(ES256);path="/dbsc/register";challenge="c1"`
	c := noFollow(newClient(t))
	if resp, _ := post(t, c, s.Archetype("dbsc").Login, ada(leakscan.NewSecret(t))); resp.Header.Get("Secure-Session-Registration") != "" {
		t.Errorf("a wrong password got the registration header")
	}
	resp, _ := post(t, c, s.Archetype("dbsc").Login, ada(pw))
	if got := resp.Header.Get("Secure-Session-Registration"); resp.StatusCode != http.StatusSeeOther || got != want {
		t.Errorf("the login's answer: %d, Secure-Session-Registration %q, want 303 and %q", resp.StatusCode, got, want)
	}
}

func TestRedirect307(t *testing.T) {
	s, pw := start(t)
	a := s.Archetype("redirect307")
	resp, _ := post(t, noFollow(newClient(t)), a.Login, ada(pw))
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != s.IdP+"/collect" {
		t.Errorf("the login's answer: %d to %s, want 307 to %s/collect", resp.StatusCode, resp.Header.Get("Location"), s.IdP)
	}
	if n := s.ReceivedAt(s.IdP, "/collect", pw); n != 0 {
		t.Errorf("/collect received the password %d times without a redirect followed", n)
	}
	// A client that follows it sends the password on, and /collect sees it.
	formLogins["redirect307"](t, s, newClient(t), pw)
	if n := s.ReceivedAt(s.IdP, "/collect", pw); n != 1 {
		t.Errorf("/collect after a followed 307: the password matched in %d requests, want 1", n)
	}
}

func TestCookies(t *testing.T) {
	s, pw := start(t)
	a := s.Archetype("cookies")
	c := noFollow(&http.Client{})
	if resp, _ := post(t, c, a.Login, ada(leakscan.NewSecret(t))); resp.StatusCode != http.StatusUnauthorized || len(resp.Header.Values("Set-Cookie")) != 0 {
		t.Errorf("a wrong password: %d with %d cookies, want 401 and none", resp.StatusCode, len(resp.Header.Values("Set-Cookie")))
	}
	resp, _ := post(t, c, a.Login, ada(pw))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/cookies/home" {
		t.Fatalf("the right password: %d to %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	cookies := map[string]*http.Cookie{}
	for _, line := range resp.Header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			t.Fatalf("Set-Cookie: %v", err)
		}
		cookies[c.Name] = c
		if c.Name == "lax" && strings.Contains(line, "SameSite") {
			t.Errorf("lax has a SameSite attribute")
		}
	}
	type attrs struct {
		secure, httpOnly, partitioned bool
		sameSite                      http.SameSite
	}
	for name, want := range map[string]attrs{
		"__Host-sid": {secure: true, httpOnly: true, sameSite: http.SameSiteStrictMode},
		"pt":         {secure: true, partitioned: true, sameSite: http.SameSiteNoneMode},
		"lax":        {},
	} {
		c := cookies[name]
		if c == nil {
			t.Errorf("no cookie %s", name)
			continue
		}
		if got := (attrs{c.Secure, c.HttpOnly, c.Partitioned, c.SameSite}); got != want || c.Path != "/" || c.Domain != "" {
			t.Errorf("%s: %+v path %q domain %q, want %+v path / and no domain", name, got, c.Path, c.Domain, want)
		}
	}
	send := func(names ...string) int {
		req, _ := http.NewRequest(http.MethodGet, a.WhoAmI, nil)
		for _, n := range names {
			if c := cookies[n]; c != nil {
				req.AddCookie(&http.Cookie{Name: n, Value: c.Value})
			}
		}
		resp, _ := do(t, c, req)
		return resp.StatusCode
	}
	if got := send("__Host-sid", "pt", "lax"); got != http.StatusOK {
		t.Errorf("whoami with all three: %d, want 200", got)
	}
	for _, names := range [][]string{{"pt", "lax"}, {"__Host-sid", "lax"}, {"__Host-sid", "pt"}} {
		if got := send(names...); got != http.StatusUnauthorized {
			t.Errorf("whoami with only %v: %d, want 401", names, got)
		}
	}
	if n := s.Logins("cookies"); n != 1 {
		t.Errorf("Logins: %d, want 1", n)
	}
}

func TestToken(t *testing.T) {
	s, pw := start(t)
	c := &http.Client{}
	api := s.App + "/api/token"
	if resp, _ := postJSONBody(t, c, api, jsonCreds(t, map[string]string{"user": User, "password": string(leakscan.NewSecret(t))})); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong password: %d, want 401", resp.StatusCode)
	}
	resp, body := postJSONBody(t, c, api, jsonCreds(t, map[string]string{"user": User, "password": string(pw)}))
	var got struct{ Token, Tab string }
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil || got.Token == "" || got.Tab == "" {
		t.Fatalf("the right password: %d, token and tab there: %v", resp.StatusCode, got.Token != "" && got.Tab != "")
	}
	me := func(token, tab string) int {
		req, _ := http.NewRequest(http.MethodGet, s.App+"/api/me", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-Tab", tab)
		resp, body := do(t, c, req)
		if resp.StatusCode == http.StatusOK && body != User {
			t.Errorf("/api/me: %q", body)
		}
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name       string
		token, tab string
		want       int
	}{
		{"token and tab", got.Token, got.Tab, http.StatusOK},
		{"no tab", got.Token, "", http.StatusUnauthorized},
		{"another tab", got.Token, got.Tab + "x", http.StatusUnauthorized},
		{"another token", got.Tab, got.Tab, http.StatusUnauthorized},
	} {
		if code := me(tc.token, tc.tab); code != tc.want {
			t.Errorf("/api/me with %s: %d, want %d", tc.name, code, tc.want)
		}
	}
	for _, u := range []string{s.Archetype("token").Login, s.Archetype("token").Home, s.Archetype("token").WhoAmI} {
		if resp, body := get(t, c, u); resp.StatusCode != http.StatusOK || !strings.Contains(body, "<script>") {
			t.Errorf("%s: %d, script there: %v", u, resp.StatusCode, strings.Contains(body, "<script>"))
		}
	}
	if n := s.Logins("token"); n != 1 {
		t.Errorf("Logins: %d, want 1", n)
	}
}

func TestMemory(t *testing.T) {
	s, pw := start(t)
	a := s.Archetype("memory")
	api := s.App + "/api/memory"
	c := newClient(t)
	if resp, _ := postJSONBody(t, c, api, jsonCreds(t, map[string]string{"user": User, "password": string(leakscan.NewSecret(t))})); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong password: %d, want 401", resp.StatusCode)
	}
	wantWhoAmI(t, c, a.WhoAmI, http.StatusUnauthorized)
	if resp, _ := postJSONBody(t, c, api, jsonCreds(t, map[string]string{"user": User, "password": string(pw)})); resp.StatusCode != http.StatusOK {
		t.Fatalf("the right password: %d, want 200", resp.StatusCode)
	}
	wantWhoAmI(t, c, a.WhoAmI, http.StatusOK)
	if resp, body := get(t, c, a.Home); resp.Request.URL.String() != a.Home || !strings.Contains(body, "id=welcome") {
		t.Errorf("home: ended at %s", resp.Request.URL)
	}
	wantWhoAmI(t, newClient(t), a.WhoAmI, http.StatusUnauthorized)
}

func TestHashed(t *testing.T) {
	s, pw := start(t)
	a := s.Archetype("hashed")
	sum := sha256.Sum256(pw)
	c := newClient(t)
	wrong := sha256.Sum256(leakscan.NewSecret(t))
	if resp, _ := postJSONBody(t, c, s.App+"/api/hashed", jsonCreds(t, map[string]string{"user": User, "hash": hex.EncodeToString(wrong[:])})); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong hash: %d, want 401", resp.StatusCode)
	}
	if resp, _ := postJSONBody(t, c, s.App+"/api/hashed", jsonCreds(t, map[string]string{"user": User, "hash": hex.EncodeToString(sum[:])})); resp.StatusCode != http.StatusOK {
		t.Fatalf("the right hash: %d, want 200", resp.StatusCode)
	}
	wantWhoAmI(t, c, a.WhoAmI, http.StatusOK)
	if n := s.Received(pw); n != 0 {
		t.Errorf("Received(password): %d, want 0", n)
	}
	if n := s.ReceivedHash(pw); n != 1 {
		t.Errorf("ReceivedHash(password): %d, want 1", n)
	}
	if n := s.Logins("hashed"); n != 1 {
		t.Errorf("Logins: %d, want 1", n)
	}
	// The password itself is no hash.
	if resp, _ := postJSONBody(t, newClient(t), s.App+"/api/hashed", jsonCreds(t, map[string]string{"user": User, "hash": string(pw)})); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the password as the hash: %d, want 401", resp.StatusCode)
	}
}

// cookieValue is the value of the cookie name that c's jar holds for origin.
func cookieValue(t *testing.T, c *http.Client, origin, name string) string {
	t.Helper()
	u, _ := url.Parse(origin + "/")
	for _, k := range c.Jar.Cookies(u) {
		if k.Name == name {
			return k.Value
		}
	}
	t.Fatalf("no cookie %s for %s", name, origin)
	return ""
}

func TestSessionsArePerArchetype(t *testing.T) {
	s, pw := start(t)
	c := newClient(t)
	formLogins["form"](t, s, c, pw)
	sid := cookieValue(t, c, s.App, "sid")
	for _, tc := range []struct{ arch, cookie string }{
		{"form", "sid"}, // the control: it works where it belongs
		{"steps", "steps_sid"}, {"memory", "memory_sid"}, {"oauth", "app"}, {"csrf", "csrf_sid"},
		{"cookies", "__Host-sid"}, {"hashed", "hashed_sid"}, {"dbsc", "dbsc_sid"}, {"redirect307", "r307"},
	} {
		req, _ := http.NewRequest(http.MethodGet, s.Archetype(tc.arch).WhoAmI, nil)
		req.AddCookie(&http.Cookie{Name: tc.cookie, Value: sid})
		want := http.StatusUnauthorized
		if tc.arch == "form" {
			want = http.StatusOK
		}
		if resp, _ := do(t, &http.Client{}, req); resp.StatusCode != want {
			t.Errorf("form's session as %s's: %d, want %d", tc.arch, resp.StatusCode, want)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, s.App+"/api/me", nil)
	req.Header.Set("Authorization", "Bearer "+sid)
	if resp, _ := do(t, &http.Client{}, req); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("form's session as a token: %d, want 401", resp.StatusCode)
	}
}

func TestExpire(t *testing.T) {
	s, pw := start(t)
	c := newClient(t)
	formLogins["form"](t, s, c, pw)
	wantWhoAmI(t, c, s.Archetype("form").WhoAmI, http.StatusOK)
	s.Expire()
	wantWhoAmI(t, c, s.Archetype("form").WhoAmI, http.StatusUnauthorized)
}

func TestReceived(t *testing.T) {
	s, pw := start(t)
	other := leakscan.NewSecret(t)
	formLogins["form"](t, s, newClient(t), pw)
	if n := s.Received(pw); n != 1 {
		t.Errorf("after one form login: the password matched in %d requests, want 1", n)
	}
	if n := s.Received(other); n != 0 {
		t.Errorf("a value never sent matched in %d requests", n)
	}

	// JSON with every character escaped: only the decoded strings hold it.
	var esc strings.Builder
	for _, r := range string(pw) {
		fmt.Fprintf(&esc, `\u%04x`, r)
	}
	resp, _ := postJSONBody(t, &http.Client{}, s.App+"/api/token", `{"user":"ada","password":"`+esc.String()+`"}`)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("an escaped JSON login: %d, want 200", resp.StatusCode)
	}
	// In a query, on the other origin, and in a header.
	get(t, &http.Client{}, s.IdP+"/nowhere?q="+url.QueryEscape(string(pw)))
	req, _ := http.NewRequest(http.MethodGet, s.App+"/nowhere", nil)
	req.Header.Set("X-Something", string(pw))
	do(t, &http.Client{}, req)
	if n := s.Received(pw); n != 4 {
		t.Errorf("the password matched in %d requests, want 4", n)
	}
	if n := s.ReceivedAt(s.IdP, "/nowhere", pw); n != 1 {
		t.Errorf("ReceivedAt the IdP: %d, want 1", n)
	}

	reqs := s.Requests()
	want := []Request{
		{s.App, "GET", "/form/login"}, {s.App, "POST", "/form/login"}, {s.App, "GET", "/form/home"},
		{s.App, "POST", "/api/token"}, {s.IdP, "GET", "/nowhere"}, {s.App, "GET", "/nowhere"},
	}
	if len(reqs) != len(want) {
		t.Fatalf("Requests: %d, want %d: %v", len(reqs), len(want), reqs)
	}
	for i := range want {
		if reqs[i] != want[i] {
			t.Errorf("request %d: %v, want %v", i, reqs[i], want[i])
		}
	}
}

func TestArchetypes(t *testing.T) {
	s := Start(t)
	var got []string
	for _, a := range s.Archetypes() {
		got = append(got, a.Name)
	}
	if strings.Join(got, " ") != "form token steps memory oauth csrf cookies hashed" {
		t.Errorf("Archetypes: %v", got)
	}
	c := newClient(t)
	for _, name := range append(append([]string{}, names...), extras...) {
		a := s.Archetype(name)
		if a.Name != name || a.Field != "pw" {
			t.Errorf("%s: name %q field %q", name, a.Name, a.Field)
		}
		for _, u := range []string{a.Login, a.Home, a.WhoAmI} {
			if !strings.HasPrefix(u, s.App+"/") && !strings.HasPrefix(u, s.IdP+"/") {
				t.Errorf("%s: %s is on neither origin", name, u)
			}
		}
		if (a.Step == "user") != (name == "steps" || name == "memory") || (a.WhoAmIPage != (name == "token")) {
			t.Errorf("%s: Step %q WhoAmIPage %v", name, a.Step, a.WhoAmIPage)
		}
		// Every login page is a page of its own with a user field.
		login := a.Login
		if name == "oauth" {
			login = s.OAuthStart()
		}
		resp, body := get(t, c, login)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, "<meta charset=utf-8>") || !strings.Contains(body, "<title>") || !strings.Contains(body, "id=user") {
			t.Errorf("%s: the login page: %d, or no charset, title or user field", name, resp.StatusCode)
		}
	}
	defer func() {
		if recover() == nil {
			t.Errorf("Archetype of an unknown name did not panic")
		}
	}()
	s.Archetype("nope")
}
