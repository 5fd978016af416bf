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

// maxSize is where the log is rotated to Name+".1".
const maxSize = 1 << 20

// Open returns a logger appending to stateDir/Name (created 0600, the dir
// 0700), rotating it first when it has grown past 1 MiB. Close the returned
// closer when done.
func Open(stateDir string, attrs ...any) (*slog.Logger, io.Closer, error) {
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
	l := slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return l.With(attrs...), f, nil
}
