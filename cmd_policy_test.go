package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyOldFormatAndShow: a policy file in the old line format of
// 0.1.0 is refused by every command that reads it, with the advice to
// rewrite it in TOML; rewritten, it checks and shows.
func TestPolicyOldFormatAndShow(t *testing.T) {
	isolate(t)
	cfg := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "fillgate")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cfg, "policy")
	old := "# mine\nprompt_budget = 2m\n[service github.com]\nfields = password\n"
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "policy", "check"); code != 1 || !strings.Contains(out, "old line format") ||
		!strings.Contains(out, "rewrite it in TOML") || !strings.Contains(out, "fillgate policy example") {
		t.Fatalf("check of an old file: exit %d, %q", code, out)
	}
	code, out, _ := runCLI(t, "fill", "--service", "github.com", "--json")
	if code != 3 || !strings.Contains(out, "policy check") {
		t.Fatalf("fill under an old file: exit %d, %q; want refused", code, out)
	}
	if code, out, errs := runCLI(t, "policy", "show"); code != 1 || out != "" || !strings.Contains(errs, "fillgate policy example") {
		t.Fatalf("show of an old file: exit %d, %q, %q", code, out, errs)
	}
	if code, _, errs := runCLI(t, "policy", "migrate"); code != 2 || !strings.Contains(errs, "migrate") {
		t.Fatalf("policy migrate: exit %d, %q; want a usage error, the command is gone", code, errs)
	}
	if b, _ := os.ReadFile(path); string(b) != old {
		t.Fatal("a command changed the old file")
	}

	rewritten := "# mine\nprompt_budget = \"2m\"\n[service.\"github.com\"]\nfields = [\"password\"]\n"
	if err := os.WriteFile(path, []byte(rewritten), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "policy", "check"); code != 0 || !strings.Contains(out, ": ok\n") {
		t.Fatalf("check after the rewrite: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "policy", "show")
	if code != 0 || !strings.Contains(out, "prompt_budget = \"2m\"\n") || !strings.Contains(out, "[service.\"github.com\"]\nfields = [\"password\"]\n") {
		t.Fatalf("show: exit %d, %q", code, out)
	}
	if code, out, _ := runCLI(t, "policy", "example"); code != 0 || !strings.Contains(out, "[service.\"bank.example\"]") {
		t.Fatalf("example: exit %d", code)
	}
}
