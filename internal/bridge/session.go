package bridge

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/websession"
)

// This file is the extension's side of the clean room (internal/cleanroom)
// for a browser a program drives: what the room needs of the driven tab,
// and the handover of a login's session into it (PROTOCOL.md §2, clean
// room). None of these messages carries a value: a session is what the
// site gave back for one.

// Tab implements the clean room's look at the driven tab in names: its URL,
// and the browser's user agent and languages. The room adds the browser's
// executable and family, which only the host knows.
func (b *Bridge) Tab(ctx context.Context, in fill.Inspection) (websession.Tab, error) {
	var reply tabInfoReply
	if err := b.call(ctx, "tab_info", tabInfoRequest{"tab_info", in.Tab}, "tab_info", &reply); err != nil {
		return websession.Tab{}, err
	}
	return reply.Tab, nil
}

// SiteCookies returns the cookies of the tab's cookie store that are sent
// within site (the site and every name under it), partitioned ones
// included.
func (b *Bridge) SiteCookies(ctx context.Context, in fill.Inspection, site string) ([]websession.Cookie, error) {
	var reply cookiesReply
	if err := b.call(ctx, "cookies", cookiesRequest{"cookies", in.Tab, site}, "cookies", &reply); err != nil {
		return nil, err
	}
	return reply.Cookies, nil
}

// maxHandover is the largest handover message the bridge sends: Chrome
// refuses a host's message over 1 MB.
const maxHandover = 1000 << 10

// HandOver has the extension set the session's cookies in the tab's
// cookie store (and remove the ones the login removed), write the final
// origin's web storage, navigate the tab to s.URL and say what it shows.
func (b *Bridge) HandOver(ctx context.Context, in fill.Inspection, s websession.Session) (websession.Shown, error) {
	msg := handoverRequest{"handover", in.Tab, s}
	if data, err := json.Marshal(msg); err != nil || len(data) > maxHandover {
		return websession.Shown{}, fmt.Errorf("the session is too large to hand to the extension (%d KiB, at most %d)", len(data)>>10, maxHandover>>10)
	}
	var reply handedOverReply
	if err := b.call(ctx, "handover", msg, "handed_over", &reply); err != nil {
		return websession.Shown{}, err
	}
	return reply.Shown, nil
}
