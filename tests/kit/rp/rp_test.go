package rp_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/go-webauthn/webauthn/protocol"

	"github.com/fillgate/fillgate/internal/passkey"
	"github.com/fillgate/fillgate/tests/kit/rp"
)

// b64 is base64url without padding, as WebAuthn's JSON writes bytes.
var b64 = base64.RawURLEncoding

// browser stands in for the browser and fillgate's extension: it talks to
// the site's endpoints with a cookie jar, and answers create() and get()
// with a passkey made by internal/passkey, building the JSON by hand as
// the extension's answer reaches the page.
type browser struct {
	t      *testing.T
	site   *rp.Server
	client *http.Client
	origin passkey.Origin // the page's verified origin
	base   string         // the origin it posts to: the site's, or a mirror's
	uv     string         // the user verification the page asks for ("": the site's)

	key    *passkey.Key
	id     []byte // the credential id
	handle []byte // the user handle the site gave at registration
	rp     passkey.RPID
	count  uint32 // the signature count kept with the key
}

func newBrowser(t *testing.T, site *rp.Server) *browser {
	t.Helper()
	return newBrowserAt(t, site, site.URL)
}

// newBrowserAt is newBrowser on a page of the site at origin (its own,
// or a mirror's).
func newBrowserAt(t *testing.T, site *rp.Server, origin string) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	o, err := passkey.ParseOrigin(origin)
	if err != nil {
		t.Fatalf("the site's origin: %v", err)
	}
	return &browser{t: t, site: site, client: &http.Client{Jar: jar, Transport: toLoopback{}}, origin: o, base: origin}
}

// toLoopback sends requests for localhost to 127.0.0.1, where the site
// listens, as the browser's resolver would.
type toLoopback struct{}

func (toLoopback) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Host = strings.Replace(r.URL.Host, "localhost", "127.0.0.1", 1)
	return http.DefaultTransport.RoundTrip(r)
}

// result is a finish endpoint's answer.
type result struct {
	status int
	out    map[string]any
}

// post sends body as JSON to the site, and returns the status and the
// decoded answer.
func (b *browser) post(path string, body any) result {
	b.t.Helper()
	j, err := json.Marshal(body)
	if err != nil {
		b.t.Fatal(err)
	}
	resp, err := b.client.Post(b.base+path, "application/json", bytes.NewReader(j))
	if err != nil {
		b.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		b.t.Fatalf("POST %s: the answer is not JSON: %s", path, raw)
	}
	return result{resp.StatusCode, out}
}

// options runs a begin endpoint and returns its publicKey options.
func (b *browser) options(path, user string) map[string]any {
	b.t.Helper()
	body := map[string]string{"user": user}
	if b.uv != "" {
		body["uv"] = b.uv
	}
	res := b.post(path, body)
	pk, ok := res.out["publicKey"].(map[string]any)
	if res.status != http.StatusOK || !ok {
		b.t.Fatalf("POST %s = %d %v", path, res.status, res.out)
	}
	return pk
}

// bytesOf decodes the base64url member name of m.
func bytesOf(t *testing.T, m map[string]any, name string) []byte {
	t.Helper()
	s, _ := m[name].(string)
	v, err := b64.DecodeString(s)
	if err != nil || len(v) == 0 {
		t.Fatalf("%s is not base64url bytes: %v", name, m[name])
	}
	return v
}

// tamper changes what the extension answers, to show the site refuses it.
type tamper struct {
	origin    string // the client data's origin, when not the page's
	rpOrigin  string // sign for the relying party id of this origin instead
	count     *uint32
	presence  *passkey.Presence
	signature bool // flip a bit of the signature
	ceremony  passkey.Ceremony
}

