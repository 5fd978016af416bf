package remember

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/fillstate"
)

// Lease is one live lease on a kept value: until it ends, the agent may
// fill again with a notice and no prompt.
type Lease struct {
	Service string    `json:"service"`
	Field   string    `json:"field"`
	Account string    `json:"account,omitempty"`
	Agent   string    `json:"agent"`
	Origin  string    `json:"origin"`
	Via     string    `json:"via"`
	Until   time.Time `json:"until"`
}

// Leases lists the live leases, the soonest to end first: those the
// running hosts keep in memory (the extension path) and those in the
// state dir (the CDP path). What cannot be read is left out.
func Leases(ctx context.Context, env func(string) string) []Lease {
	out := []Lease{}
	add := func(ls []fill.Lease, via string) {
		for _, l := range ls {
			out = append(out, Lease{Service: l.Service, Field: l.Field, Account: l.Account, Agent: l.Agent,
				Origin: l.Origin, Via: cmp.Or(l.Via, via), Until: l.Until})
		}
	}
	if dir, err := dirs.Runtime(env); err == nil {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		hs, _ := agentsock.Status(ctx, dir)
		cancel()
		for _, h := range hs {
			add(h.Leases, fill.ViaExtension)
		}
	}
	if st, err := cdpState(env); err == nil && st != nil {
		ls, _ := st.LiveLeases(time.Now())
		add(ls, fill.ViaCDP)
	}
	slices.SortFunc(out, func(x, y Lease) int { return x.Until.Compare(y.Until) })
	return out
}

// EndLeases ends the CDP path's leases on the kept values of service and
// account ("" for every account; service "" too for every lease), after
// the person forgot or replaced them, and says how many ended. A running
// browser's host keeps its leases in memory, out of reach here: those
// stop covering by themselves, as each names the stamp of the value it
// was granted for. A lease that cannot be ended here does not fill either
// (the CDP path checks the stamp too), so an error is only a warning.
func EndLeases(env func(string) string, service, account string) (int, error) {
	st, err := cdpState(env)
	if err != nil || st == nil {
		return 0, err
	}
	return st.EndLeases(service, account)
}

// cdpState opens the CDP path's state in the state dir (cdp/), where
// separate `fillgate fill` processes keep their leases; nil, with no
// error, when there is none yet.
func cdpState(env func(string) string) (*fillstate.Dir, error) {
	state, err := dirs.State(env)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(state, "cdp")
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return fillstate.Open(dir)
}
