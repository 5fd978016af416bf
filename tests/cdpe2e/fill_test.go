package cdpe2e

import (
	"context"
	"testing"
	"time"

	hostcdp "github.com/fillgate/fillgate/host/cdp"
	"github.com/fillgate/fillgate/host/fill"
	"github.com/fillgate/fillgate/tests/leakscan"
)

func TestPassword(t *testing.T) {
	e := newEnv(t)
	tb := e.openTab(e.originA + "/password")
	tb.click(100, 95)
	b := e.connect(hostcdp.Options{})
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
	defer cancel()
	in, err := b.Inspect(ctx, fill.Request{Service: "127.0.0.1", Field: fill.FieldPassword})
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	t.Logf("inspection: %+v", in)
	secret := leakscan.NewSecret(t)
	v, err := b.Insert(ctx, in, secret)
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	t.Logf("verdict: %+v", v)
	if !valueIs(t, tb.ctx, `function(v){return document.getElementById('pw').value===v}`, secret) {
		t.Errorf("value differed")
	}
}
