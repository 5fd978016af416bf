// Command squatter plays another local user who takes a port on
// 127.0.0.1 and records what comes to it. Given one address, it listens
// there, prints "listening <addr>" (or "busy <error>" and exits 2 when it
// cannot bind), then serves HTTP: every request is written whole to
// stdout, and answered with an empty 200. It runs until killed.
package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"sync"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: squatter 127.0.0.1:PORT")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp4", os.Args[1])
	if err != nil {
		fmt.Printf("busy %v\n", err)
		os.Exit(2)
	}
	fmt.Printf("listening %s\n", ln.Addr())
	var mu sync.Mutex
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dump, _ := httputil.DumpRequest(r, true)
		mu.Lock()
		fmt.Printf("--- request\n%s\n", dump)
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
}
