package bridge

import (
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/websession"
)

// The native-messaging messages (PROTOCOL.md §2), one type each; the
// vectors in testdata/wire/native-messaging.json are checked against them.
// The port adds every request's "id" and reads it from every reply, so
// none of these has one, but insertMeta (insert.go), which is written
// with its value in one go.

// Host → extension requests.
type (
	// typeOnly is a message with nothing but its type: the ping, peek
	// and drivable requests, and the pong, notified and ok replies.
	typeOnly struct {
		Type string `json:"type"`
	}
	inspectRequest struct {
		Type  string `json:"type"`
		Tab   *int64 `json:"tab,omitempty"`
		Frame *int64 `json:"frame,omitempty"`
	}
	openPromptRequest struct {
		Type string `json:"type"`
		URL  string `json:"url"`
	}
	closePromptRequest struct {
		Type   string `json:"type"`
		Window int64  `json:"window"`
	}
	notifyRequest struct {
		Type    string `json:"type"`
		Title   string `json:"title"`
		Message string `json:"message"`
	}
	tabInfoRequest struct {
		Type string `json:"type"`
		Tab  int64  `json:"tab"`
	}
	cookiesRequest struct {
		Type string `json:"type"`
		Tab  int64  `json:"tab"`
		Site string `json:"site"`
	}
	handoverRequest struct {
		Type string `json:"type"`
		Tab  int64  `json:"tab"`
		websession.Session
	}
	passkeyArmRequest struct {
		Type     string `json:"type"`
		Tab      int64  `json:"tab"`
		Frame    int64  `json:"frame"`
		Origin   string `json:"origin"`
		Service  string `json:"service"`
		RPID     string `json:"rp_id,omitempty"`
		Ceremony string `json:"ceremony"`
		Request  string `json:"request"`
		Deadline string `json:"deadline"`
	}
	// passkeyVerdict is passkey_refuse, passkey_pass and passkey_disarm.
	passkeyVerdict struct {
		Type    string `json:"type"`
		Request string `json:"request"`
	}
	passkeyAnswerRequest struct {
		Type     string          `json:"type"`
		Request  string          `json:"request"`
		Response passkeyResponse `json:"response"`
	}
	// passkeyResponse is what the page gets, each byte string base64url.
	passkeyResponse struct {
		ID                string `json:"id"`
		ClientDataJSON    string `json:"client_data_json"`
		AuthenticatorData string `json:"authenticator_data"`
		Signature         string `json:"signature,omitempty"`
		UserHandle        string `json:"user_handle,omitempty"`
		AttestationObject string `json:"attestation_object,omitempty"`
		PublicKey         string `json:"public_key,omitempty"`
	}
)

// Extension → host replies (insertedReply and driveReply are in insert.go
// and drivable.go).
type (
	inspectedReply struct {
		Type string `json:"type"`
		fill.Inspection
	}
	peekedReply struct {
		Type string `json:"type"`
		Focused
	}
	promptOpenedReply struct {
		Type   string `json:"type"`
		Window *int64 `json:"window"`
	}
	notInsertedReply struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	}
	tabInfoReply struct {
		Type string `json:"type"`
		websession.Tab
	}
	cookiesReply struct {
		Type    string              `json:"type"`
		Cookies []websession.Cookie `json:"cookies"`
	}
	handedOverReply struct {
		Type string `json:"type"`
		websession.Shown
	}
	armedReply struct {
		Type  string `json:"type"`
		Tab   int64  `json:"tab"`
		Frame int64  `json:"frame"`
	}
)

// Host → extension notices.
type (
	hostNotice struct {
		Type    string `json:"type"`
		Version string `json:"version"`
		PID     int    `json:"pid"`
		Paused  bool   `json:"paused"`
	}
	outcomeNotice struct {
		Type    string      `json:"type"`
		Time    string      `json:"time"`
		Service string      `json:"service"`
		Origin  string      `json:"origin,omitempty"`
		Status  fill.Status `json:"status"`
	}
	leasesNotice struct {
		Type   string        `json:"type"`
		Leases []leaseNotice `json:"leases"`
	}
)

// Extension → host notices (calledNotice is in passkey.go).
type (
	helloNotice struct {
		Type      string `json:"type"`
		Version   string `json:"version"`
		UserAgent string `json:"user_agent"`
		Paused    bool   `json:"paused"`
		Instance  string `json:"instance"`
	}
	pausedNotice struct {
		Type   string `json:"type"`
		Paused bool   `json:"paused"`
	}
	promptClosedNotice struct {
		Type   string `json:"type"`
		Window int64  `json:"window"`
	}
	endLeaseNotice struct {
		Type  string `json:"type"`
		Lease string `json:"lease"`
	}
	abortedNotice struct {
		Type    string `json:"type"`
		Request string `json:"request"`
		Reason  string `json:"reason"`
	}
)
