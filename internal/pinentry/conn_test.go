package pinentry_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/pinentry"
	"github.com/fillgate/fillgate/internal/pinentry/pinentrytest"
)

// fake starts a fake pinentry answering with person, ended with the test.
func fake(t *testing.T, person func(pinentrytest.Request) pinentrytest.Reply) *pinentry.Conn {
	t.Helper()
	c, stop, err := pinentrytest.Pipe(t.Context(), person)
	if err != nil {
		t.Fatalf("fake pinentry: %v", err)
	}
	t.Cleanup(stop)
	return c
}

// reply answers every dialog with r.
func reply(r pinentrytest.Reply) func(pinentrytest.Request) pinentrytest.Reply {
	return func(pinentrytest.Request) pinentrytest.Reply { return r }
}

func TestGetPIN(t *testing.T) {
	long := bytes.Repeat([]byte("%\n\rx"), 700) // escaped: several D lines
	for _, tc := range []struct {
		name string
		pin  []byte
	}{
		{"plain", []byte("correct horse battery staple")},
		{"escapes", []byte("100%\r\n%0A%25 end")},
		{"utf8", []byte("pässwörd 🔑")},
		{"empty", []byte{}},
		{"several D lines", long},
		{"at the limit", bytes.Repeat([]byte("a"), pinentry.MaxSecret)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake(t, reply(pinentrytest.Reply{PIN: tc.pin}))
			got, err := c.GetPIN(t.Context(), pinentry.Dialog{Title: "t", Prompt: "Password:"})
			if err != nil {
				t.Fatalf("GetPIN: %v", err)
			}
			if got == nil || !bytes.Equal(got, tc.pin) {
				t.Error("GetPIN returned another value than the one typed")
			}
			if !pinentry.Zeroed(c) {
				t.Error("the line buffer still holds bytes after GetPIN")
			}
		})
	}
}

func TestOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name string
		code uint32
		want error
	}{
		{"cancel from pinentry", pinentrytest.Canceled, pinentry.ErrCanceled},
		{"cancel from another source", 99, pinentry.ErrCanceled},
		{"cancel from gpg-agent's source", 4<<24 | 99, pinentry.ErrCanceled},
		{"not confirmed", pinentrytest.NotConfirmed, pinentry.ErrNotConfirmed},
		{"timeout", pinentrytest.Timeout, pinentry.ErrTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake(t, reply(pinentrytest.Reply{Err: tc.code}))
			err := c.Confirm(t.Context(), pinentry.Dialog{NotOK: "No"})
			if !errors.Is(err, tc.want) {
				t.Errorf("Confirm = %v, want %v", err, tc.want)
			}
			var e *pinentry.Error
			if !errors.As(err, &e) || e.Code != tc.code {
				t.Errorf("Confirm = %v, want a pinentry.Error with code %d", err, tc.code)
			}
			for _, other := range []error{pinentry.ErrCanceled, pinentry.ErrNotConfirmed, pinentry.ErrTimeout} {
				if other != tc.want && errors.Is(err, other) {
					t.Errorf("Confirm = %v matches %v too", err, other)
				}
			}
			pin, err := c.GetPIN(t.Context(), pinentry.Dialog{})
			if pin != nil || !errors.Is(err, tc.want) {
				t.Errorf("GetPIN = %v, want %v and no value", err, tc.want)
			}
		})
	}
	t.Run("ok", func(t *testing.T) {
		c := fake(t, reply(pinentrytest.Reply{}))
		if err := c.Confirm(t.Context(), pinentry.Dialog{}); err != nil {
			t.Errorf("Confirm = %v, want nil", err)
		}
	})
	t.Run("other error", func(t *testing.T) {
		c := fake(t, reply(pinentrytest.Reply{Err: 83886083}))
		err := c.Confirm(t.Context(), pinentry.Dialog{})
		var e *pinentry.Error
		if !errors.As(err, &e) || errors.Is(err, pinentry.ErrCanceled) || errors.Is(err, pinentry.ErrTimeout) {
			t.Errorf("Confirm = %v, want a plain pinentry.Error", err)
		}
	})
}

