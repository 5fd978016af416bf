package nativemsg

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"testing"
)

// FuzzReadFrame feeds arbitrary bytes to the frame reader and the envelope
// decoder. Every frame read must re-encode to exactly the bytes consumed, no
// body may exceed MaxRead, and reading must end with one of the documented
// errors. Decoding a body must never panic.
func FuzzReadFrame(f *testing.F) {
	f.Add(frameBytes(`{"id":1,"type":"pong"}`))
	f.Add(append(frameBytes(`{"type":"hello"}`), frameBytes(`{bad`)...))
	f.Add(header(0))
	f.Add(header(MaxRead + 1))
	f.Add([]byte{1, 2})
	f.Add(append(header(10), "{}"...))
	f.Add(frameBytes(`{"id":"x","type":"error","error":"no_tab"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		var rebuilt []byte
		for {
			body, err := ReadFrame(r)
			if err != nil {
				consumed := len(data) - r.Len()
				switch {
				case err == io.EOF:
					if consumed != len(data) || !bytes.Equal(rebuilt, data) {
						t.Fatal("io.EOF before the end of input")
					}
				case err == io.ErrUnexpectedEOF:
					if consumed != len(data) {
						t.Fatal("io.ErrUnexpectedEOF before the end of input")
					}
				case errors.Is(err, ErrFrameTooLarge):
					if len(data)-len(rebuilt) < 4 || binary.NativeEndian.Uint32(data[len(rebuilt):]) <= MaxRead {
						t.Fatal("ErrFrameTooLarge without an oversized prefix")
					}
				default:
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if len(body) > MaxRead {
				t.Fatal("body over MaxRead")
			}
			rebuilt = binary.NativeEndian.AppendUint32(rebuilt, uint32(len(body)))
			rebuilt = append(rebuilt, body...)
			if !bytes.Equal(rebuilt, data[:len(rebuilt)]) {
				t.Fatal("frames read do not re-encode to the input")
			}
			if env, bad := parseEnvelope(body); bad == "" {
				reply, err := decodeReply(body)
				if (env.Type == "error") != (err != nil) || (err == nil && !bytes.Equal(reply, body)) {
					t.Fatal("decodeReply disagrees with the envelope")
				}
			}
		}
	})
}

// BenchmarkRoundTrip measures one Call and its reply over in-memory pipes,
// with a peer that answers every request.
func BenchmarkRoundTrip(b *testing.B) {
	hostR, peerW := io.Pipe()
	peerR, hostW := io.Pipe()
	benchRoundTrip(b, hostR, hostW, peerR, peerW)
}

// BenchmarkRoundTripOSPipe is the same over OS pipes, as with a browser.
func BenchmarkRoundTripOSPipe(b *testing.B) {
	hostR, peerW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	peerR, hostW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	benchRoundTrip(b, hostR, hostW, peerR, peerW)
}

func benchRoundTrip(b *testing.B, hostR io.ReadCloser, hostW io.WriteCloser, peerR io.ReadCloser, peerW io.WriteCloser) {
	p := NewPort(hostR, hostW, nil)
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- p.Run(ctx) }()
	go func() {
		defer peerW.Close()
		w := NewWriter(peerW)
		for {
			body, err := ReadFrame(peerR)
			if err != nil {
				return
			}
			var req struct{ ID int64 }
			if json.Unmarshal(body, &req) != nil {
				return
			}
			reply := strconv.AppendInt([]byte(`{"id":`), req.ID, 10)
			reply = append(reply, `,"type":"pong"}`...)
			if w.WriteFrame(reply) != nil {
				return
			}
		}
	}()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Call(ctx, ping{"ping", 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	hostW.Close()
	<-runErr
	cancel()
	hostR.Close()
	peerR.Close()
}
