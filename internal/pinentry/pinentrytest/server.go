// Package pinentrytest is a fake pinentry for tests: the program's side
// of the Assuan session, with a function in the place of the person.
package pinentrytest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/fillgate/fillgate/internal/pinentry"
)

// Request is one dialog the fake was asked to show.
type Request struct {
	// Command is "GETPIN" or "CONFIRM".
	Command string
	// Dialog is what the dialog shows: every SET command since the
	// session began or the last RESET, unescaped (Timeout from
	// SETTIMEOUT).
	Dialog pinentry.Dialog
	// Options are the OPTION arguments of the session so far.
	Options []string
	// Lines are the command lines received since the last dialog, as
	// sent (escaped), without their LF.
	Lines []string
}

// Reply is how the fake person answers a Request.
type Reply struct {
	// PIN is what GETPIN returns (sent as D lines, escaped, split as
	// pinentry splits them); ignored for CONFIRM. The fake does not keep it.
	PIN []byte
	// Err, when not 0, is the ERR code to answer with instead (e.g.
	// pinentry.CodeCanceled | SourcePinentry).
	Err uint32
	// Raw, when not "", is written as it is instead of any answer: a
	// malformed or hostile response.
	Raw string
	// Hang leaves the dialog unanswered until the session is closed.
	Hang bool
	// Exit ends the session without an answer (after writing Raw, if
	// any), as a pinentry that crashed.
	Exit bool
}

// SourcePinentry is GPG_ERR_SOURCE_PINENTRY in an error code's high bits,
// as pinentry sends them.
const SourcePinentry = 5 << 24

// Canceled, NotConfirmed and Timeout are the ERR codes pinentry answers a
// cancel, the NotOK button and its timeout with.
const (
	Canceled     = SourcePinentry | pinentry.CodeCanceled
	NotConfirmed = SourcePinentry | pinentry.CodeNotConfirmed
	Timeout      = SourcePinentry | pinentry.CodeTimeout
)

// Serve plays pinentry over r (its stdin) and w (its stdout) until BYE,
// the end of r, or ctx's end, answering each dialog with person. It
// returns nil after BYE or at the end of input.
func Serve(ctx context.Context, r io.Reader, w io.Writer, person func(Request) Reply) error {
	out := bufio.NewWriter(w)
	send := func(s []byte) error {
		if _, err := out.Write(s); err != nil {
			return err
		}
		return out.Flush()
	}
	if err := send([]byte("OK Pleased to meet you\n")); err != nil {
		return err
	}
	in := bufio.NewReader(r)
	var req Request
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		line, err := in.ReadString('\n')
		if err != nil {
			return nil
		}
		line = strings.TrimSuffix(line, "\n")
		req.Lines = append(req.Lines, line)
		cmd, arg, _ := strings.Cut(line, " ")
		text := string(pinentry.Unescape([]byte(arg)))
		reply := []byte("OK\n")
		switch cmd {
		case "OPTION":
			req.Options = append(req.Options, text)
		case "SETTITLE":
			req.Dialog.Title = text
		case "SETDESC":
			req.Dialog.Description = text
		case "SETPROMPT":
			req.Dialog.Prompt = text
		case "SETOK":
			req.Dialog.OK = text
		case "SETNOTOK":
			req.Dialog.NotOK = text
		case "SETCANCEL":
			req.Dialog.Cancel = text
		case "SETERROR":
			req.Dialog.Error = text
		case "SETTIMEOUT":
			n, err := strconv.Atoi(arg)
			if err != nil {
				reply = []byte("ERR 536870981 Invalid value\n")
				break
			}
			req.Dialog.Timeout = time.Duration(n) * time.Second
		case "RESET":
			req.Dialog = pinentry.Dialog{}
		case "BYE":
			_ = send([]byte("OK closing connection\n"))
			return nil
		case "GETPIN", "CONFIRM":
			req.Command = cmd
			rep := person(req)
			req.Lines = nil
			// pinentry clears the error text once it was shown.
			req.Dialog.Error = ""
			switch {
			case rep.Exit:
				_ = send([]byte(rep.Raw))
				return nil
			case rep.Hang:
				_, _ = io.Copy(io.Discard, in)
				return nil
			case rep.Raw != "":
				reply = []byte(rep.Raw)
			case rep.Err != 0:
				reply = fmt.Appendf(nil, "ERR %d %s <Pinentry>\n", rep.Err, errText(rep.Err))
			case cmd == "GETPIN":
				reply = append(dataLines(rep.PIN), "OK\n"...)
			}
		default:
			reply = []byte("ERR 536871187 Unknown IPC command <User defined source 1>\n")
		}
		err = send(reply)
		clear(reply)
		if err != nil {
			return err
		}
	}
}

// errText is pinentry's text for an error code.
func errText(code uint32) string {
	switch code & 0xFFFF {
	case pinentry.CodeCanceled:
		return "Operation cancelled"
	case pinentry.CodeNotConfirmed:
		return "Not confirmed"
	case pinentry.CodeTimeout:
		return "Timeout"
	}
	return "Error"
}

// dataLines renders pin as pinentry does: escaped ('%', CR, LF) D lines
// of at most 1000 bytes. The caller zeroes the result.
func dataLines(pin []byte) []byte {
	b := make([]byte, 0, 3*len(pin)+16*(len(pin)/990+1))
	const chunk = 990
	line := make([]byte, 0, chunk+3)
	defer clear(line[:cap(line)])
	flush := func() {
		if len(line) > 0 {
			b = append(b, "D "...)
			b = append(b, line...)
			b = append(b, '\n')
			line = line[:0]
		}
	}
	for _, c := range pin {
		if len(line) >= chunk {
			flush()
		}
		switch c {
		case '%', '\r', '\n':
			line = fmt.Appendf(line, "%%%02X", c)
		default:
			line = append(line, c)
		}
	}
	flush()
	return b
}

// Pipe starts a fake pinentry in a goroutine, over in-memory pipes, and
// returns a Conn to it that has read the greeting. stop ends it and waits
// for it.
func Pipe(ctx context.Context, person func(Request) Reply) (c *pinentry.Conn, stop func(), err error) {
	toFake, fromClient := io.Pipe()
	toClient, fromFake := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Serve(ctx, toFake, fromFake, person)
		_ = fromFake.Close()
		_ = toFake.Close()
	}()
	hangup := func() {
		_ = toClient.Close()
		_ = fromClient.Close()
	}
	c = pinentry.NewConn(toClient, fromClient, hangup)
	stop = func() {
		hangup()
		<-done
	}
	if err := c.Greet(ctx); err != nil {
		stop()
		return nil, nil, err
	}
	return c, stop, nil
}
