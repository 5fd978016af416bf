package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPolicyMigrateAndShow(t *testing.T) {
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
	if code, out, _ := runCLI(t, "policy", "check"); code != 1 || !strings.Contains(out, "old line format") || !strings.Contains(out, "fillgate policy migrate") {
		t.Fatalf("check of an old file: exit %d, %q", code, out)
	}
	code, out, _ := runCLI(t, "fill", "--service", "github.com", "--json")
	if code != 3 || !strings.Contains(out, "policy check") {
		t.Fatalf("fill under an old file: exit %d, %q; want refused", code, out)
	}
	if code, out, errs := runCLI(t, "policy", "show"); code != 1 || out != "" || !strings.Contains(errs, "policy migrate") {
		t.Fatalf("show of an old file: exit %d, %q, %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, "policy", "migrate"); code != 0 || out != "converted "+path+" to TOML; the old file is "+path+".bak\n" {
		t.Fatalf("migrate: exit %d, %q, %q", code, out, errs)
	}
	if b, _ := os.ReadFile(path + ".bak"); string(b) != old {
		t.Fatal("the backup is not the old file")
	}
	if code, out, _ := runCLI(t, "policy", "check"); code != 0 || !strings.Contains(out, ": ok\n") {
		t.Fatalf("check after migrate: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "policy", "show")
	if code != 0 || !strings.Contains(out, "prompt_budget = \"2m\"\n") || !strings.Contains(out, "[service.\"github.com\"]\nfields = [\"password\"]\n") {
		t.Fatalf("show: exit %d, %q", code, out)
	}
	if code, out, _ := runCLI(t, "policy", "migrate"); code != 0 || !strings.Contains(out, "nothing to convert") {
		t.Fatalf("migrate again: exit %d, %q", code, out)
	}
	if code, out, _ := runCLI(t, "policy", "example"); code != 0 || !strings.Contains(out, "[service.\"bank.example\"]") {
		t.Fatalf("example: exit %d", code)
	}
}
