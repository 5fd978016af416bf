package fill

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// stopwatch writes a debug "timing" record at each step of one request:
// the step's name, the milliseconds since the request began and since the
// step before. It never records anything of the request but those (issue
// 12: find where the time of a fill goes). A logger that drops debug
// records makes it free.
type stopwatch struct {
	log   *slog.Logger
	on    bool
	start time.Time
	via   string
	mu    sync.Mutex // the prompt's closing laps from its own goroutine
	at    time.Time
}

func newStopwatch(log *slog.Logger, via string) *stopwatch {
	now := time.Now()
	return &stopwatch{log: log, on: log.Enabled(context.Background(), slog.LevelDebug), start: now, at: now, via: via}
}

// lap records that step ended now.
func (s *stopwatch) lap(step string) {
	if !s.on {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	LogTiming(s.log, now.Sub(s.at), "via", s.via, "step", step, "total_ms", millis(now.Sub(s.start)))
	s.at = now
}

// LogTiming writes a debug "timing" record: attrs (names of steps or
// calls, never anything of a request's content) and d in milliseconds.
// FILLGATE_LOG=debug keeps such records in fillgate.log.
func LogTiming(l *slog.Logger, d time.Duration, attrs ...any) {
	l.Debug("timing", append(attrs, "ms", millis(d))...)
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// run is what one request's steps share besides its context: its
// stopwatch, and the prompt's closing, which goes on while the value is
// inserted and which Run waits for.
type run struct {
	sw      *stopwatch
	closing *sync.WaitGroup
	// ahead is the context of what runs ahead of the fill (driveAhead),
	// ended when the fill returns; aheadDone waits for it.
	ahead     context.Context
	aheadDone *sync.WaitGroup
	// drive is what drives the browser, as the fill found out before
	// asking (nil: not looked at yet).
	drive *Drive
	// drivenSetting is the person's driven setting for the page: what the fill
	// would do if a program began to drive the browser.
	drivenSetting string
}
