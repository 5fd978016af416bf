package pinentry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// bufSize is the line reader's buffer: room for two whole lines, so that
// one Read can bring in the end of a line and the start of the next.
const bufSize = 2 * (MaxLine + 2)

// Conn is one Assuan session with a pinentry, over the program's stdout
// (r) and stdin (w). One dialog at a time: a call waits for the one
// before it to end; ctx ending hangs up from anywhere.
type Conn struct {
	r      io.Reader
	w      io.Writer
	hangup func()
	// mu is held for each exchange (a command and its answer) and guards
	// everything below.
	mu sync.Mutex
	// buf holds what was read and not yet taken, buf[:n]. Every byte of a
	// line is zeroed once the line is handled.
	buf [bufSize]byte
	n   int
	// broken is set once the session cannot go on (a protocol error, a
	// hang-up); every later call returns it.
	broken error
}

// NewConn starts a session over r (pinentry's stdout) and w (its stdin).
// hangup ends the session from another goroutine when a call's ctx ends:
// it must make a blocked Read of r return (kill the process, close the
// pipe). nil closes r and w when they are io.Closers. Call Greet first.
func NewConn(r io.Reader, w io.Writer, hangup func()) *Conn {
	if hangup == nil {
		hangup = func() {
			if c, ok := r.(io.Closer); ok {
				_ = c.Close()
			}
			if c, ok := w.(io.Closer); ok {
				_ = c.Close()
			}
		}
	}
	return &Conn{r: r, w: w, hangup: hangup}
}

// Greet reads pinentry's greeting, the OK line it starts with.
func (c *Conn) Greet(ctx context.Context) error {
	return c.do(ctx, nil, nil)
}

