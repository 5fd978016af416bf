package loginserver

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The /totp page: a two-factor step as services have it, checked by the
// server's own RFC 6238 implementation (HMAC-SHA1, 6 digits, 30-second
// steps), written here from the RFC and not shared with fillgate's.
const totpPage = `<form method=post action=/totp/verify>
<input type=hidden name=user autocomplete=username value=ada>
<label for=otp>Code from your authenticator app</label>
<input id=otp name=otp autocomplete=one-time-code inputmode=numeric>
<button>Verify</button></form>`

func init() { pages["/totp"] = totpPage }

// SetTOTP makes key (the raw secret of the seed) the seed that the /totp
// page checks codes against. The server keeps a copy.
func (s *Server) SetTOTP(key []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.totpKey)
	s.totpKey = append([]byte(nil), key...)
}

// TOTPAccepted counts the codes the /totp page accepted.
func (s *Server) TOTPAccepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.totpOK
}

// totpCode is the RFC 6238 code of key for the 30-second step holding t.
func totpCode(key []byte, t time.Time) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(t.Unix()/30))
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	return fmt.Sprintf("%06d", (binary.BigEndian.Uint32(sum[off:off+4])&0x7fffffff)%1_000_000)
}

// verifyTOTP checks a posted code as a service does: the current step's
// code, or the one before (a code typed just as its step ended), once.
func (s *Server) verifyTOTP(w http.ResponseWriter, r *http.Request) {
	code := s.record(r)["otp"]
	now := time.Now()
	s.mu.Lock()
	ok := false
	for _, at := range []time.Time{now, now.Add(-30 * time.Second)} {
		want := totpCode(s.totpKey, at)
		if len(s.totpKey) > 0 && subtle.ConstantTimeCompare(code, []byte(want)) == 1 && !strings.Contains(s.totpUsed, want+" ") {
			ok = true
			s.totpUsed += want + " "
			s.totpOK++
		}
	}
	s.mu.Unlock()
	if ok {
		http.Redirect(w, r, "/welcome", http.StatusSeeOther)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprint(w, strings.Replace(template, "BODY", `<p id=error>Wrong code</p>`, 1))
}