// register runs "Add a passkey" for user: a new key pair answers create().
func (b *browser) register(user string, p passkey.Presence, tm tamper) result {
	t := b.t
	t.Helper()
	pk := b.options("/register/begin", user)
	rpOpts, _ := pk["rp"].(map[string]any)
	userOpts, _ := pk["user"].(map[string]any)
	rpID, _ := rpOpts["id"].(string)
	var err error
	if b.rp, err = passkey.CheckRPID(b.origin, rpID); err != nil {
		t.Fatalf("the site asks for a relying party id its origin may not claim: %v", err)
	}
	b.handle = bytesOf(t, userOpts, "id")
	if b.key, err = passkey.GenerateKey(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.key.Wipe)
	if b.id, err = passkey.NewCredentialID(); err != nil {
		t.Fatal(err)
	}
	att, err := passkey.Attest(b.key, b.rp, b.id, p)
	if err != nil {
		t.Fatal(err)
	}
	cdj := b.clientData(passkey.Create, bytesOf(t, pk, "challenge"), tm)
	spki, err := b.key.PublicKeySPKI()
	if err != nil {
		t.Fatal(err)
	}
	return b.post("/register/finish", b.credential(map[string]any{
		"clientDataJSON":     b64.EncodeToString(cdj),
		"attestationObject":  b64.EncodeToString(att.AttestationObject),
		"authenticatorData":  b64.EncodeToString(att.AuthData),
		"publicKey":          b64.EncodeToString(spki),
		"publicKeyAlgorithm": -7,
		"transports":         []string{"internal"},
	}))
}

// login runs "Sign in with a passkey", naming user ("" for a
// discoverable login): the key answers get() with the next count.
func (b *browser) login(user string, p passkey.Presence, tm tamper) result {
	t := b.t
	t.Helper()
	pk := b.options("/login/begin", user)
	rpID, _ := pk["rpId"].(string)
	rpFor, err := passkey.CheckRPID(b.origin, rpID)
	if err != nil || rpFor != b.rp {
		t.Fatalf("the login asks for relying party id %q, the credential is for %q (%v)", rpID, b.rp, err)
	}
	if user != "" {
		allowed := false
		list, _ := pk["allowCredentials"].([]any)
		for _, c := range list {
			if d, ok := c.(map[string]any); ok && bytes.Equal(bytesOf(t, d, "id"), b.id) {
				allowed = true
			}
		}
		if !allowed {
			t.Fatalf("the login for %s does not list the credential: %v", user, list)
		}
	}
	signFor := b.rp
	if tm.rpOrigin != "" {
		o, err := passkey.ParseOrigin(tm.rpOrigin)
		if err != nil {
			t.Fatal(err)
		}
		if signFor, err = passkey.CheckRPID(o, ""); err != nil {
			t.Fatal(err)
		}
	}
	next := b.count + 1
	if tm.count != nil {
		next = *tm.count
	}
	if tm.presence != nil {
		p = *tm.presence
	}
	cdj := b.clientData(passkey.Get, bytesOf(t, pk, "challenge"), tm)
	a, err := passkey.Assert(b.key, signFor, p, next, cdj)
	if err != nil {
		t.Fatal(err)
	}
	b.count = max(b.count, next)
	if tm.signature {
		a.Signature[len(a.Signature)-1] ^= 0x01
	}
	return b.post("/login/finish", b.credential(map[string]any{
		"clientDataJSON":    b64.EncodeToString(cdj),
		"authenticatorData": b64.EncodeToString(a.AuthData),
		"signature":         b64.EncodeToString(a.Signature),
		"userHandle":        b64.EncodeToString(b.handle),
	}))
}

// credential is the PublicKeyCredential's JSON around response, as the
// page sends it: fillgate's credential, a platform authenticator's.
func (b *browser) credential(response map[string]any) map[string]any {
	return map[string]any{
		"id":                      b64.EncodeToString(b.id),
		"rawId":                   b64.EncodeToString(b.id),
		"type":                    "public-key",
		"authenticatorAttachment": "platform",
		"clientExtensionResults":  map[string]any{},
		"response":                response,
	}
}

