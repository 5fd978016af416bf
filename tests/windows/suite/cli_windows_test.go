package suite

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/danieljoos/wincred"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// hostKey is where each browser looks for fillgate's host, below HKCU or
// HKLM\Software.
var hostKeys = map[string]string{
	"chrome":  `Google\Chrome\NativeMessagingHosts\` + manifest.HostName,
	"edge":    `Microsoft\Edge\NativeMessagingHosts\` + manifest.HostName,
	"brave":   `BraveSoftware\Brave-Browser\NativeMessagingHosts\` + manifest.HostName,
	"firefox": `Mozilla\NativeMessagingHosts\` + manifest.HostName,
}

// regExists reports whether key exists (reg query exits 0; 1 is "not
// found").
func regExists(t *testing.T, key string) bool {
	t.Helper()
	code, out := reg(t, "query", key)
	if code > 1 {
		t.Fatalf("reg query %s: exit %d: %s", key, code, out)
	}
	return code == 0
}

// regDefault is key's default value, read back through reg.exe.
func regDefault(t *testing.T, key string) string {
	t.Helper()
	code, out := reg(t, "query", key, "/ve")
	if code != 0 {
		t.Fatalf("reg query %s /ve: exit %d: %s", key, code, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if _, v, ok := strings.Cut(strings.TrimSpace(line), "REG_SZ"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("reg query %s /ve: no REG_SZ default value in %q", key, out)
	return ""
}

// ancestors lists key and every key above it below root\Software.
func ancestors(root, key string) []string {
	var out []string
	for k := key; k != "."; k = filepath.Dir(k) {
		out = append(out, root+`\Software\`+k)
	}
	return out
}

// TestInstallDoctorUninstall installs the host for Chrome, Edge, Brave and
// Firefox, per user (HKCU) and for every user (--system, HKLM), reads every
// key back through reg.exe and checks the manifest it names, lets doctor
// check it all, and uninstalls: every key install made is gone, its empty
// parents included, and the keys that were there before are still there.
func TestInstallDoctorUninstall(t *testing.T) {
	browsers := []string{"chrome", "edge", "brave", "firefox"}
	for _, scope := range []struct {
		name, root string
		flags      []string
	}{
		{"per user", "HKCU", nil},
		{"every user", "HKLM", []string{"--system"}},
	} {
		t.Run(scope.name, func(t *testing.T) {
			w := newWorld(t)
			before := map[string]bool{}
			for _, b := range browsers {
				for _, k := range ancestors(scope.root, hostKeys[b]) {
					before[k] = regExists(t, k)
				}
				if before[scope.root+`\Software\`+hostKeys[b]] {
					t.Fatalf("%s's host key exists before install", b)
				}
			}
			args := append([]string{"install"}, scope.flags...)
			for _, b := range browsers {
				args = append(args, "--browser", b)
			}
			if r := w.run(t, nil, args...); r.code != 0 {
				t.Fatalf("install failed: %s", r)
			}
			manifests := map[string]bool{}
			for _, b := range browsers {
				key := scope.root + `\Software\` + hostKeys[b]
				path := regDefault(t, key)
				manifests[path] = true
				if !filepath.IsAbs(path) {
					t.Errorf("%s names %q, not an absolute path", key, path)
					continue
				}
				family := manifest.Chromium
				if b == "firefox" {
					family = manifest.Firefox
				}
				checkManifest(t, path, family)
			}
			if len(manifests) != 2 {
				t.Errorf("the keys name %d manifests, want one for the Chromium family and one for Firefox: %v", len(manifests), manifests)
			}

			dargs := append([]string{"doctor"}, scope.flags...)
			for _, b := range browsers {
				dargs = append(dargs, "--browser", b)
			}
			d := w.run(t, nil, dargs...)
			t.Logf("doctor (exit %d):\n%s", d.code, d.stdout)
			for _, b := range browsers {
				if !strings.Contains(strings.ToLower(string(d.stdout)), b) {
					t.Errorf("doctor does not mention %s:\n%s", b, d.stdout)
				}
			}
			if strings.Contains(string(d.stdout), "not registered") || strings.Contains(string(d.stdout), "missing") {
				t.Errorf("doctor finds the install incomplete:\n%s", d)
			}

			uargs := append([]string{"uninstall"}, scope.flags...)
			if r := w.run(t, nil, uargs...); r.code != 0 {
				t.Fatalf("uninstall failed: %s", r)
			}
			for k, was := range before {
				if now := regExists(t, k); now != was {
					t.Errorf("%s exists before install: %v, after uninstall: %v", k, was, now)
				}
			}
			for m := range manifests {
				if _, err := os.Stat(m); !os.IsNotExist(err) {
					t.Errorf("uninstall left %s (%v)", m, err)
				}
			}
			dataDir := filepath.Join(w.local, "fillgate")
			if scope.root == "HKLM" {
				dataDir = filepath.Join(w.programData, "fillgate")
			}
			if _, err := os.Stat(filepath.Join(dataDir, "extension")); !os.IsNotExist(err) {
				t.Errorf("uninstall left the unpacked extension in %s (%v)", dataDir, err)
			}
		})
	}
}

// checkManifest reads a host manifest install wrote: it names this
// fillgate.exe and fillgate's extension.
func checkManifest(t *testing.T, path string, family manifest.Family) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("the manifest a key names: %v", err)
		return
	}
	var h manifest.Host
	if err := json.Unmarshal(b, &h); err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	if !strings.EqualFold(filepath.Clean(h.Path), filepath.Clean(exe)) {
		t.Errorf("%s runs %q, want %q", path, h.Path, exe)
	}
	if ps := h.Check(family, manifest.Listed(), nil); len(ps) != 0 {
		t.Errorf("%s: %v", path, ps)
	}
}

// fillgateCreds counts the Credential Manager's generic credentials whose
// target is fillgate's (go-keyring names them service:user). Only names
// are looked at.
func fillgateCreds(t *testing.T) []string {
	t.Helper()
	creds, err := wincred.List()
	if err != nil {
		t.Fatalf("listing the Credential Manager: %v", err)
	}
	var names []string
	for _, c := range creds {
		if strings.HasPrefix(c.TargetName, "fillgate:") {
			names = append(names, c.TargetName)
		}
		clear(c.CredentialBlob)
	}
	slices.Sort(names)
	return names
}

// TestRememberSavedForget stores a secret in Wine's Credential Manager
// through fillgate, lists it, and removes it; no output holds the value.
func TestRememberSavedForget(t *testing.T) {
	w := newWorld(t)
	secret := leakscan.NewSecret(t)
	had := fillgateCreds(t)

	r := w.run(t, append(append([]byte(nil), secret...), '\n'), "remember", "--service", "example.com", "--account", "alice", "--stdin")
	scan := func(r result) {
		t.Helper()
		leakscan.Bytes(t, secret, "fillgate "+strings.Join(r.args, " ")+"'s output", append(r.stdout, r.stderr...))
	}
	scan(r)
	if r.code != 0 {
		t.Fatalf("remember: exit %d: %s", r.code, r.stderr)
	}
	if got := fillgateCreds(t); len(got) <= len(had) {
		t.Fatalf("the Credential Manager holds no new fillgate credential: before %v, after %v", had, got)
	}

	r = w.run(t, nil, "saved", "--json")
	scan(r)
	var saved struct {
		Items []struct{ Service, Field, Account string } `json:"items"`
	}
	if err := json.Unmarshal(r.stdout, &saved); r.code != 0 || err != nil {
		t.Fatalf("saved: exit %d, %v: %s", r.code, err, r.stdout)
	}
	if !slices.ContainsFunc(saved.Items, func(i struct{ Service, Field, Account string }) bool {
		return i.Service == "example.com" && i.Account == "alice" && i.Field == fill.FieldPassword
	}) {
		t.Errorf("saved does not list example.com's password for alice: %s", r.stdout)
	}

	r = w.run(t, nil, "forget", "--service", "example.com")
	scan(r)
	if r.code != 0 {
		t.Fatalf("forget: %s", r)
	}
	r = w.run(t, nil, "saved", "--json")
	if strings.Contains(string(r.stdout), "example.com") {
		t.Errorf("saved still lists example.com after forget: %s", r.stdout)
	}
	if got := fillgateCreds(t); !slices.Equal(got, had) {
		t.Errorf("the Credential Manager's fillgate credentials: before %v, after forget %v", had, got)
	}
}

// TestExitCodesWithoutAHost: with no browser running the extension,
// status exits 1 and fill fails (exit 6) with the fix, on the extension
// path and on the CDP path, whose refused connection is named as such
// (Winsock's WSAECONNREFUSED taken for ECONNREFUSED).
func TestExitCodesWithoutAHost(t *testing.T) {
	w := newWorld(t)
	if r := w.run(t, nil, "status"); r.code != 1 {
		t.Errorf("status without a host: %s", r)
	}
	for _, c := range []struct {
		args   []string
		detail string
	}{
		{[]string{"fill", "--service", "example.com", "--json"}, "fillgate install"},
		{[]string{"fill", "--service", "example.com", "--json", "--via", "extension"}, "fillgate doctor"},
		{[]string{"fill", "--service", "example.com", "--json", "--via", "cdp"}, "connection refused"},
	} {
		// Port 9 on loopback: nothing listens there.
		r := w.runWith(t, []string{"FILLGATE_CDP_URL=http://127.0.0.1:9"}, nil, c.args...)
		var res fill.Result
		if err := json.Unmarshal(r.stdout, &res); err != nil {
			t.Errorf("%v: not a JSON result: %v: %s", c.args, err, r)
			continue
		}
		if r.code != 6 || res.Status != fill.StatusFailed || !strings.Contains(res.Detail, c.detail) {
			t.Errorf("%v: exit %d, %+v; want exit 6, failed, saying %q", c.args, r.code, res, c.detail)
		}
	}
	if r := w.run(t, nil, "fill", "--service", "co.uk", "--json"); r.code != 3 {
		t.Errorf("a public suffix: %s; want exit 3 (refused)", r)
	}
}