// Option sends OPTION name=value (value "" sends OPTION name). It
// refuses the options that would give pinentry a terminal fallback
// (ttyname, ttytype) or its own password cache
// (allow-external-password-cache).
func (c *Conn) Option(ctx context.Context, name, value string) error {
	switch strings.ToLower(name) {
	case "ttyname", "ttytype", "allow-external-password-cache":
		return fmt.Errorf("pinentry: fillgate never sets OPTION %s", name)
	}
	if name == "" || strings.IndexFunc(name, func(r rune) bool {
		return !(r == '-' || r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) >= 0 {
		return fmt.Errorf("pinentry: option name %q is not a plain word", name)
	}
	arg := name
	if value != "" {
		arg += "=" + value
	}
	return c.command(ctx, "OPTION", arg)
}

// Reset sends RESET: pinentry 1.1 and later forget what earlier dialogs
// set (title, texts, buttons).
func (c *Conn) Reset(ctx context.Context) error {
	return c.command(ctx, "RESET", "")
}

// GetPIN shows d with an entry and returns what the person typed, or
// an error that matches ErrCanceled or ErrTimeout (or another). The
// returned slice (empty when nothing was typed, never longer than
// MaxSecret) belongs to the caller, who zeroes it; nothing else this
// package held keeps any of it.
func (c *Conn) GetPIN(ctx context.Context, d Dialog) ([]byte, error) {
	if err := c.apply(ctx, d); err != nil {
		return nil, err
	}
	pin := make([]byte, 0, MaxSecret)
	if err := c.do(ctx, []byte("GETPIN\n"), &pin); err != nil {
		clear(pin[:cap(pin)])
		return nil, err
	}
	return pin, nil
}

// Confirm shows d with its buttons and returns nil for OK, or an error
// that matches ErrCanceled (Cancel, Escape, the window closed),
// ErrNotConfirmed (d.NotOK) or ErrTimeout.
func (c *Conn) Confirm(ctx context.Context, d Dialog) error {
	if err := c.apply(ctx, d); err != nil {
		return err
	}
	return c.do(ctx, []byte("CONFIRM\n"), nil)
}

// Bye ends the session politely; pinentry exits.
func (c *Conn) Bye(ctx context.Context) error {
	return c.command(ctx, "BYE", "")
}

// apply sends d's settings.
func (c *Conn) apply(ctx context.Context, d Dialog) error {
	for _, s := range []struct{ cmd, text string }{
		{"SETTITLE", d.Title}, {"SETDESC", d.Description}, {"SETPROMPT", d.Prompt},
		{"SETOK", d.OK}, {"SETNOTOK", d.NotOK}, {"SETCANCEL", d.Cancel}, {"SETERROR", d.Error},
	} {
		if s.text == "" {
			continue
		}
		if err := c.command(ctx, s.cmd, s.text); err != nil {
			return err
		}
	}
	if d.Timeout > 0 {
		secs := (d.Timeout + time.Second - 1) / time.Second
		if err := c.command(ctx, "SETTIMEOUT", strconv.FormatInt(int64(secs), 10)); err != nil {
			return err
		}
	}
	return nil
}

// command sends cmd with its argument text, escaped, and reads the
// answer.
func (c *Conn) command(ctx context.Context, cmd, text string) error {
	line := []byte(cmd)
	if text != "" {
		line = AppendEscaped(append(line, ' '), text)
	}
	if len(line) > MaxLine {
		return fmt.Errorf("pinentry: %s text is too long for one Assuan line (%d bytes escaped, at most %d)", cmd, len(line), MaxLine)
	}
	return c.do(ctx, append(line, '\n'), nil)
}

// do writes cmd (nil: nothing) and reads lines until OK or ERR. D lines
// are unescaped onto *data, which must have spare capacity (nil: a D line
// is a protocol error); on any error *data is zeroed. When ctx ends, the
// session is hung up and do returns an error wrapping ctx.Err().
func (c *Conn) do(ctx context.Context, cmd []byte, data *[]byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exchange(ctx, cmd, data)
}

// exchange is do with c.mu held.
func (c *Conn) exchange(ctx context.Context, cmd []byte, data *[]byte) (err error) {
	defer func() {
		if err != nil && data != nil {
			clear((*data)[:cap(*data)])
			*data = (*data)[:0]
		}
	}()
	if c.broken != nil {
		return c.broken
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pinentry: %w", err)
	}
	stop := context.AfterFunc(ctx, c.hangup)
	defer func() {
		// The hang-up ran, or the session failed after ctx ended (another
		// of ctx's AfterFuncs, such as Process's kill, may end the program
		// before this one runs): whatever the read saw, ctx ended.
		if !stop() || (err != nil && ctx.Err() != nil) {
			c.fail(ErrClosed)
			err = fmt.Errorf("pinentry: %w", ctx.Err())
		}
	}()
	if cmd != nil {
		if _, err := c.w.Write(cmd); err != nil {
			return c.fail(fmt.Errorf("%w: writing to pinentry: %v", ErrClosed, err))
		}
	}
	inquired := false
	for {
		line, next, err := c.readLine()
		if err != nil {
			return err
		}
		switch {
		case isWord(line, "OK"):
			c.consume(next)
			if inquired {
				return c.fail(fmt.Errorf("%w: pinentry asked for more (INQUIRE)", ErrProtocol))
			}
			return nil
		case isWord(line, "ERR"):
			e, ok := parseErr(line)
			c.consume(next)
			switch {
			case inquired:
				return c.fail(fmt.Errorf("%w: pinentry asked for more (INQUIRE)", ErrProtocol))
			case !ok:
				return c.fail(fmt.Errorf("%w: a malformed ERR line", ErrProtocol))
			}
			return e
		case bytes.HasPrefix(line, []byte("D ")):
			if data == nil {
				c.consume(next)
				return c.fail(fmt.Errorf("%w: data where none was asked for", ErrProtocol))
			}
			v := Unescape(line[2:])
			if len(*data)+len(v) > cap(*data) {
				c.consume(next)
				return c.fail(fmt.Errorf("%w: pinentry sent more data than fillgate takes", ErrProtocol))
			}
			*data = append(*data, v...)
			c.consume(next)
		case isWord(line, "S"), len(line) > 0 && line[0] == '#':
			c.consume(next) // status and comments: nothing to act on
		case isWord(line, "INQUIRE"):
			c.consume(next)
			inquired = true
			if _, err := c.w.Write([]byte("CAN\n")); err != nil {
				return c.fail(fmt.Errorf("%w: writing to pinentry: %v", ErrClosed, err))
			}
		default:
			c.consume(next)
			return c.fail(fmt.Errorf("%w: a line that is no Assuan response", ErrProtocol))
		}
	}
}

// readLine returns the next line in buf (without LF and a CR before it)
// and the index just past its LF, reading more as needed.
func (c *Conn) readLine() (line []byte, next int, err error) {
	for {
		if i := bytes.IndexByte(c.buf[:c.n], '\n'); i >= 0 {
			line = bytes.TrimSuffix(c.buf[:i], []byte("\r"))
			if len(line) > MaxLine {
				c.consume(i + 1)
				return nil, 0, c.fail(fmt.Errorf("%w: a line longer than %d bytes", ErrProtocol, MaxLine))
			}
			return line, i + 1, nil
		}
		if c.n >= MaxLine+2 {
			return nil, 0, c.fail(fmt.Errorf("%w: a line longer than %d bytes", ErrProtocol, MaxLine))
		}
		k, err := c.r.Read(c.buf[c.n:])
		c.n += k
		if err != nil && bytes.IndexByte(c.buf[:c.n], '\n') < 0 {
			if errors.Is(err, io.EOF) {
				return nil, 0, c.fail(ErrClosed)
			}
			return nil, 0, c.fail(fmt.Errorf("%w: reading from pinentry: %v", ErrClosed, err))
		}
	}
}

// consume drops the first m bytes of buf, zeroing every byte they
// occupied or were copied from.
func (c *Conn) consume(m int) {
	clear(c.buf[:m])
	copy(c.buf[:], c.buf[m:c.n])
	clear(c.buf[c.n-m : c.n])
	c.n -= m
}

// fail marks the session broken with err (the first error wins), zeroes
// everything buffered, and returns err.
func (c *Conn) fail(err error) error {
	if c.broken == nil {
		c.broken = err
	}
	clear(c.buf[:])
	c.n = 0
	return err
}

// isWord reports whether line is word, or word and a space and more.
func isWord(line []byte, word string) bool {
	return bytes.HasPrefix(line, []byte(word)) && (len(line) == len(word) || line[len(word)] == ' ')
}

// parseErr parses "ERR code [message]".
func parseErr(line []byte) (*Error, bool) {
	rest := strings.TrimLeft(string(line[len("ERR"):]), " ")
	codeText, msg, _ := strings.Cut(rest, " ")
	code, err := strconv.ParseUint(codeText, 10, 32)
	if err != nil {
		return nil, false
	}
	return &Error{Code: uint32(code), Message: printable(string(Unescape([]byte(msg))))}, true
}

// printable keeps at most 200 printable characters of s.
func printable(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, strings.ToValidUTF8(s, ""))
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}
