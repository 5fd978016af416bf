package bridge

import (
	"context"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

var _ fill.Notifier = (*Bridge)(nil)

// Notify asks the extension to show n as a browser notification
// (chrome.notifications / browser.notifications), and returns once the
// browser took it. The Engine fills with no prompt only after this
// succeeded.
func (b *Bridge) Notify(ctx context.Context, n fill.Notice) error {
	var reply typeOnly
	return b.call(ctx, "notify", notifyRequest{"notify", n.Title, n.Message}, "notified", &reply)
}

// WithLeases lets the extension's popup show the host's live leases and
// end them: list returns them, end ends one by id. The bridge sends the
// list after the extension's hello (when there are any), after each
// end_lease, and on PushLeases.
func WithLeases(list func(now time.Time) []fill.Lease, end func(id string) bool) Option {
	return func(c *config) { c.leases, c.endLease = list, end }
}

// leaseNotice is one lease as the popup gets it: no agent key, no value.
type leaseNotice struct {
	ID      string `json:"id"`
	Agent   string `json:"agent"`
	Service string `json:"service"`
	Field   string `json:"field"`
	Account string `json:"account,omitempty"`
	Origin  string `json:"origin"`
	Until   string `json:"until"`
}

// PushLeases sends the live leases to the extension (a "leases" notice).
// A failure to send is logged: the popup's list is a convenience.
func (b *Bridge) PushLeases() { b.pushLeases(true) }

// pushLeases sends the leases; with always false only when there are
// any (an extension that connected knows of none).
func (b *Bridge) pushLeases(always bool) {
	if b.cfg.leases == nil {
		return
	}
	live := b.cfg.leases(b.cfg.now())
	if len(live) == 0 && !always {
		return
	}
	out := []leaseNotice{}
	for _, l := range live {
		out = append(out, leaseNotice{ID: l.ID, Agent: l.Agent, Service: l.Service, Field: l.Field, Account: l.Account,
			Origin: l.Origin, Until: l.Until.UTC().Format(time.RFC3339)})
	}
	err := b.port.Notify(leasesNotice{"leases", out})
	if err != nil {
		b.log.Warn("bridge: could not send the leases to the extension", "err", err)
	}
}

// endLease handles end_lease from the popup.
func (b *Bridge) endLease(id string) {
	if b.cfg.endLease == nil {
		return
	}
	if b.cfg.endLease(id) {
		b.log.Info("bridge: the person ended a lease in the extension's popup")
	}
	b.PushLeases()
}
