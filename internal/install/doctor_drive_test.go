//go:build !windows

package install

import (
	"context"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/doctor"
)

func TestDoctorSaysWherePromptsOpen(t *testing.T) {
	_, o := doctorHome(t)
	port := &doctor.HostDrive{Driven: true, Reasons: []string{"the browser was started with --remote-debugging-port", "a debugger is attached to 1 of its pages (DevTools, another extension or a program)"}}
	free := &doctor.HostDrive{}
	cases := []struct {
		name   string
		drive  *doctor.HostDrive
		prompt string
		level  doctor.Level
		detail string
	}{
		{"driven, auto", port, "auto", doctor.OK, "chrome (profile Default) can be driven by a program (the browser was started with --remote-debugging-port; " +
			"a debugger is attached to 1 of its pages (DevTools, another extension or a program)); prompts for it open as a native dialog on your desktop, outside the browser"},
		{"driven, the default", port, "", doctor.OK, "; prompts for it open as a native dialog on your desktop, outside the browser"},
		{"free, auto", free, "auto", doctor.OK, "no program can drive chrome (profile Default) now; prompts for it open in the browser (they move to a native dialog on your desktop while a program can drive it)"},
		{"driven, native", port, "native", doctor.OK, `prompts for it open as a native dialog on your desktop, outside the browser (prompt = "native")`},
		{"driven, browser", port, "browser", doctor.Warn, `and prompt = "browser" keeps prompts for it in the browser, where that program could read or answer them`},
		{"free, browser", free, "browser", doctor.Warn, `with prompt = "browser" they stay there even while a program drives it, where that program could read or answer them`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := healthy(t)
			host := doctor.HostStatus{PID: 4242, Version: "0.1.0", Browser: "chrome", Profile: "Default", Connected: true,
				ExtensionVersion: embeddedVersion(t), Drive: c.drive, Prompt: c.prompt}
			p.Hosts = func(context.Context) ([]doctor.HostStatus, error) { return []doctor.HostStatus{host}, nil }
			d := runDoctor(context.Background(), o, p)
			var got *doctor.Check
			for i := range d.Checks {
				if d.Checks[i].Name == "prompts 4242" {
					got = &d.Checks[i]
				}
			}
			if got == nil {
				t.Fatalf("%s: no check for the prompts, want one", d.Text())
			}
			if got.Level != c.level {
				t.Errorf("the check's level = %v, want %v", got.Level, c.level)
			}
			if !strings.Contains(got.Detail, c.detail) {
				t.Errorf("got %q; want it to contain %q", got.Detail, c.detail)
			}
			if c.level == doctor.Warn {
				if !strings.Contains(got.Fix, `set prompt = "auto"`) {
					t.Errorf("got %q; want it to contain %q", got.Fix, `set prompt = "auto"`)
				}
				if got := d.ExitCode(); got != 0 {
					t.Errorf("a warning is no failure: exit code %d, want 0", got)
				}
			} else {
				if len(got.Fix) != 0 {
					t.Errorf("fix %q, want none", got.Fix)
				}
			}
		})
	}
}

func TestDoctorNoPromptsCheckWithoutADrive(t *testing.T) {
	_, o := doctorHome(t)
	for _, host := range []doctor.HostStatus{
		{PID: 7, Version: "0.1.0", Browser: "chrome", Connected: true, ExtensionVersion: embeddedVersion(t)}, // an older host
		{PID: 7, Version: "0.1.0", Browser: "chrome", Drive: &doctor.HostDrive{Driven: true}},                // not connected
	} {
		p := healthy(t)
		p.Hosts = func(context.Context) ([]doctor.HostStatus, error) { return []doctor.HostStatus{host}, nil }
		for _, c := range runDoctor(context.Background(), o, p).Checks {
			if c.Name == "prompts 7" {
				t.Errorf("a check named %q, want none for this host", c.Name)
			}
		}
	}
}
