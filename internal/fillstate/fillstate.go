// Package fillstate keeps the fill flow's State in the state directory, so
// that separate `fillgate fill` processes on the CDP path share it: the
// one-prompt-per-service claim, the no-response cool-downs, the
// per-agent request rate, the leases, and what the native-messaging host
// keeps too: the services barred from the clean room and the browser
// profiles whose extension's pause switch is on. It holds service names, agent
// keys, accounts, origins and times; never a value.
//
// Layout, inside the directory:
//
//	cdp-state.json       cool-downs, recent request times, leases, bars and pauses (JSON)
//	cdp-state.lock       serialises read-modify-write of cdp-state.json
//	claims/<hash>.lock   one per service; held locked while its prompt is open
//
// cdp-state.json is replaced atomically (a temp file, then rename) while
// the lock is held, so a reader never sees a half-written file. Locks are
// flock(2) on Unix and LockFileEx on Windows: the kernel releases them
// when the process dies, so a crashed `fillgate fill` never leaves a
// service claimed.
package fillstate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
)

const (
	stateFile = "cdp-state.json"
	lockFile  = "cdp-state.lock"
	claimsDir = "claims"
	// keepHits bounds how long request times are kept for agents that
	// stopped asking, and maxHits how many per agent.
	keepHits = 24 * time.Hour
	maxHits  = 1000
)

// Dir is a fill.State kept in files under one directory. Its methods are
// safe for concurrent use, by goroutines and by processes.
type Dir struct {
	dir string
	// LockTimeout bounds the wait for another process to finish with the
	// state file. Zero means 5 seconds.
	LockTimeout time.Duration
}

var (
	_ fill.State  = (*Dir)(nil)
	_ fill.Leases = (*Dir)(nil)
	_ fill.Bars   = (*Dir)(nil)
)

// Open returns the State kept in dir (usually dirs.State), creating dir
// 0700 if needed.
func Open(dir string) (*Dir, error) {
	if err := dirs.Ensure(dir); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, claimsDir), 0o700); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	return &Dir{dir: dir}, nil
}

// state is the JSON content of cdp-state.json.
type state struct {
	Cooldowns []cooldown             `json:"cooldowns,omitempty"`
	Requests  map[string][]time.Time `json:"requests,omitempty"` // by agent key
	Leases    []fill.Lease           `json:"leases,omitempty"`
	Bars      []bar                  `json:"bars,omitempty"`
	// Paused are the browser profiles whose extension's pause switch is
	// on, by Pauses's key.
	Paused []string `json:"paused,omitempty"`
}

// bar is a service barred from the clean room (fill.Bars).
type bar struct {
	Service string    `json:"service"`
	Until   time.Time `json:"until"`
}

type cooldown struct {
	Agent   string    `json:"agent"`
	Service string    `json:"service"`
	Until   time.Time `json:"until"`
}

// Claim implements fill.State: it takes the service's claim lock, or
// returns fill.ErrBusy when another request (in this process or another)
// holds it. The returned func releases it; calling it again does nothing.
func (d *Dir) Claim(service string) (func(), error) {
	f, err := os.OpenFile(d.claimPath(service), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("claim %s: %w", service, err)
	}
	ok, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("claim %s: %w", service, err)
	}
	if !ok {
		f.Close()
		return nil, fill.ErrBusy
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = unlock(f)
			_ = f.Close()
		})
	}, nil
}

// claimPath names a service's claim file by a hash, so no service string
// can reach outside the claims directory.
func (d *Dir) claimPath(service string) string {
	sum := sha256.Sum256([]byte(service))
	return filepath.Join(d.dir, claimsDir, hex.EncodeToString(sum[:16])+".lock")
}

// CoolingDown implements fill.State. If the state cannot be read it
// reports no cool-down (the rate limit still fails closed).
func (d *Dir) CoolingDown(agentKey, service string, now time.Time) (time.Time, bool) {
	var until time.Time
	var found bool
	err := d.read(func(s *state) {
		for _, c := range s.Cooldowns {
			if c.Agent == agentKey && c.Service == service && now.Before(c.Until) {
				until, found = c.Until, true
			}
		}
	})
	if err != nil {
		return time.Time{}, false
	}
	return until, found
}

