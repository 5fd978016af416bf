package nativeprompt

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/fillgate/fillgate/internal/pinentry"
)

// Windows constants (wincred.h, winuser.h, winerror.h).
const (
	credUIWinGeneric = 0x1 // CREDUIWIN_GENERIC: a user name and a password, in plain text to the caller

	errorSuccess            = 0
	errorCancelled          = 1223 // ERROR_CANCELLED
	errorInsufficientBuffer = 122  // ERROR_INSUFFICIENT_BUFFER

	mbOKCancel      = 0x00000001
	mbYesNoCancel   = 0x00000003
	mbIconQuestion  = 0x00000020
	mbSetForeground = 0x00010000
	mbTopmost       = 0x00040000

	idOK     = 1
	idCancel = 2
	idYes    = 6
	idNo     = 7

	wmClose = 0x0010

	// maxCaption bounds a dialog's caption in characters (CredUI takes
	// at most 128).
	maxCaption = 120
)

// credUIInfo is CREDUI_INFOW.
type credUIInfo struct {
	size    uint32
	parent  windows.HWND
	message *uint16
	caption *uint16
	banner  windows.Handle
}

// winBackend asks with the system's own dialogs: the credential dialog
// (CredUIPromptForWindowsCredentialsW, generic credentials) to type a
// value, and message boxes (MessageBoxW) to choose. A message box has
// fixed buttons, so its text says what each one does ("Yes: Fill saved
// password").
//
// Each dialog runs on an OS thread of its own; when ctx ends, the
// dialog's window on that thread is sent WM_CLOSE and Ask returns at
// once. A credential dialog that Windows draws in another process (its
// credential UI broker) cannot be closed that way and stays until the
// person answers it; its answer is then zeroed and dropped.
//
// Unproven: written from Microsoft's documentation, compiled (GOOS=windows)
// but never run by fillgate's tests.
type winBackend struct {
	prompt, unpack, pack, postMessage *windows.LazyProc
}

// newWinBackend loads nothing yet; load checks the DLLs are there.
func newWinBackend() *winBackend {
	credui := windows.NewLazySystemDLL("credui.dll")
	user32 := windows.NewLazySystemDLL("user32.dll")
	return &winBackend{
		prompt:      credui.NewProc("CredUIPromptForWindowsCredentialsW"),
		unpack:      credui.NewProc("CredUnPackAuthenticationBufferW"),
		pack:        credui.NewProc("CredPackAuthenticationBufferW"),
		postMessage: user32.NewProc("PostMessageW"),
	}
}

// load finds every function the backend calls.
func (b *winBackend) load() error {
	for _, p := range []*windows.LazyProc{b.prompt, b.unpack, b.pack, b.postMessage} {
		if err := p.Find(); err != nil {
			return err
		}
	}
	return nil
}

// name names the dialog.
func (b *winBackend) name() string { return "the Windows credential dialog" }

// result is what a dialog's thread hands back.
type result struct {
	value []byte
	code  int
	err   error
}

// getPIN shows the credential dialog; the user name field holds the
// account the page shows (or the service), the password field is what
// the person types.
func (b *winBackend) getPIN(ctx context.Context, d dialog) ([]byte, error) {
	text := d.text
	if d.problem != "" {
		text = d.problem + "\r\n\r\n" + text
	}
	r, err := b.modal(ctx, func() result { return b.credentials(text, d.title, d.user) })
	if err != nil {
		return nil, err
	}
	switch {
	case r.err != nil:
		return nil, r.err
	case r.code == errorCancelled:
		return nil, errCancelled
	case r.code != errorSuccess:
		return nil, fmt.Errorf("CredUIPromptForWindowsCredentialsW failed: %w", windows.Errno(r.code))
	}
	return r.value, nil
}

// credentials runs the credential dialog on the calling thread.
func (b *winBackend) credentials(text, title, user string) result {
	msg, err := windows.UTF16PtrFromString(crlf(text))
	if err != nil {
		return result{err: err}
	}
	caption, err := windows.UTF16PtrFromString(truncRunes(title, maxCaption))
	if err != nil {
		return result{err: err}
	}
	in, err := b.packUser(user)
	if err != nil {
		return result{err: err}
	}
	info := credUIInfo{message: msg, caption: caption}
	info.size = uint32(unsafe.Sizeof(info))
	var (
		authPackage uint32
		out         unsafe.Pointer
		outSize     uint32
	)
	var inPtr unsafe.Pointer
	if len(in) > 0 {
		inPtr = unsafe.Pointer(&in[0])
	}
	rc, _, _ := b.prompt.Call(uintptr(unsafe.Pointer(&info)), 0, uintptr(unsafe.Pointer(&authPackage)),
		uintptr(inPtr), uintptr(len(in)), uintptr(unsafe.Pointer(&out)), uintptr(unsafe.Pointer(&outSize)),
		0, credUIWinGeneric)
	runtime.KeepAlive(in)
	if rc != errorSuccess || out == nil {
		return result{code: int(rc)}
	}
	// The packed credentials hold the password: zero them before they
	// go back to the system.
	packed := unsafe.Slice((*byte)(out), outSize)
	defer windows.CoTaskMemFree(out)
	defer clear(packed)
	v, err := b.unpackPassword(out, outSize)
	if err != nil {
		return result{err: err}
	}
	return result{value: v}
}

