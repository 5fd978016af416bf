package hostcore

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
)

// slowConn is a connection to a prompt that writes its request slowly.
type slowConn struct {
	name string
	c    net.Conn
	done chan string // what the prompt answered, once it closed the connection
}

// dribble connects to addr, writes head at once and then body one byte a
// quarter of a second apart (over and over), until the prompt closes the
// connection; done then gets the status line the prompt answered, if any.
func dribble(ctx context.Context, t *testing.T, name, addr, head string, body []byte) *slowConn {
	t.Helper()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatalf("%s: connect: %v", name, err)
	}
	s := &slowConn{name: name, c: c, done: make(chan string, 1)}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		line, _ := bufio.NewReader(c).ReadString('\n')
		_, _ = io.Copy(io.Discard, c)
		s.done <- strings.TrimSpace(line)
	}()
	go func() {
		if _, err := io.WriteString(c, head); err != nil {
			return
		}
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i = (i + 1) % len(body) {
			select {
			case <-closed:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if _, err := c.Write(body[i : i+1]); err != nil {
				return
			}
		}
	}()
	return s
}

// await waits for the prompt to close s and returns its answer's status
// line ("" for none).
func (s *slowConn) await(ctx context.Context, t *testing.T) string {
	t.Helper()
	defer s.c.Close()
	select {
	case line := <-s.done:
		return line
	case <-ctx.Done():
		t.Fatalf("%s: the prompt never closed the connection", s.name)
		return ""
	}
}

// TestPromptDoorAtTheHost: while a prompt of the real host is open, its
// server cuts a client that sends its headers too slowly (the header
// timeout) and one that sends its body too slowly (the read timeout;
// here the body is a real encrypted answer, so without the timeout it
// would go through), refuses an endless body, and answers guessed nonces
// 404 without burning the prompt. Meanwhile the host serves another
// prompt for another service, which the human answers; once the slow
// clients are cut, the human answers the first prompt too, and after that
// nothing reaches either prompt any more.
func TestPromptDoorAtTheHost(t *testing.T) {
	t.Parallel()
	r := newRig(t, setup{page: loginPage("https://login.github.com"), budget: 4 * time.Minute})
	other := r.newSecret()
	attack := r.newSecret()
	first := make(chan *fakehuman.Page, 1)
	r.behave(atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
		if strings.Contains(p.HTML(), `for <code dir="ltr">login.github.com</code>`) {
			return submitOn(ctx, p, other) // the second prompt: answered at once
		}
		first <- p // the first: the test answers it at the end
		return nil
	}))
	a := r.startFill("github.com")
	var page *fakehuman.Page
	select {
	case page = <-first:
	case <-r.ctx.Done():
		t.Fatal("the first prompt never opened")
	}
	u, err := url.Parse(page.Action())
	if err != nil {
		t.Fatal(err)
	}
	var jar []string
	for _, c := range page.Cookies() {
		jar = append(jar, c.Name+"="+c.Value)
	}
	cookie := strings.Join(jar, "; ")

	slowHead := dribble(r.ctx, t, "slow headers", u.Host,
		"GET "+u.Path+" HTTP/1.1\r\nHost: "+u.Host+"\r\n", []byte("X-Slow: a\r\n"))
	answer, err := page.SubmitBody(attack)
	if err != nil {
		t.Fatal(err)
	}
	defer clear(answer)
	slowBody := dribble(r.ctx, t, "slow body", u.Host, fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nOrigin: http://%s\r\n"+
		"Cookie: %s\r\nSec-Fetch-Site: same-origin\r\nContent-Type: application/x-www-form-urlencoded\r\n"+
		"Content-Length: %d\r\n\r\n", u.Path, u.Host, u.Host, cookie, len(answer)), answer)
	started := time.Now()

	// An endless body, as fast as it goes: refused at the cap.
	endless := endlessBody(r.ctx, t, u.Host, u.Path, cookie)
	if !strings.Contains(endless, " 413 ") {
		t.Errorf("an endless body got %q, want 413", endless)
	}
	// Guessed nonces: each a 404, and the prompt stays open.
	client := loopbackClient()
	for range 50 {
		guess := make([]byte, 32)
		_, _ = rand.Read(guess)
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			req, _ := http.NewRequestWithContext(r.ctx, method, "http://"+u.Host+"/"+base64.RawURLEncoding.EncodeToString(guess), nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("a guessed nonce: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Fatalf("a guessed nonce got %d, want 404", resp.StatusCode)
			}
		}
	}

	// Meanwhile another prompt is served and answered.
	b := r.fill("login.github.com")
	r.expect(b, fill.StatusOK, "inserted")
	if !r.ext.ValueEquals(other) {
		t.Error("the second prompt's fill: value differed")
	}
	t.Logf("the second prompt was answered %v after the slow clients started", time.Since(started).Round(time.Millisecond))

	head := slowHead.await(r.ctx, t)
	t.Logf("slow headers: cut after %v, answered %q", time.Since(started).Round(time.Millisecond), head)
	body := slowBody.await(r.ctx, t)
	t.Logf("slow body: cut after %v, answered %q", time.Since(started).Round(time.Millisecond), body)
	if strings.Contains(body, " 200 ") {
		t.Errorf("the slow body was taken as an answer: %q", body)
	}
	if r.ext.ValueEquals(attack) {
		t.Error("the slow body's value reached the page")
	}

	// The first prompt is still open: the human answers it now.
	if err := submitOn(r.ctx, page, r.secret); err != nil {
		t.Fatalf("the first prompt, after the slow clients: %s", r.safe(err.Error()))
	}
	got := a.wait()
	r.expect(got, fill.StatusOK, "inserted")
	r.expectInsertedTimes(r.secret, 2)
	r.expectPromptDead(page)
	r.expectPromptDead(r.lastPage())
}

