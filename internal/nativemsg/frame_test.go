package nativemsg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

// frameBytes builds a raw frame by hand, independently of WriteFrame.
func frameBytes(body string) []byte {
	b := binary.NativeEndian.AppendUint32(nil, uint32(len(body)))
	return append(b, body...)
}

func header(n uint32) []byte { return binary.NativeEndian.AppendUint32(nil, n) }

func TestReadFrameShortReads(t *testing.T) {
	big := `{"x":"` + strings.Repeat("y", smallFrame+10) + `"}`
	bodies := []string{`{"a":1}`, `{}`, big, `{"é":"ü"}`}
	var in []byte
	for _, b := range bodies {
		in = append(in, frameBytes(b)...)
	}
	readers := map[string]func(io.Reader) io.Reader{
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"whole":    func(r io.Reader) io.Reader { return r },
	}
	for name, wrap := range readers {
		t.Run(name, func(t *testing.T) {
			r := wrap(bytes.NewReader(in))
			for i, want := range bodies {
				got, err := ReadFrame(r)
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if string(got) != want {
					t.Fatalf("frame %d differs", i)
				}
			}
			if _, err := ReadFrame(r); err != io.EOF {
				t.Fatalf("after the last frame: got %v, want io.EOF", err)
			}
		})
	}
}

func TestReadFrameZeroLength(t *testing.T) {
	in := append(header(0), frameBytes(`{"n":2}`)...)
	r := bytes.NewReader(in)
	got, err := ReadFrame(r)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("zero-length frame: got %q, %v; want an empty body", got, err)
	}
	got, err = ReadFrame(r)
	if err != nil || string(got) != `{"n":2}` {
		t.Fatalf("frame after the empty one: %q, %v", got, err)
	}
}