// TestMalformed: whatever pinentry says, the client returns an error (or
// skips what Assuan lets it skip), never a value it should not, and never
// keeps a byte of a D line.
func TestMalformed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		raw   string
		want  error // nil: the answer is fine
		value string
	}{
		{"status and comments are skipped", "S PROGRESS 1\n# a comment\nS\nD abc\nOK\n", nil, "abc"},
		{"CRLF line ends", "D abc\r\nOK\r\n", nil, "abc"},
		{"OK with text", "D x\nOK fine\n", nil, "x"},
		{"not Assuan", "hello\n", pinentry.ErrProtocol, ""},
		{"OK glued to text", "OKAY\n", pinentry.ErrProtocol, ""},
		{"D without a space", "Dabc\nOK\n", pinentry.ErrProtocol, ""},
		{"ERR without a code", "ERR\n", pinentry.ErrProtocol, ""},
		{"ERR with a bad code", "ERR abc Cancelled\n", pinentry.ErrProtocol, ""},
		{"data then ERR", "D secret\nERR 83886179 Operation cancelled\n", pinentry.ErrCanceled, ""},
		{"data then hang-up", "D secret\n", pinentry.ErrClosed, ""},
		{"half a line then hang-up", "D secr", pinentry.ErrClosed, ""},
		{"a line too long", "D " + strings.Repeat("a", pinentry.MaxLine+10) + "\nOK\n", pinentry.ErrProtocol, ""},
		{"no LF at all", strings.Repeat("a", 3*pinentry.MaxLine), pinentry.ErrProtocol, ""},
		{"too much data", strings.Repeat("D "+strings.Repeat("a", 900)+"\n", 5) + "OK\n", pinentry.ErrProtocol, ""},
		{"inquire", "INQUIRE QUALITY abc\nERR 83886179 cancelled\n", pinentry.ErrProtocol, ""},
		{"inquire then OK", "INQUIRE QUALITY abc\nOK\n", pinentry.ErrProtocol, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake(t, reply(pinentrytest.Reply{Raw: tc.raw, Exit: strings.HasSuffix(tc.name, "hang-up")}))
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			pin, err := c.GetPIN(ctx, pinentry.Dialog{})
			if !errors.Is(err, tc.want) && (tc.want != nil || err != nil) {
				t.Errorf("GetPIN = %v, want %v", err, tc.want)
			}
			if tc.want == nil && string(pin) != tc.value {
				t.Errorf("GetPIN returned another value than sent")
			}
			if tc.want != nil && pin != nil {
				t.Error("GetPIN returned a value with its error")
			}
			if !pinentry.Zeroed(c) {
				t.Error("the line buffer still holds bytes")
			}
			if tc.want != nil && !errors.Is(tc.want, pinentry.ErrCanceled) {
				// A broken session stays broken.
				if err := c.Confirm(t.Context(), pinentry.Dialog{}); err == nil {
					t.Error("the session went on after a protocol error")
				}
			}
		})
	}
}

func TestConfirmRefusesData(t *testing.T) {
	c := fake(t, reply(pinentrytest.Reply{Raw: "D secret\nOK\n"}))
	if err := c.Confirm(t.Context(), pinentry.Dialog{}); !errors.Is(err, pinentry.ErrProtocol) {
		t.Errorf("Confirm = %v, want a protocol error", err)
	}
	if !pinentry.Zeroed(c) {
		t.Error("the line buffer still holds bytes")
	}
}

// TestEscapedText: page text with newlines, %-escapes, CRs and whole
// Assuan commands in it reaches pinentry as the same text, one command
// per line, and adds no command.
func TestEscapedText(t *testing.T) {
	hostile := "alice\nOK\nD injected\nBYE\r\n%0AGETPIN %25 \x00\x1b[31m end"
	var got pinentrytest.Request
	c := fake(t, func(r pinentrytest.Request) pinentrytest.Reply { got = r; return pinentrytest.Reply{} })
	d := pinentry.Dialog{
		Title: hostile, Description: "The page shows “" + hostile + "”", Prompt: hostile,
		OK: hostile, NotOK: hostile, Cancel: hostile, Error: hostile, Timeout: 1500 * time.Millisecond,
	}
	if err := c.Confirm(t.Context(), d); err != nil {
		t.Fatalf("Confirm: %v", err)
	}
	d.Timeout = 2 * time.Second // whole seconds, rounded up
	if got.Dialog != d {
		t.Errorf("pinentry saw %+v, want %+v", got.Dialog, d)
	}
	want := []string{"SETTITLE", "SETDESC", "SETPROMPT", "SETOK", "SETNOTOK", "SETCANCEL", "SETERROR", "SETTIMEOUT", "CONFIRM"}
	if len(got.Lines) != len(want) {
		t.Fatalf("pinentry got %d lines, want %d: %q", len(got.Lines), len(want), got.Lines)
	}
	for i, l := range got.Lines {
		if cmd, _, _ := strings.Cut(l, " "); cmd != want[i] {
			t.Errorf("line %d is %q, want the %s command", i, l, want[i])
		}
		if strings.ContainsAny(l, "\r\x00\x1b") {
			t.Errorf("line %d holds a raw control character: %q", i, l)
		}
	}
}