// clientData writes the client data as fillgate does, from the page's
// origin (or the tampered one).
func (b *browser) clientData(c passkey.Ceremony, challenge []byte, tm tamper) []byte {
	b.t.Helper()
	o := b.origin
	if tm.origin != "" {
		var err error
		if o, err = passkey.ParseOrigin(tm.origin); err != nil {
			b.t.Fatal(err)
		}
	}
	if tm.ceremony != "" {
		c = tm.ceremony
	}
	cdj, err := passkey.ClientData(c, challenge, o)
	if err != nil {
		b.t.Fatal(err)
	}
	return cdj
}

var (
	present  = passkey.Presence{UserPresent: true}
	verified = passkey.Presence{UserPresent: true, UserVerified: true}
)

// wantOK checks that a finish endpoint let the ceremony through.
func wantOK(t *testing.T, what string, res result) {
	t.Helper()
	if res.status != http.StatusOK || res.out["ok"] != true {
		t.Fatalf("%s = %d %v; want it accepted", what, res.status, res.out)
	}
}

// wantRefused checks that the site refused the last ceremony for the
// reason that says why, and let nobody in for it.
func wantRefused(t *testing.T, site *rp.Server, logins int, what string, res result, why string) {
	t.Helper()
	rej := site.Rejections()
	switch {
	case res.status != http.StatusBadRequest:
		t.Fatalf("%s = %d %v; want it refused (%s)", what, res.status, res.out, why)
	case len(rej) == 0 || !strings.Contains(rej[len(rej)-1].Reason, why):
		t.Fatalf("%s refused with %v; want the reason to say %q", what, rej, why)
	case len(site.Logins()) != logins:
		t.Fatalf("%s: %d logins, want %d", what, len(site.Logins()), logins)
	}
}

// TestRegisterAndSignIn registers a fillgate passkey with the site and
// signs in with it twice: go-webauthn verifies the attestation and each
// assertion, and the signature count grows.
func TestRegisterAndSignIn(t *testing.T) {
	for _, discoverable := range []bool{false, true} {
		t.Run(fmt.Sprintf("discoverable=%v", discoverable), func(t *testing.T) {
			site := rp.Start(t, rp.Options{Discoverable: discoverable})
			b := newBrowser(t, site)
			wantOK(t, "register", b.register("ada", present, tamper{}))
			regs := site.Registrations()
			if len(regs) != 1 || regs[0].User != "ada" || !bytes.Equal(regs[0].CredentialID, b.id) || regs[0].AttestationFormat != "none" {
				t.Fatalf("registrations = %+v; want ada's credential, attestation none", regs)
			}
			user := "ada"
			if discoverable {
				user = "" // the site finds ada by the user handle
			}
			for i := uint32(1); i <= 2; i++ {
				res := b.login(user, present, tamper{})
				wantOK(t, "login", res)
				if res.out["user"] != "ada" {
					t.Fatalf("login %d let in %v, want ada", i, res.out["user"])
				}
			}
			logins := site.Logins()
			if len(logins) != 2 {
				t.Fatalf("logins = %+v; want 2", logins)
			}
			for i, l := range logins {
				if l.User != "ada" || !bytes.Equal(l.CredentialID, b.id) || l.SignCount != uint32(i+1) || l.Discoverable != discoverable || l.UserVerified {
					t.Errorf("login %d = %+v; want ada with the credential at count %d, discoverable %v, not verified", i, l, i+1, discoverable)
				}
			}
			if got := site.SignCount(b.id); got != 2 {
				t.Errorf("the site keeps count %d, want 2", got)
			}
			if rej := site.Rejections(); len(rej) != 0 {
				t.Errorf("rejections = %v; want none", rej)
			}
		})
	}
}

