package main

import (
	"testing"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/policy"
)

func TestDoctorHost(t *testing.T) {
	h := agentsock.HostStatus{PID: 7, Version: "0.1.0", Browser: "chromium", Profile: "/p",
		Extension: agentsock.ExtensionStatus{Connected: true, Version: "0.1.0", Paused: true},
		Drive:     &fill.Drive{Driven: true, Reasons: []string{"r"}}}
	got := doctorHost(h, policy.PromptNative)
	if got.PID != 7 || got.Profile != "/p" || !got.Connected || !got.Paused || got.Prompt != policy.PromptNative ||
		got.Drive == nil || !got.Drive.Driven || len(got.Drive.Reasons) != 1 {
		t.Fatalf("doctorHost = %+v", got)
	}
	h.Prompt, h.Drive = policy.PromptBrowser, nil
	if got = doctorHost(h, policy.PromptNative); got.Prompt != policy.PromptBrowser || got.Drive != nil {
		t.Fatalf("the host's own prompt mode and no drive: %+v", got)
	}
	if got = doctorHost(agentsock.HostStatus{}, ""); got.Prompt != policy.PromptAuto {
		t.Fatalf("no mode anywhere: %q; want auto", got.Prompt)
	}
}