func TestTooLongText(t *testing.T) {
	c := fake(t, reply(pinentrytest.Reply{}))
	err := c.Confirm(t.Context(), pinentry.Dialog{Description: strings.Repeat("%", pinentry.MaxLine)})
	if err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("Confirm = %v, want a too-long error", err)
	}
	// Nothing was sent: the session goes on.
	if err := c.Confirm(t.Context(), pinentry.Dialog{Description: "short"}); err != nil {
		t.Errorf("Confirm after a refused text = %v", err)
	}
}

func TestOption(t *testing.T) {
	var got pinentrytest.Request
	c := fake(t, func(r pinentrytest.Request) pinentrytest.Reply { got = r; return pinentrytest.Reply{} })
	for _, name := range []string{"ttyname", "TTYTYPE", "allow-external-password-cache"} {
		if err := c.Option(t.Context(), name, "x"); err == nil {
			t.Errorf("Option(%s) was sent", name)
		}
	}
	for _, name := range []string{"", "a b", "a=b", "a\nb"} {
		if err := c.Option(t.Context(), name, ""); err == nil {
			t.Errorf("Option(%q) was sent", name)
		}
	}
	if err := c.Option(t.Context(), "no-grab", ""); err != nil {
		t.Fatal(err)
	}
	if err := c.Option(t.Context(), "lc-ctype", "C.UTF-8\nBYE"); err != nil {
		t.Fatal(err)
	}
	if err := c.Confirm(t.Context(), pinentry.Dialog{}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"no-grab", "lc-ctype=C.UTF-8\nBYE"}; strings.Join(got.Options, "|") != strings.Join(want, "|") {
		t.Errorf("options = %q, want %q", got.Options, want)
	}
}

func TestReset(t *testing.T) {
	var got pinentrytest.Request
	c := fake(t, func(r pinentrytest.Request) pinentrytest.Reply { got = r; return pinentrytest.Reply{} })
	if err := c.Confirm(t.Context(), pinentry.Dialog{Title: "a", NotOK: "b"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Reset(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.Confirm(t.Context(), pinentry.Dialog{Description: "c"}); err != nil {
		t.Fatal(err)
	}
	if got.Dialog != (pinentry.Dialog{Description: "c"}) {
		t.Errorf("after RESET pinentry shows %+v", got.Dialog)
	}
}

// TestContextEnds: a dialog nobody answers ends with ctx, promptly, and
// the session is hung up.
func TestContextEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(context.CancelFunc)
		want error
	}{
		{"deadline", func(context.CancelFunc) {}, context.DeadlineExceeded},
		{"cancel", func(cancel context.CancelFunc) { cancel() }, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake(t, reply(pinentrytest.Reply{Hang: true}))
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			if tc.want == context.Canceled {
				time.AfterFunc(50*time.Millisecond, cancel)
			}
			start := time.Now()
			_, err := c.GetPIN(ctx, pinentry.Dialog{})
			if !errors.Is(err, tc.want) {
				t.Errorf("GetPIN = %v, want %v", err, tc.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("GetPIN took %v after ctx ended", d)
			}
			if err := c.Confirm(t.Context(), pinentry.Dialog{}); err == nil {
				t.Error("the session went on after a hang-up")
			}
		})
	}
}

func TestExit(t *testing.T) {
	c := fake(t, reply(pinentrytest.Reply{Exit: true}))
	if _, err := c.GetPIN(t.Context(), pinentry.Dialog{}); !errors.Is(err, pinentry.ErrClosed) {
		t.Errorf("GetPIN = %v, want ErrClosed", err)
	}
}

// TestContextEndsWhileTheProgramDies: when ctx ends, Process kills the
// program (an AfterFunc of ctx) while GetPIN hangs the session up
// (another): whichever runs first, GetPIN says ctx ended, never that the
// connection closed (it failed once so in CI: the kill's EOF was read
// before ctx's loop reached GetPIN's hang-up, which then never ran).
func TestContextEndsWhileTheProgramDies(t *testing.T) {
	for i := range 300 {
		c, stop, err := pinentrytest.Pipe(t.Context(), reply(pinentrytest.Reply{Hang: true}))
		if err != nil {
			t.Fatalf("fake pinentry: %v", err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		context.AfterFunc(ctx, stop) // the program dies at once, as a killed one does
		time.AfterFunc(time.Millisecond, cancel)
		_, err = c.GetPIN(ctx, pinentry.Dialog{})
		stop()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("round %d: GetPIN = %v, want context.Canceled", i, err)
		}
	}
}
