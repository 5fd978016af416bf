// Package logfile opens fillgate's own log in the state dir: plain text
// slog records appended by the host and by `fillgate fill` on the CDP path.
// Nothing logged anywhere in fillgate ever holds a value.
package logfile

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
)

// Name is the log file's name in the state dir.
const Name = "fillgate.log"

// DebugEnv is the environment variable that, set to "debug", makes the log
// keep debug records too: among them how long each step of a fill took
// ("timing" records: a step's name and milliseconds, never a value).
const DebugEnv = "FILLGATE_LOG"

// maxSize is where the log is rotated to Name+".1".
const maxSize = 1 << 20

// Debug reports whether env asks for debug records (FILLGATE_LOG=debug).
func Debug(env func(string) string) bool { return env != nil && env(DebugEnv) == "debug" }

// Open returns a logger appending to stateDir/Name (created 0600, the dir
// 0700), rotating it first when it has grown past 1 MiB; with debug it
// keeps debug records too. Close the returned closer when done.
func Open(stateDir string, debug bool, attrs ...any) (*slog.Logger, io.Closer, error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("log dir: %w", err)
	}
	path := filepath.Join(stateDir, Name)
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxSize {
		_ = os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open log: %w", err)
	}
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	l := slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: level}))
	return l.With(attrs...), f, nil
}
