package fillresult

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
)

// exitEnv makes the test binary exit at once with the status it names.
const exitEnv = "FILLRESULT_TEST_EXIT"

func TestMain(m *testing.M) {
	if os.Getenv(exitEnv) == "3" {
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func TestDecode(t *testing.T) {
	res, err := Decode([]byte(`{"status":"ok","detail":"inserted"}` + "\n"))
	if err != nil || res.Status != fill.StatusOK || res.Detail != "inserted" {
		t.Fatalf("Decode = %+v, %v", res, err)
	}
	for _, bad := range []string{``, `not json`, `{"status":"ok"}{"status":"ok"}`, `{"status":"ok","extra":1}`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) took it as one result", bad)
		}
	}
}

func TestExitCode(t *testing.T) {
	if code, err := ExitCode(nil); code != 0 || err != nil {
		t.Fatalf("ExitCode(nil) = %d, %v", code, err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), exitEnv+"=3")
	waitErr := cmd.Run()
	if code, err := ExitCode(waitErr); code != 3 || err != nil {
		t.Fatalf("ExitCode(exit 3) = %d, %v", code, err)
	}
	other := errors.New("no such program")
	if _, err := ExitCode(other); err != other {
		t.Fatalf("ExitCode(other) = %v, want it back", err)
	}
}
