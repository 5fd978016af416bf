package fill

import (
	"sync"
	"time"
)

// MemState is a State kept in memory, for one host process.
type MemState struct {
	mu       sync.Mutex
	open     map[string]bool
	cooldown map[[2]string]time.Time
	hits     map[string][]time.Time
}

// NewMemState returns an empty MemState.
func NewMemState() *MemState {
	return &MemState{
		open:     map[string]bool{},
		cooldown: map[[2]string]time.Time{},
		hits:     map[string][]time.Time{},
	}
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