// NoteNoResponse implements fill.State.
func (d *Dir) NoteNoResponse(agentKey, service string, until time.Time) error {
	return d.update(time.Now(), func(s *state) bool {
		s.Cooldowns = slices.DeleteFunc(s.Cooldowns, func(c cooldown) bool {
			return c.Agent == agentKey && c.Service == service
		})
		s.Cooldowns = append(s.Cooldowns, cooldown{Agent: agentKey, Service: service, Until: until})
		return true
	})
}

// Barred implements fill.Bars. If the state cannot be read the service
// is barred (for a minute: the next request reads it again).
func (d *Dir) Barred(service string, now time.Time) (time.Time, bool) {
	var until time.Time
	err := d.read(func(s *state) {
		for _, b := range s.Bars {
			if b.Service == service && now.Before(b.Until) && b.Until.After(until) {
				until = b.Until
			}
		}
	})
	if err != nil {
		return now.Add(time.Minute), true
	}
	return until, !until.IsZero()
}

// Bar implements fill.Bars.
func (d *Dir) Bar(service string, until time.Time) error {
	return d.update(time.Now(), func(s *state) bool {
		s.Bars = append(slices.DeleteFunc(s.Bars, func(b bar) bool { return b.Service == service }), bar{Service: service, Until: until})
		return true
	})
}

// Paused reports whether the extension's pause switch of the browser
// profile key is on. If the state cannot be read it is (fills then wait
// for the next read).
func (d *Dir) Paused(key string) bool {
	paused := true
	err := d.read(func(s *state) { paused = slices.Contains(s.Paused, key) })
	return err != nil || paused
}

// SetPaused records the pause switch of the browser profile key.
func (d *Dir) SetPaused(key string, paused bool) error {
	return d.update(time.Now(), func(s *state) bool {
		was := slices.Contains(s.Paused, key)
		if was == paused {
			return false
		}
		if paused {
			s.Paused = append(s.Paused, key)
		} else {
			s.Paused = slices.DeleteFunc(s.Paused, func(k string) bool { return k == key })
		}
		return true
	})
}

// Allow implements fill.State with a sliding window shared by every
// process. If the state cannot be read or written it says no.
func (d *Dir) Allow(agentKey string, now time.Time, limit int, window time.Duration) bool {
	if limit <= 0 {
		return true
	}
	allowed := false
	err := d.update(now, func(s *state) bool {
		kept := slices.DeleteFunc(slices.Clone(s.Requests[agentKey]), func(t time.Time) bool {
			return now.Sub(t) >= window || t.After(now.Add(window))
		})
		if len(kept) >= limit {
			s.Requests[agentKey] = kept
			return true
		}
		allowed = true
		kept = append(kept, now)
		if len(kept) > maxHits {
			kept = kept[len(kept)-maxHits:]
		}
		s.Requests[agentKey] = kept
		return true
	})
	return err == nil && allowed
}

// Leased implements fill.Leases: agentKey is the process key the lease
// was granted to (fill.Agent.ProcessKey); "" is covered by no lease. The
// lease's Stamp is the caller's to check. If the state cannot be read
// there is no lease (the fill is asked in the prompt).
func (d *Dir) Leased(agentKey, service, field, account, origin string, now time.Time) (fill.Lease, bool) {
	var l fill.Lease
	found := false
	err := d.read(func(s *state) {
		for _, x := range s.Leases {
			if x.Covers(agentKey, service, field, account, origin, now) {
				l, found = x, true
			}
		}
	})
	return l, err == nil && found
}

// Grant implements fill.Leases.
func (d *Dir) Grant(l fill.Lease) error {
	return d.update(time.Now(), func(s *state) bool {
		s.Leases = append(slices.DeleteFunc(s.Leases, l.Same), l)
		return true
	})
}

// LiveLeases returns the leases live at now, soonest end first.
func (d *Dir) LiveLeases(now time.Time) ([]fill.Lease, error) {
	var out []fill.Lease
	err := d.read(func(s *state) {
		for _, l := range s.Leases {
			if now.Before(l.Until) {
				out = append(out, l)
			}
		}
	})
	slices.SortFunc(out, func(a, b fill.Lease) int { return a.Until.Compare(b.Until) })
	return out, err
}