// TestUserVerification shows what userVerification asks of fillgate's
// answer: "preferred" takes UV or not, "required" refuses a registration
// or a login without UV and takes one with it.
func TestUserVerification(t *testing.T) {
	preferred := rp.Start(t, rp.Options{})
	b := newBrowser(t, preferred)
	wantOK(t, "register without UV, preferred", b.register("ada", present, tamper{}))
	wantOK(t, "login with UV, preferred", b.login("ada", verified, tamper{}))
	if l := preferred.Logins(); len(l) != 1 || !l[0].UserVerified {
		t.Fatalf("logins = %+v; want one, verified", l)
	}

	required := rp.Start(t, rp.Options{UserVerification: protocol.VerificationRequired, Discoverable: true})
	b = newBrowser(t, required)
	wantRefused(t, required, 0, "register without UV, required", b.register("ada", present, tamper{}), "User verification required")
	wantOK(t, "register with UV, required", b.register("ada", verified, tamper{}))
	if r := required.Registrations(); len(r) != 1 || !r[0].UserVerified {
		t.Fatalf("registrations = %+v; want one, verified", r)
	}
	wantRefused(t, required, 0, "login without UV, required", b.login("", present, tamper{}), "User verification required")
	wantOK(t, "login with UV, required", b.login("", verified, tamper{}))
}

// TestPageAsksForUV shows that the page's ?uv= (the begin requests' uv)
// is what a ceremony asks for and checks, whatever the site's own.
func TestPageAsksForUV(t *testing.T) {
	site := rp.Start(t, rp.Options{})
	b := newBrowser(t, site)
	b.uv = string(protocol.VerificationRequired)
	wantRefused(t, site, 0, "register without UV, the page requires it", b.register("ada", present, tamper{}), "User verification required")
	wantOK(t, "register with UV", b.register("ada", verified, tamper{}))
	wantRefused(t, site, 0, "login without UV, the page requires it", b.login("ada", present, tamper{}), "User verification required")
	wantOK(t, "login with UV", b.login("ada", verified, tamper{}))
	b.uv = ""
	wantOK(t, "login without UV, the site's preferred", b.login("ada", present, tamper{}))
	if l := site.Logins(); len(l) != 2 || !l[0].UVRequired || !l[0].UserVerified || l[1].UVRequired || l[1].UserVerified {
		t.Fatalf("logins = %+v; want one verified under required, then one unverified under preferred", l)
	}
	b.uv = "always"
	if res := b.post("/login/begin", map[string]string{"user": "ada", "uv": b.uv}); res.status != http.StatusBadRequest {
		t.Fatalf("a begin asking for user verification %q = %d %v; want refused", b.uv, res.status, res.out)
	}
}

// TestMirror shows that the site's mirror serves the same accounts on
// another origin, whose ceremonies the site takes only while
// AcceptOrigins names it.
func TestMirror(t *testing.T) {
	site := rp.Start(t, rp.Options{})
	mirror := site.Mirror(t)
	if mirror == site.URL || !strings.HasPrefix(mirror, "http://localhost:") {
		t.Fatalf("the mirror is %s (the site %s)", mirror, site.URL)
	}
	b := newBrowserAt(t, site, mirror)
	wantRefused(t, site, 0, "register on the mirror", b.register("ada", present, tamper{}), "Error validating origin")
	if err := site.AcceptOrigins(site.URL, mirror); err != nil {
		t.Fatal(err)
	}
	wantOK(t, "register on the mirror, taken", b.register("ada", present, tamper{}))
	wantOK(t, "login on the mirror, taken", b.login("ada", present, tamper{}))
	if err := site.AcceptOrigins(site.URL); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, site, 1, "login on the mirror, no longer taken", b.login("ada", present, tamper{}), "Error validating origin")
	if r := site.Registrations(); len(r) != 1 || r[0].User != "ada" {
		t.Fatalf("registrations = %+v; want ada's one, kept by the site", r)
	}
}