func TestReadFrameLimits(t *testing.T) {
	_, err := ReadFrame(bytes.NewReader(append(header(MaxRead+1), "{}"...)))
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("length MaxRead+1: got %v, want ErrFrameTooLarge", err)
	}
	_, err = ReadFrame(bytes.NewReader(header(0xffffffff)))
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("length 2^32-1: got %v, want ErrFrameTooLarge", err)
	}
	// Exactly MaxRead is allowed: the reader then wants that many bytes.
	_, err = ReadFrame(bytes.NewReader(append(header(MaxRead), "{}"...)))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("length MaxRead with a short body: got %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestReadFrameEndOfInput(t *testing.T) {
	cases := map[string]struct {
		in   []byte
		want error
	}{
		"nothing":             {nil, io.EOF},
		"half a header":       {[]byte{1, 0}, io.ErrUnexpectedEOF},
		"header only":         {header(5), io.ErrUnexpectedEOF},
		"short small body":    {append(header(5), "{}"...), io.ErrUnexpectedEOF},
		"short large body":    {append(header(smallFrame+100), make([]byte, smallFrame)...), io.ErrUnexpectedEOF},
		"frame then half hdr": {append(frameBytes("{}"), 9), io.ErrUnexpectedEOF},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := bytes.NewReader(c.in)
			var err error
			for err == nil {
				_, err = ReadFrame(r)
			}
			if err != c.want {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

func TestReadFrameReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := ReadFrame(io.MultiReader(bytes.NewReader(header(10)), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want the reader's error", err)
	}
}

func TestWriteFrameFormat(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteFrame(&buf, []byte(`{"a":"b"}`)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), frameBytes(`{"a":"b"}`)) {
		t.Fatalf("frame is % x", buf.Bytes())
	}
}

// countingWriter counts Write calls and keeps the slices it was given (not
// copies), so a test can see whether the caller zeroed them afterwards.
type countingWriter struct {
	mu     sync.Mutex
	calls  int
	kept   [][]byte
	copies bytes.Buffer
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls++
	w.kept = append(w.kept, p)
	w.copies.Write(p)
	return len(p), nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func TestWriteFrameOneWriteAndZeroed(t *testing.T) {
	w := &countingWriter{}
	body := []byte(`{"value":"not-a-real-secret"}`)
	if err := WriteFrame(w, body); err != nil {
		t.Fatal(err)
	}
	if w.calls != 1 {
		t.Fatalf("%d Write calls for one frame, want 1", w.calls)
	}
	if !allZero(w.kept[0]) {
		t.Fatal("the frame buffer handed to Write was not zeroed afterwards")
	}
	if string(body) != `{"value":"not-a-real-secret"}` {
		t.Fatal("WriteFrame modified the caller's body")
	}
	if !bytes.Equal(w.copies.Bytes(), frameBytes(string(body))) {
		t.Fatal("the bytes written are not the frame")
	}
}

func TestWriteFrameLimit(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteFrame(&buf, bytes.Repeat([]byte{'1'}, MaxWrite)); err != nil {
		t.Fatalf("a body of exactly MaxWrite: %v", err)
	}
	if buf.Len() != MaxWrite+4 {
		t.Fatal("the MaxWrite frame was not written whole")
	}
	buf.Reset()
	for _, write := range []func([]byte) error{
		func(b []byte) error { return WriteFrame(&buf, b) },
		NewWriter(&buf).WriteFrame,
	} {
		err := write(bytes.Repeat([]byte{'1'}, MaxWrite+1))
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("MaxWrite+1: got %v, want ErrTooLarge", err)
		}
		if strings.Contains(err.Error(), strconv.Itoa(MaxWrite+1)) {
			t.Fatal("the error names the outgoing length")
		}
		if buf.Len() != 0 {
			t.Fatal("an oversized message wrote bytes")
		}
	}
}

type failingWriter struct {
	calls int
	n     int // bytes to report
	err   error
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.calls++
	return w.n, w.err
}

func TestWriterStickyAfterFailure(t *testing.T) {
	boom := errors.New("boom")
	fw := &failingWriter{n: 3, err: boom}
	w := NewWriter(fw)
	if err := w.WriteFrame([]byte(`{}`)); !errors.Is(err, boom) {
		t.Fatalf("first write: %v", err)
	}
	if err := w.WriteFrame([]byte(`{}`)); !errors.Is(err, boom) {
		t.Fatalf("second write: %v", err)
	}
	if fw.calls != 1 {
		t.Fatalf("the broken stream was written to again (%d calls)", fw.calls)
	}

	short := NewWriter(&failingWriter{n: 1})
	if err := short.WriteFrame([]byte(`{}`)); !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("short write: %v", err)
	}
}

// choppyWriter splits every Write into small pieces and yields between
// them without holding a lock across the whole call, the way a real pipe
// may accept a large write in parts. Without the Writer's mutex, frames
// written concurrently would interleave here.
type choppyWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *choppyWriter) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i += 7 {
		w.mu.Lock()
		w.buf.Write(p[i:min(i+7, len(p))])
		w.mu.Unlock()
		runtime.Gosched()
	}
	return len(p), nil
}

func TestConcurrentWritersDoNotInterleave(t *testing.T) {
	cw := &choppyWriter{}
	w := NewWriter(cw)
	const writers, each = 8, 100
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				body := fmt.Sprintf(`{"g":%d,"i":%d,"pad":%q}`, g, i, strings.Repeat("x", (g*31+i)%97))
				if err := w.WriteFrame([]byte(body)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()

	r := bytes.NewReader(cw.buf.Bytes())
	next := make([]int, writers)
	for n := 0; ; n++ {
		body, err := ReadFrame(r)
		if err == io.EOF {
			if n != writers*each {
				t.Fatalf("read %d frames, want %d", n, writers*each)
			}
			break
		}
		if err != nil {
			t.Fatalf("frame %d: %v", n, err)
		}
		var g, i int
		var pad string
		if _, err := fmt.Sscanf(string(body), `{"g":%d,"i":%d,"pad":%q}`, &g, &i, &pad); err != nil {
			t.Fatalf("frame %d is corrupt: %v", n, err)
		}
		if pad != strings.Repeat("x", (g*31+i)%97) || i != next[g] {
			t.Fatalf("frame %d is corrupt or out of order", n)
		}
		next[g]++
	}
}
