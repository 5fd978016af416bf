// Package nativemsg speaks the browsers' native-messaging framing and runs a
// request/response port over it.
//
// A frame is a 4-byte length in the machine's native byte order followed by
// that many bytes of UTF-8 JSON. The host reads frames of up to MaxRead bytes
// and never writes one over MaxWrite (Chrome's limit for host → browser).
// A frame is always read whole before it is decoded, so a malformed body is
// skipped without losing the stream.
//
// Secrets: the only frame that ever carries one is an outgoing request built
// with Port.CallRaw. Its body buffer and the frame buffer made from it are
// zeroed right after the single Write call that hands them to the writer. Go
// cannot zero what the writer (for a real host, the kernel's pipe buffer to
// the browser) has already taken, but nothing in this package keeps a copy.
// Errors and log lines never contain a frame's content or an outgoing
// frame's length.
package nativemsg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// MaxRead is the largest frame body the host accepts (Chrome's limit for
// browser → host messages is 64 MiB).
const MaxRead = 64 << 20

// MaxWrite is the largest frame body the host sends (Chrome's limit for host
// → browser messages is 1 MB).
const MaxWrite = 1024 * 1024

// ErrFrameTooLarge is returned by ReadFrame for a length prefix over MaxRead.
// The stream cannot be resynchronised after it, so readers must stop.
var ErrFrameTooLarge = errors.New("nativemsg: incoming message exceeds the 64 MiB limit")

// ErrTooLarge is returned for an outgoing message over MaxWrite. Nothing is
// written: a frame is never truncated.
var ErrTooLarge = errors.New("nativemsg: outgoing message exceeds the 1 MB limit")

// smallFrame is the size up to which ReadFrame allocates the whole body at
// once; larger bodies grow as they arrive, so a lying length prefix cannot
// make the reader allocate 64 MiB up front.
const smallFrame = 64 << 10

// ReadFrame reads one whole frame from r and returns its body, which may be
// empty (a zero-length frame). It handles short reads.
//
// At end of input before a length prefix it returns io.EOF; when input ends
// inside a prefix or a body it returns io.ErrUnexpectedEOF. A prefix over
// MaxRead gives ErrFrameTooLarge and nothing more is read.
func ReadFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err // io.EOF or io.ErrUnexpectedEOF, or a read error
	}
	n := binary.NativeEndian.Uint32(hdr[:])
	if n > MaxRead {
		return nil, ErrFrameTooLarge
	}
	if n <= smallFrame {
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, eofIsUnexpected(err)
		}
		return body, nil
	}
	body, err := io.ReadAll(io.LimitReader(r, int64(n)))
	if err != nil {
		return nil, fmt.Errorf("read message body: %w", err)
	}
	if len(body) != int(n) {
		return nil, io.ErrUnexpectedEOF
	}
	return body, nil
}

func eofIsUnexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// WriteFrame writes body to w as one frame in a single Write call. It does
// not modify or keep body. Use a Writer when several goroutines write.
func WriteFrame(w io.Writer, body []byte) error {
	if len(body) > MaxWrite {
		return ErrTooLarge
	}
	frame := make([]byte, 4+len(body))
	binary.NativeEndian.PutUint32(frame, uint32(len(body)))
	copy(frame[4:], body)
	n, err := w.Write(frame)
	clear(frame) // it may hold a secret
	if err != nil {
		return fmt.Errorf("write message: %w", err)
	}
	if n != len(frame) {
		return fmt.Errorf("write message: %w", io.ErrShortWrite)
	}
	return nil
}

// Writer writes whole frames to one io.Writer from many goroutines: each
// frame goes out in one Write call while no other frame is being written.
// After a failed write the stream may hold part of a frame, so every later
// write fails with the same error.
type Writer struct {
	mu     sync.Mutex
	w      io.Writer
	broken error
}

// NewWriter returns a Writer that writes frames to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w}
}

// WriteFrame writes body as one frame. It does not modify or keep body.
func (w *Writer) WriteFrame(body []byte) error {
	if len(body) > MaxWrite {
		return ErrTooLarge // checked first: nothing is written
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return w.broken
	}
	if err := WriteFrame(w.w, body); err != nil {
		w.broken = fmt.Errorf("stream broken by an earlier failed write: %w", err)
		return err
	}
	return nil
}
