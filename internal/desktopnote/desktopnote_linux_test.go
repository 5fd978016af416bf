package desktopnote_test

import (
	"context"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/desktopnote"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/notifyd"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
)

func TestNotifyOnTheSessionBus(t *testing.T) {
	secretservice.StartBus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := desktopnote.New()
	if err := n.Notify(ctx, fill.Notice{Title: "t", Message: "m"}); err == nil {
		t.Fatal("a notice with no notification service on the bus did not fail")
	}
	d := notifyd.Start(t)
	if err := n.Notify(ctx, fill.Notice{Title: "fillgate is filling", Message: "Asked by claude"}); err != nil {
		t.Fatal(err)
	}
	if got := d.Notices(); len(got) != 1 || got[0] != (notifyd.Notice{App: "fillgate", Summary: "fillgate is filling", Body: "Asked by claude"}) {
		t.Errorf("the service got %+v", got)
	}
}

func TestNoBusNoNotice(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	if err := desktopnote.New().Notify(context.Background(), fill.Notice{Title: "t"}); err == nil {
		t.Fatal("a notice with no session bus did not fail")
	}
}
