package agentsock

import (
	"os"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

func BenchmarkStatusRoundTrip(b *testing.B) {
	dir := sockDir(b)
	startHost(b, dir, os.Getpid(), &fakeHandler{status: HostStatus{Version: "bench", PID: 1}})
	ctx := testctx.New(b)
	for b.Loop() {
		if _, err := Status(ctx, dir); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFillRoundTrip(b *testing.B) {
	dir := sockDir(b)
	startHost(b, dir, os.Getpid(), &fakeHandler{})
	ctx := testctx.New(b)
	req := fill.Request{Service: "github.com", Field: fill.FieldPassword}
	for b.Loop() {
		res, err := Fill(ctx, dir, req, "bench", nil)
		if err != nil || res.Status != fill.StatusOK {
			b.Fatal(res, err)
		}
	}
}