// EndLease ends the lease with id; it reports whether there was one.
// End implements fill.Leases: EndLease.
func (d *Dir) End(id string) error {
	_, err := d.EndLease(id)
	return err
}

func (d *Dir) EndLease(id string) (bool, error) {
	ended := false
	err := d.update(time.Now(), func(s *state) bool {
		n := len(s.Leases)
		s.Leases = slices.DeleteFunc(s.Leases, func(l fill.Lease) bool { return l.ID == id })
		ended = len(s.Leases) < n
		return ended
	})
	return ended, err
}

// EndLeases ends the leases on service's saved values (every service's
// when service is "") granted for the value of account (Lease.Item; every
// account's when account is ""). `fillgate forget` and `fillgate
// remember` call it, so that a lease on a value that is gone or replaced
// is no longer listed. It returns how many live leases it ended.
func (d *Dir) EndLeases(service, account string) (int, error) {
	now := time.Now()
	ended := 0
	err := d.update(now, func(s *state) bool {
		n := len(s.Leases)
		s.Leases = slices.DeleteFunc(s.Leases, func(l fill.Lease) bool {
			end := (service == "" || l.Service == service) && (account == "" || l.Item == account)
			if end && now.Before(l.Until) {
				ended++
			}
			return end
		})
		return len(s.Leases) < n
	})
	if err != nil {
		return 0, fmt.Errorf("end the leases: %w", err)
	}
	return ended, nil
}

// read runs fn on the current state under the lock.
func (d *Dir) read(fn func(*state)) error {
	return d.update(time.Now(), func(s *state) bool { fn(s); return false })
}

// update loads the state under the lock, runs fn and, if fn reports a
// change, writes the state back atomically. Entries expired at now are
// pruned on every write.
func (d *Dir) update(now time.Time, fn func(*state) (changed bool)) error {
	unlock, err := d.lock()
	if err != nil {
		return err
	}
	defer unlock()
	s, err := d.load()
	if err != nil {
		return err
	}
	if !fn(s) {
		return nil
	}
	prune(s, now)
	return d.store(s)
}

// lock takes the state file lock, waiting at most LockTimeout.
func (d *Dir) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(d.dir, lockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state lock: %w", err)
	}
	timeout := d.LockTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("state lock: %w", err)
		}
		if ok {
			return func() { _ = unlock(f); _ = f.Close() }, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("state lock: another fillgate process holds it: %w", ctx.Err())
		case <-time.After(wait):
		}
	}
}

// load reads the state file. A missing file is an empty state; a file
// that does not parse is moved aside to cdp-state.json.corrupt and
// replaced by an empty state.
func (d *Dir) load() (*state, error) {
	s := &state{}
	path := filepath.Join(d.dir, stateFile)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("read state: %w", err)
	default:
		if json.Unmarshal(data, s) != nil {
			_ = os.Rename(path, path+".corrupt")
			s = &state{}
		}
	}
	if s.Requests == nil {
		s.Requests = map[string][]time.Time{}
	}
	return s, nil
}

// store writes the state atomically: a temp file in the same directory,
// synced, then renamed over the old one.
func (d *Dir) store(s *state) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	tmp, err := os.CreateTemp(d.dir, stateFile+".*.tmp")
	if err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename this fails harmlessly
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write state: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(d.dir, stateFile)); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

// prune drops ended cool-downs and leases, and request times older than
// keepHits.
func prune(s *state, now time.Time) {
	s.Cooldowns = slices.DeleteFunc(s.Cooldowns, func(c cooldown) bool { return !now.Before(c.Until) })
	s.Leases = slices.DeleteFunc(s.Leases, func(l fill.Lease) bool { return !now.Before(l.Until) })
	s.Bars = slices.DeleteFunc(s.Bars, func(b bar) bool { return !now.Before(b.Until) })
	for k, ts := range s.Requests {
		ts = slices.DeleteFunc(ts, func(t time.Time) bool { return now.Sub(t) > keepHits })
		if len(ts) == 0 {
			delete(s.Requests, k)
		} else {
			s.Requests[k] = ts
		}
	}
}
