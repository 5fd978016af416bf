package agentsock

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzReadRequest feeds arbitrary bytes to the agent socket's request
// decoder. It must never panic; an accepted request has a known op, and a
// fill converts without error; a refusal is bad_request (or silence for an
// empty connection) and its detail is one of the decoder's own sentences,
// never an echo of the input.
func FuzzReadRequest(f *testing.F) {
	for _, s := range []string{
		`{"op":"fill","service":"github.com","field":"password"}` + "\n",
		`{"op":"fill","service":"a.test","field":"otp","then":"none","timeout_ms":30000,"tab":12,"frame":0,"client":"fillgate fill"}` + "\n",
		`{"op":"status","all":true}` + "\n",
		`{"op":"peek"}` + "\n",
		`{"op":"fill","service":"x","agent":{"name":"claude","pid":1}}` + "\n",
		`{"op":"fill","field":"password"}` + "\n",
		`{"op":"fill","service":"a","timeout_ms":-1}` + "\n",
		`{"op":"nope"}` + "\n",
		`{"op":"fill"` + "\n",
		`{"op":"status"}`,
		"\n",
		"",
		strings.Repeat("x", MaxRequest+10),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, msg := readRequest(bufio.NewReader(bytes.NewReader(data)), time.Second)
		if msg == nil {
			switch req.Op {
			case OpStatus, OpPeek:
			case OpFill:
				if _, err := req.fillRequest(); err != nil {
					t.Fatalf("an accepted fill does not convert: %v", err)
				}
			default:
				t.Fatalf("accepted an unknown op %q", req.Op)
			}
			return
		}
		if msg.Type == "" {
			return // an empty connection: closed without an answer
		}
		if msg.Type != TypeError || msg.Error != CodeBadRequest {
			t.Fatalf("refused with %+v", msg)
		}
		if !slices.Contains(refusals, msg.Detail) {
			t.Fatalf("a refusal the decoder does not write itself: %q", msg.Detail)
		}
	})
}

// refusals are every detail readRequest may answer with.
var refusals = []string{
	fmt.Sprintf("request over %d bytes", MaxRequest),
	fmt.Sprintf("no complete request within %v of connecting", time.Second),
	"the request must end with a newline",
	"the request is not one JSON object",
	"unknown op: use fill, status or peek",
	"service is missing",
	"unknown field: use password, one-time-code or passkey",
	"unknown then: use submit or none",
	"timeout_ms must not be negative",
}