// TestSiteRefuses shows that the relying party refuses what fillgate must
// never send: client data for another origin, an assertion for another
// relying party id, a count that does not grow, a signature that does not
// verify, a missing user presence, the wrong ceremony, and a replayed
// response.
func TestSiteRefuses(t *testing.T) {
	site := rp.Start(t, rp.Options{})
	b := newBrowser(t, site)
	wantOK(t, "register", b.register("ada", present, tamper{}))
	wantOK(t, "login", b.login("ada", present, tamper{}))
	one := uint32(1)
	absent := passkey.Presence{}
	for _, tc := range []struct {
		name string
		tm   tamper
		why  string
	}{
		{"another origin", tamper{origin: "https://evil.example"}, "Error validating origin"},
		{"another port", tamper{origin: otherPort(t, site.URL)}, "Error validating origin"},
		{"another relying party id", tamper{rpOrigin: "https://evil.example"}, "RP Hash mismatch"},
		{"a replayed count", tamper{count: &one}, "signature count 1 did not grow past the 1"},
		{"a tampered signature", tamper{signature: true}, "invalid_signature"},
		{"no user presence", tamper{presence: &absent}, "User presence required but flag not set"},
		{"the create ceremony", tamper{ceremony: passkey.Create}, "webauthn.get"},
	} {
		wantRefused(t, site, 1, tc.name, b.login("ada", present, tc.tm), tc.why)
	}
	if got := site.SignCount(b.id); got != 1 {
		t.Fatalf("the site keeps count %d after the refusals, want 1", got)
	}
	// A refused login does not burn a count the site never accepted:
	// the next honest one (a count above every one sent) gets in.
	wantOK(t, "login after the refusals", b.login("ada", present, tamper{}))
	if l := site.Logins(); len(l) != 2 || l[1].SignCount != b.count {
		t.Fatalf("logins = %+v; want a second at count %d", l, b.count)
	}
}

// otherPort is origin on the port next to its own.
func otherPort(t *testing.T, origin string) string {
	t.Helper()
	u, err := url.Parse(origin)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	if port == 65535 {
		port -= 2
	}
	return fmt.Sprintf("%s://%s:%d", u.Scheme, u.Hostname(), port+1)
}

// TestReplayedResponse shows that a response sent again, after its
// ceremony finished, is refused: the challenge was used once.
func TestReplayedResponse(t *testing.T) {
	site := rp.Start(t, rp.Options{})
	b := newBrowser(t, site)
	wantOK(t, "register", b.register("ada", present, tamper{}))

	pk := b.options("/login/begin", "ada")
	cdj := b.clientData(passkey.Get, bytesOf(t, pk, "challenge"), tamper{})
	a, err := passkey.Assert(b.key, b.rp, present, 1, cdj)
	if err != nil {
		t.Fatal(err)
	}
	body := b.credential(map[string]any{
		"clientDataJSON":    b64.EncodeToString(cdj),
		"authenticatorData": b64.EncodeToString(a.AuthData),
		"signature":         b64.EncodeToString(a.Signature),
	})
	wantOK(t, "login", b.post("/login/finish", body))
	wantRefused(t, site, 1, "the same response again", b.post("/login/finish", body), "no login ceremony in progress")

	// With a new ceremony begun, the old response's challenge is wrong.
	b.options("/login/begin", "ada")
	wantRefused(t, site, 1, "the old response in a new ceremony", b.post("/login/finish", body), "challenge")
}

// TestPage checks that the site serves its login page with both buttons.
func TestPage(t *testing.T) {
	site := rp.Start(t, rp.Options{})
	b := newBrowser(t, site)
	resp, err := b.client.Get(site.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{">Add a passkey<", ">Sign in with a passkey<", "navigator.credentials.create", "navigator.credentials.get", `id=status`, `id=second`, `id=framed`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	resp, err = b.client.Get(site.URL + "/frame")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ = io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "navigator.credentials.get") || !strings.Contains(string(body), "parent.postMessage") {
		t.Errorf("the frame page is %q", body)
	}
	if u, _ := url.Parse(site.URL); u.Hostname() != "localhost" || site.RPID != "localhost" {
		t.Errorf("the site is %s with relying party id %s; want localhost", site.URL, site.RPID)
	}
}