// packUser packs a user name and an empty password as the dialog's
// initial credentials.
func (b *winBackend) packUser(user string) ([]byte, error) {
	u, err := windows.UTF16PtrFromString(truncRunes(user, 256))
	if err != nil {
		return nil, err
	}
	empty := []uint16{0}
	var size uint32
	_, _, _ = b.pack.Call(0, uintptr(unsafe.Pointer(u)), uintptr(unsafe.Pointer(&empty[0])), 0, uintptr(unsafe.Pointer(&size)))
	if size == 0 {
		return nil, nil
	}
	buf := make([]byte, size)
	ok, _, e := b.pack.Call(0, uintptr(unsafe.Pointer(u)), uintptr(unsafe.Pointer(&empty[0])),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&size)))
	if ok == 0 {
		return nil, fmt.Errorf("CredPackAuthenticationBufferW: %w", e)
	}
	return buf[:size], nil
}

// unpackPassword reads the password out of the dialog's packed
// credentials into a UTF-8 buffer the caller owns, zeroing every buffer
// it went through.
func (b *winBackend) unpackPassword(packed unsafe.Pointer, size uint32) ([]byte, error) {
	var (
		user   [514]uint16
		domain [338]uint16
		pass   [pinentry.MaxSecret + 1]uint16
	)
	defer clear(user[:])
	defer clear(domain[:])
	defer clear(pass[:])
	nUser, nDomain, nPass := uint32(len(user)), uint32(len(domain)), uint32(len(pass))
	ok, _, e := b.unpack.Call(0, uintptr(packed), uintptr(size),
		uintptr(unsafe.Pointer(&user[0])), uintptr(unsafe.Pointer(&nUser)),
		uintptr(unsafe.Pointer(&domain[0])), uintptr(unsafe.Pointer(&nDomain)),
		uintptr(unsafe.Pointer(&pass[0])), uintptr(unsafe.Pointer(&nPass)))
	if ok == 0 {
		if errors.Is(e, windows.Errno(errorInsufficientBuffer)) {
			return nil, errors.New("the typed value is longer than fillgate takes")
		}
		return nil, fmt.Errorf("CredUnPackAuthenticationBufferW: %w", e)
	}
	n := 0
	for n < int(min(nPass, uint32(len(pass)))) && pass[n] != 0 {
		n++
	}
	v := make([]byte, 0, 3*n) // every UTF-16 unit is at most 3 UTF-8 bytes, a pair 4
	for i := 0; i < n; i++ {
		r := rune(pass[i])
		if utf16.IsSurrogate(r) && i+1 < n {
			r = utf16.DecodeRune(r, rune(pass[i+1]))
			i++
		}
		v = utf8.AppendRune(v, r)
	}
	return v, nil
}

// confirm shows a message box whose text says what each button does.
func (b *winBackend) confirm(ctx context.Context, d dialog) (choice, error) {
	style := uint32(mbIconQuestion | mbTopmost | mbSetForeground)
	var legend string
	if d.notOK != "" {
		style |= mbYesNoCancel
		legend = "Yes: " + d.ok + "\r\nNo: " + d.notOK + "\r\nCancel: " + d.cancel
	} else {
		style |= mbOKCancel
		legend = "OK: " + d.ok + "\r\nCancel: " + d.cancel
	}
	r, err := b.modal(ctx, func() result {
		text, err := windows.UTF16PtrFromString(crlf(d.text) + "\r\n\r\n" + legend)
		if err != nil {
			return result{err: err}
		}
		caption, err := windows.UTF16PtrFromString(truncRunes(d.title, maxCaption))
		if err != nil {
			return result{err: err}
		}
		code, err := windows.MessageBox(0, text, caption, style)
		if code == 0 {
			return result{err: fmt.Errorf("MessageBoxW: %w", err)}
		}
		return result{code: int(code)}
	})
	switch {
	case err != nil:
		return 0, err
	case r.err != nil:
		return 0, r.err
	}
	switch r.code {
	case idOK, idYes:
		return choiceOK, nil
	case idNo:
		return choiceNotOK, nil
	case idCancel:
		return 0, errCancelled
	}
	return 0, fmt.Errorf("MessageBoxW returned %d", r.code)
}

// modal runs show on an OS thread of its own and waits for it or for
// ctx. When ctx ends first, it asks the thread's active window to close
// and returns ctx's error; what show returns later is zeroed and dropped.
func (b *winBackend) modal(ctx context.Context, show func() result) (result, error) {
	done := make(chan result, 1)
	tid := make(chan uint32, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- windows.GetCurrentThreadId()
		done <- show()
	}()
	thread := <-tid
	select {
	case r := <-done:
		return r, nil
	case <-ctx.Done():
		b.closeThreadWindow(thread)
		go func() {
			r := <-done
			clear(r.value)
		}()
		return result{}, ctx.Err()
	}
}

// closeThreadWindow asks the active window of thread to close (a message
// box takes that as Cancel).
func (b *winBackend) closeThreadWindow(thread uint32) {
	var info windows.GUIThreadInfo
	info.Size = uint32(unsafe.Sizeof(info))
	if err := windows.GetGUIThreadInfo(thread, &info); err != nil || info.Active == 0 {
		return
	}
	_, _, _ = b.postMessage.Call(uintptr(info.Active), wmClose, 0, 0)
}

// crlf turns the dialog's line ends into Windows ones.
func crlf(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && (i == 0 || s[i-1] != '\r') {
			b = append(b, '\r')
		}
		b = append(b, s[i])
	}
	return string(b)
}

// truncRunes cuts s to at most n characters, with "…" when cut.
func truncRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
