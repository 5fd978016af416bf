//go:build linux

package squatter_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/tests/fakes/squatter"
)

func TestSquatterRecordsAsNobodyAndSeesABusyPort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bin := squatter.Build(t)
	held, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := held.Addr().String()
	if _, err := squatter.Start(t, ctx, bin, addr); !errors.Is(err, squatter.ErrInUse) {
		t.Fatalf("a bound port: %v, want ErrInUse", err)
	}
	held.Close()
	s, err := squatter.Start(t, ctx, bin, addr)
	if err != nil {
		t.Fatalf("a free port: %v", err)
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(s.PID()) + "/status")
	if err != nil || !strings.Contains(string(status), "\nUid:\t65534\t65534\t65534\t65534\n") {
		t.Fatalf("the squatter does not run as nobody (%v)", err)
	}
	resp, err := http.Post("http://"+addr+"/x", "text/plain", strings.NewReader("marker-body"))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Requests() != 1 || !strings.Contains(string(s.Received()), "marker-body") {
		t.Errorf("the squatter recorded %q", s.Received())
	}
}
