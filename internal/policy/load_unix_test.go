//go:build !windows

package policy

import (
	"os"
	"strings"
	"testing"
)

func TestLoadRefusesWorldWritable(t *testing.T) {
	path := writePolicy(t, "via = \"cdp\"\n")
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "chmod o-w "+path) {
		t.Fatalf("Load(world-writable) = %v; want a refusal saying how to fix it", err)
	}
	if report, ok := Check(path); ok || !strings.Contains(report, "may be changed by any user") {
		t.Fatalf("Check(world-writable) = %v, %s", ok, report)
	}
	if err := os.Chmod(path, 0o664); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Fatalf("Load(group-writable) = %v; want it read", err)
	}
}

func TestLoadRefusesOtherOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give the file to another user")
	}
	path := writePolicy(t, "via = \"cdp\"\n")
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Fatalf("Load(another user's file) = %v; want a refusal", err)
	}
}
