package fill

import (
	"slices"
	"sync"
	"time"
)

// MemState is a State and the Leases kept in memory, for one host
// process.
type MemState struct {
	mu       sync.Mutex
	open     map[string]bool
	cooldown map[[2]string]time.Time
	hits     map[string][]time.Time
	bars     map[string]time.Time
	leases   []Lease
}

// NewMemState returns an empty MemState.
func NewMemState() *MemState {
	return &MemState{
		open:     map[string]bool{},
		cooldown: map[[2]string]time.Time{},
		hits:     map[string][]time.Time{},
		bars:     map[string]time.Time{},
	}
}

var (
	_ Leases = (*MemState)(nil)
	_ Bars   = (*MemState)(nil)
)

// Barred implements Bars.
func (s *MemState) Barred(service string, now time.Time) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	until, ok := s.bars[service]
	return until, ok && now.Before(until)
}

// Bar implements Bars.
func (s *MemState) Bar(service string, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bars[service] = until
	return nil
}

// Leased implements Leases.
func (s *MemState) Leased(agentKey, service, field, account, origin string, now time.Time) (Lease, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.leases {
		if l.Covers(agentKey, service, field, account, origin, now) {
			return l, true
		}
	}
	return Lease{}, false
}

// Grant implements Leases.
func (s *MemState) Grant(l Lease) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leases = append(slices.DeleteFunc(s.leases, l.Same), l)
	return nil
}

// LiveLeases returns the leases live at now, soonest end first, and
// forgets the ended ones.
func (s *MemState) LiveLeases(now time.Time) []Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leases = slices.DeleteFunc(s.leases, func(l Lease) bool { return !now.Before(l.Until) })
	out := slices.Clone(s.leases)
	slices.SortFunc(out, func(a, b Lease) int { return a.Until.Compare(b.Until) })
	return out
}

// EndLease ends the lease with id; it reports whether there was one.
// End implements Leases: EndLease, which cannot fail.
func (s *MemState) End(id string) error {
	s.EndLease(id)
	return nil
}

func (s *MemState) EndLease(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.leases)
	s.leases = slices.DeleteFunc(s.leases, func(l Lease) bool { return l.ID == id })
	return len(s.leases) < n
}

// Claim implements State.
func (s *MemState) Claim(service string) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[service] {
		return nil, ErrBusy
	}
	s.open[service] = true
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.open, service)
			s.mu.Unlock()
		})
	}, nil
}

// CoolingDown implements State.
func (s *MemState) CoolingDown(agentKey, service string, now time.Time) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [2]string{agentKey, service}
	until, ok := s.cooldown[k]
	if ok && !now.Before(until) {
		delete(s.cooldown, k)
		return time.Time{}, false
	}
	return until, ok
}

// NoteNoResponse implements State.
func (s *MemState) NoteNoResponse(agentKey, service string, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cooldown[[2]string{agentKey, service}] = until
	return nil
}

// Allow implements State with a sliding window.
func (s *MemState) Allow(agentKey string, now time.Time, limit int, window time.Duration) bool {
	if limit <= 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.hits[agentKey][:0]
	for _, t := range s.hits[agentKey] {
		if now.Sub(t) < window {
			kept = append(kept, t)
		}
	}
	if len(kept) >= limit {
		s.hits[agentKey] = kept
		return false
	}
	s.hits[agentKey] = append(kept, now)
	return true
}
