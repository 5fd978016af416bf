// Package audit keeps the audit log: one JSON line per request with who
// asked, for which service and origin, and how it ended. It never holds a
// value.
package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/fillgate/fillgate/internal/fill"
)

// FileName is the audit log's name in the state dir.
const FileName = "audit.jsonl"

// maxSize is where the log is rotated to FileName+".1".
const maxSize = 4 << 20

// Log appends to and reads the audit log.
type Log struct {
	path string
	mu   sync.Mutex
}

// Open returns the audit log in stateDir. Nothing is created until the
// first Record.
func Open(stateDir string) *Log {
	return &Log{path: filepath.Join(stateDir, FileName)}
}

// Path is the log file's path.
func (l *Log) Path() string { return l.path }

// Record appends e as one line. Lines are written with O_APPEND in one
// write, so several processes may record at once. A line that does not
// fit (a full disk) is an error and leaves nothing of itself in the log.
func (l *Log) Record(e fill.AuditEntry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode audit entry: %w", err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("audit log dir: %w", err)
	}
	if fi, err := os.Stat(l.path); err == nil && fi.Size() > maxSize {
		if err := os.Rename(l.path, l.path+".1"); err != nil {
			return fmt.Errorf("rotate audit log: %w", err)
		}
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open audit log: %w", err)
	}
	n, werr := f.Write(line)
	if werr != nil && n > 0 {
		takeBack(f, n)
	}
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("write audit log %s: %w", l.path, err)
	}
	return nil
}

// takeBack removes the n bytes a failed write (a full disk) left at the
// end of f, so the log never holds half an entry, which would also run
// into the next one and spoil it. It cuts only when those bytes are still
// the end of the file: another process's entry after them stays.
func takeBack(f *os.File, n int) {
	end, err := f.Seek(0, io.SeekCurrent) // O_APPEND: just past what went in
	if err != nil {
		return
	}
	if fi, err := f.Stat(); err == nil && fi.Size() == end {
		_ = f.Truncate(end - int64(n))
	}
}

// Recent returns up to n of the latest entries, oldest first. Lines that do
// not parse are skipped.
func (l *Log) Recent(n int) ([]fill.AuditEntry, error) {
	var all []fill.AuditEntry
	for _, p := range []string{l.path + ".1", l.path} {
		f, err := os.Open(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read audit log: %w", err)
		}
		all = append(all, parse(f)...)
		f.Close()
	}
	if n > 0 && len(all) > n {
		all = all[len(all)-n:]
	}
	return all, nil
}

func parse(r io.Reader) []fill.AuditEntry {
	var out []fill.AuditEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e fill.AuditEntry
		if err := json.NewDecoder(bytes.NewReader(sc.Bytes())).Decode(&e); err == nil {
			out = append(out, e)
		}
	}
	return out
}
