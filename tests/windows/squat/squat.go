// Package squat plays, in a test's helper process, a program that made a
// pipe (or socket) by the name fillgate's clients dial: it takes every
// connection, reads what the client sends and answers nothing, then
// reports how much it got.
package squat

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Report is what Serve prints when its input ends: how many clients
// connected, and how many bytes they sent in all.
type Report struct {
	Conns int `json:"conns"`
	Bytes int `json:"bytes"`
}

// Serve prints "ready" to out, accepts on l until in ends (reading each
// client for up to 5 s), closes l and prints the Report as JSON to out.
func Serve(l net.Listener, in io.Reader, out io.Writer) {
	var conns, bytes atomic.Int64
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			wg.Go(func() {
				defer c.Close()
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				n, _ := io.Copy(io.Discard, c)
				bytes.Add(n)
			})
		}
	}()
	fmt.Fprintln(out, "ready")
	_, _ = io.Copy(io.Discard, in)
	l.Close()
	wg.Wait()
	_ = json.NewEncoder(out).Encode(Report{Conns: int(conns.Load()), Bytes: int(bytes.Load())})
}