// endlessBody posts a chunked body that never ends to the prompt at
// host+path with the human's cookie, as fast as the prompt reads it, and
// returns the status line the prompt answered.
func endlessBody(ctx context.Context, t *testing.T, host, path, cookie string) string {
	t.Helper()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		t.Fatalf("endless body: connect: %v", err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		_, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nOrigin: http://%s\r\nCookie: %s\r\nSec-Fetch-Site: same-origin\r\n"+
			"Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n", path, host, host, cookie)
		chunk := []byte("1000\r\n" + strings.Repeat("a", 0x1000) + "\r\n")
		for err == nil {
			_, err = c.Write(chunk)
		}
	})
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		t.Errorf("endless body: reading the answer: %v", err)
	}
	_ = c.Close() // ends the writer
	return strings.TrimSpace(line)
}

// TestPromptPortHeldWhileWindowOpen: once answered, the prompt's window
// closes while the value goes in, and the prompt's server must keep its
// port bound (answering 410) until the window is closed: a port freed
// while the window still shows a page from it could be bound by another
// local user, who would then serve whatever a reload or a late request of
// that window gets.
func TestPromptPortHeldWhileWindowOpen(t *testing.T) {
	r := newRig(t, setup{page: loginPage("https://github.com")})
	r.ext.Ignore("close_prompt") // the window's close takes its whole budget
	freed := make(chan error, 1)
	r.behave(atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
		if err := submitOn(ctx, p, r.secret); err != nil {
			return err
		}
		// The insert comes once the host has the answer and the window is
		// closing; the window stays open (close_prompt is never answered).
		if _, err := r.ext.Wait(ctx, fakeext.OfType("close_prompt")); err != nil {
			return err
		}
		if _, err := r.ext.Wait(ctx, fakeext.OfType("insert")); err != nil {
			return err
		}
		resp, err := http.Get(p.Action())
		if err != nil {
			freed <- err
			return nil
		}
		resp.Body.Close()
		freed <- nil
		return nil
	}))
	got := r.fill("github.com")
	r.expect(got, fill.StatusOK, "inserted")
	if err := <-freed; errors.Is(err, syscall.ECONNREFUSED) {
		t.Error("the prompt's port was free while its window was still open")
	} else if err != nil {
		t.Errorf("a request to the prompt while its window was open: %v", err)
	}
}
