//go:build !windows

package install

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDoctorSaysWherePromptsOpen(t *testing.T) {
	_, o := doctorHome(t)
	port := &HostDrive{Driven: true, Reasons: []string{"the browser was started with --remote-debugging-port", "a debugger is attached to 1 of its pages (DevTools, another extension or a program)"}}
	free := &HostDrive{}
	cases := []struct {
		name   string
		drive  *HostDrive
		prompt string
		level  Level
		detail string
	}{
		{"driven, auto", port, "auto", OK, "chrome (profile Default) can be driven by a program (the browser was started with --remote-debugging-port; " +
			"a debugger is attached to 1 of its pages (DevTools, another extension or a program)); prompts for it open as a native dialog on your desktop, outside the browser"},
		{"driven, the default", port, "", OK, "; prompts for it open as a native dialog on your desktop, outside the browser"},
		{"free, auto", free, "auto", OK, "no program can drive chrome (profile Default) now; prompts for it open in the browser (they move to a native dialog on your desktop while a program can drive it)"},
		{"driven, native", port, "native", OK, `prompts for it open as a native dialog on your desktop, outside the browser (prompt = "native")`},
		{"driven, browser", port, "browser", Warn, `and prompt = "browser" keeps prompts for it in the browser, where that program could read or answer them`},
		{"free, browser", free, "browser", Warn, `with prompt = "browser" they stay there even while a program drives it, where that program could read or answer them`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := healthy(t)
			host := HostStatus{PID: 4242, Version: "0.1.0", Browser: "chrome", Profile: "Default", Connected: true,
				ExtensionVersion: embeddedVersion(t), Drive: c.drive, Prompt: c.prompt}
			p.Hosts = func(context.Context) ([]HostStatus, error) { return []HostStatus{host}, nil }
			d := Doctor(context.Background(), o, p)
			var got *Check
			for i := range d.Checks {
				if d.Checks[i].Name == "prompts 4242" {
					got = &d.Checks[i]
				}
			}
			require.NotNil(t, got, "%s", d.Text())
			assert.Equal(t, c.level, got.Level)
			assert.Contains(t, got.Detail, c.detail)
			if c.level == Warn {
				assert.Contains(t, got.Fix, `set prompt = "auto"`)
				assert.Equal(t, 0, d.ExitCode(), "a warning is no failure")
			} else {
				assert.Empty(t, got.Fix)
			}
		})
	}
}

func TestDoctorNoPromptsCheckWithoutADrive(t *testing.T) {
	_, o := doctorHome(t)
	for _, host := range []HostStatus{
		{PID: 7, Version: "0.1.0", Browser: "chrome", Connected: true, ExtensionVersion: embeddedVersion(t)}, // an older host
		{PID: 7, Version: "0.1.0", Browser: "chrome", Drive: &HostDrive{Driven: true}},                       // not connected
	} {
		p := healthy(t)
		p.Hosts = func(context.Context) ([]HostStatus, error) { return []HostStatus{host}, nil }
		for _, c := range Doctor(context.Background(), o, p).Checks {
			assert.NotEqual(t, "prompts 7", c.Name)
		}
	}
}
