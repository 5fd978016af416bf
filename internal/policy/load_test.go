package policy

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writePolicy(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadMissingIsDefault(t *testing.T) {
	for _, path := range []string{
		filepath.Join(t.TempDir(), "policy"),
		filepath.Join(t.TempDir(), "no", "such", "dir", "policy"),
	} {
		p, err := Load(path)
		if err != nil || !reflect.DeepEqual(p, Default()) {
			t.Fatalf("Load(missing) = %+v, %v; want the defaults", p, err)
		}
	}
}

func TestLoad(t *testing.T) {
	path := writePolicy(t, "via = \"cdp\"\n[service.\"github.com\"]\nfields = [\"otp\"]\n")
	p, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if p.Via != ViaCDP || len(p.Rules) != 1 || p.Rules[0].Fields[0] != fieldOTP {
		t.Fatalf("Load = %+v", p)
	}

	path = writePolicy(t, "via = \"cdp\"\nvia = \"auto\"\n")
	_, err = Load(path)
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), path+":2:1: key via is already defined") {
		t.Fatalf("Load(bad) = %v; want a *ParseError naming %s:2:1", err, path)
	}

	path = writePolicy(t, "via = cdp\n[service github.com]\nfields = otp\n")
	if _, err = Load(path); !errors.Is(err, ErrOldFormat) {
		t.Fatalf("Load(old format) = %v; want ErrOldFormat", err)
	}
}

func TestLoadRefusesOddFiles(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Load(a directory) = %v; want a refusal", err)
	}
	big := writePolicy(t, "# "+strings.Repeat("x", MaxFileSize)+"\n")
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Load(a huge file) = %v; want a refusal", err)
	}
}

func TestCheck(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "policy")
	report, ok := Check(missing)
	if !ok || !strings.Contains(report, missing+": no policy file; the defaults apply.") || !strings.Contains(report, "  prompt_budget = \"90s\"\n") {
		t.Errorf("Check(missing) = %v,\n%s", ok, report)
	}

	good := writePolicy(t, "prompt_budget = \"2m\"\n[service.\"github.com\"]\nallow_via = [\"extension\"]\n")
	report, ok = Check(good)
	for _, want := range []string{good + ": ok\n", "Effective settings:\n", "  prompt_budget = \"2m\"\n", "  no_response_cooldown = \"10m\"\n", "  rate_limit = \"6/1m\"\n", "  # cdp_url is not set", "  via = \"auto\"\n", "\n  [service.\"github.com\"]\n  allow_via = [\"extension\"]\n"} {
		if !ok || !strings.Contains(report, want) {
			t.Errorf("Check(good) = %v, report does not hold %q:\n%s", ok, want, report)
		}
	}

	bad := writePolicy(t, "prompt_budget = \"soon\"\n\n[service.\"com\"]\n")
	report, ok = Check(bad)
	want := bad + ": 2 problems:\n" +
		bad + `:1:17: prompt_budget: "soon" is not a duration; write it like 90s, 10m or 1h` + "\n" +
		bad + `:3:10: service "com": com is a public suffix`
	if ok || !strings.HasPrefix(report, want) || strings.Contains(report, "Effective") {
		t.Errorf("Check(bad) = %v,\n%s\nwant it to start with\n%s", ok, report, want)
	}

	old := writePolicy(t, "via = cdp\n")
	report, ok = Check(old)
	if ok || !strings.Contains(report, old+": in the old line format:\n") || !strings.Contains(report, "rewrite it in TOML") || !strings.Contains(report, "`fillgate policy example`") {
		t.Errorf("Check(old format) = %v, %s", ok, report)
	}

	report, ok = Check(t.TempDir())
	if ok || !strings.Contains(report, "not a regular file") {
		t.Errorf("Check(a directory) = %v, %s", ok, report)
	}
}
