package nativeprompt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fillgate/fillgate/internal/pinentry"
)

// osaBackend shows AppleScript dialogs (display dialog, with a hidden
// answer to type; choose from list to pick an account) through
// osascript, which reads its script on stdin: the page's text never
// goes in an argument. The typed value comes back on osascript's stdout,
// read into one fixed buffer; osascript itself holds it as a string
// fillgate cannot zero, until it exits a moment later.
//
// Unproven: written from Apple's documentation (display dialog's default
// answer, hidden answer, buttons, cancel button and giving up after; choose
// from list), compiled but never run by fillgate's tests.
type osaBackend struct {
	path string
	env  []string
}

// name names the program.
func (b *osaBackend) name() string { return "osascript" }

// getPIN shows display dialog with a hidden answer.
func (b *osaBackend) getPIN(ctx context.Context, d dialog) ([]byte, error) {
	out, err := b.run(ctx, dialogScript(d, true))
	if err != nil {
		return nil, err
	}
	if v, ok := bytes.CutPrefix(out, []byte("ok:")); ok {
		return v, nil
	}
	defer clear(out)
	return nil, b.outcome(out)
}

// confirm shows display dialog with d's buttons.
func (b *osaBackend) confirm(ctx context.Context, d dialog) (choice, error) {
	out, err := b.run(ctx, dialogScript(d, false))
	if err != nil {
		return 0, err
	}
	defer clear(out)
	switch string(out) {
	case "ok":
		return choiceOK, nil
	case "notok":
		return choiceNotOK, nil
	}
	return 0, b.outcome(out)
}

// pick shows choose from list.
func (b *osaBackend) pick(ctx context.Context, d dialog, accounts []string) (int, error) {
	var s strings.Builder
	s.WriteString("on run\n\tactivate\n\tset L to {")
	for i, a := range accounts {
		if i > 0 {
			s.WriteString(", ")
		}
		s.WriteString(asString(a))
	}
	fmt.Fprintf(&s, "}\n\tset p to choose from list L with title %s with prompt %s OK button name %s cancel button name %s\n",
		asString(d.title), asString(d.text), asString(d.ok), asString(d.cancel))
	s.WriteString("\tif p is false then return \"cancel\"\n\tset v to item 1 of p\n\tconsidering case\n" +
		"\t\trepeat with i from 1 to count of L\n\t\t\tif item i of L is v then return \"pick:\" & i\n" +
		"\t\tend repeat\n\tend considering\n\treturn \"cancel\"\nend run\n")
	out, err := b.run(ctx, []byte(s.String()))
	if err != nil {
		return 0, err
	}
	defer clear(out)
	if n, ok := bytes.CutPrefix(out, []byte("pick:")); ok {
		i, err := strconv.Atoi(string(n))
		if err != nil || i < 1 || i > len(accounts) {
			return 0, errors.New("osascript picked no account of the list")
		}
		return i - 1, nil
	}
	return 0, b.outcome(out)
}

// outcome maps the script's other answers.
func (b *osaBackend) outcome(out []byte) error {
	switch string(out) {
	case "cancel":
		return errCancelled
	case "timeout":
		return fmt.Errorf("the dialog gave up waiting: %w", context.DeadlineExceeded)
	}
	return errors.New("osascript answered something unexpected")
}

// dialogScript is the AppleScript of one display dialog; with entry, it
// has a hidden answer and returns "ok:" and what was typed.
func dialogScript(d dialog, entry bool) []byte {
	text := d.text
	if d.problem != "" {
		text = d.problem + "\n\n" + text
	}
	if entry && d.prompt != "" {
		text += "\n\n" + d.prompt
	}
	buttons := []string{asString(d.cancel)}
	if d.notOK != "" {
		buttons = append(buttons, asString(d.notOK))
	}
	buttons = append(buttons, asString(d.ok))
	var s strings.Builder
	s.WriteString("on run\n\tactivate\n\ttry\n")
	fmt.Fprintf(&s, "\t\tset r to display dialog %s with title %s", asString(text), asString(d.title))
	if entry {
		s.WriteString(` default answer "" with hidden answer`)
	}
	fmt.Fprintf(&s, " buttons {%s} default button %s cancel button %s with icon caution",
		strings.Join(buttons, ", "), asString(d.ok), asString(d.cancel))
	if !d.deadline.IsZero() {
		fmt.Fprintf(&s, " giving up after %d", int(max(time.Until(d.deadline), time.Second)/time.Second))
	}
	s.WriteString("\n\ton error number -128\n\t\treturn \"cancel\"\n\tend try\n")
	if !d.deadline.IsZero() {
		s.WriteString("\tif gave up of r then return \"timeout\"\n")
	}
	if d.notOK != "" {
		fmt.Fprintf(&s, "\tif button returned of r is %s then return \"notok\"\n", asString(d.notOK))
	}
	if entry {
		s.WriteString("\treturn \"ok:\" & text returned of r\n")
	} else {
		s.WriteString("\treturn \"ok\"\n")
	}
	s.WriteString("end run\n")
	return []byte(s.String())
}

// asString is s as an AppleScript string expression: printable ASCII in
// quotes (with \ and " escaped), a newline as linefeed, and every other
// character as (character id N), so that the script is plain ASCII
// whatever encoding osascript reads it in, and no text can end the
// string.
func asString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`" & linefeed & "`)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, `" & (character id %d) & "`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// maxOut bounds what osascript may print: a typed value and a few bytes.
const maxOut = pinentry.MaxSecret + 64

// run runs osascript with script on stdin, in a session of its own that
// dies with ctx, and returns what it printed without its last newline
// (the caller zeroes it).
func (b *osaBackend) run(ctx context.Context, script []byte) ([]byte, error) {
	cmd := exec.Command(b.path)
	cmd.Env = append([]string{}, b.env...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stdin = bytes.NewReader(script)
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer outR.Close()
	cmd.Stdout = outW
	err = cmd.Start()
	_ = outW.Close()
	if err != nil {
		return nil, fmt.Errorf("osascript: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer stop()
	buf := make([]byte, maxOut+1)
	n, rerr := io.ReadFull(outR, buf)
	werr := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // anything it left behind
	switch {
	case ctx.Err() != nil:
		clear(buf)
		return nil, ctx.Err()
	case rerr == nil:
		clear(buf)
		return nil, errors.New("osascript printed more than a typed value")
	case werr != nil:
		clear(buf)
		return nil, fmt.Errorf("osascript: %w", werr)
	}
	out := buf[:n]
	if len(out) > 0 && out[len(out)-1] == '\n' {
		out[len(out)-1] = 0
		out = out[:len(out)-1]
	}
	return out, nil
}
