package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fillgate/fillgate/internal/fill"
)

// The caps of request_secret's arguments. An argument over its cap is
// refused without being echoed: the detail quotes at most an escaped
// prefix of quotePrefix characters.
const (
	// maxService is a DNS name (253) with a port.
	maxService = 260
	// maxTabID and maxFrameID are the largest integers a JavaScript
	// number (the extension's ids) holds exactly.
	maxTabID    = 1<<53 - 1
	maxFrameID  = 1<<53 - 1
	quotePrefix = 24
)

// cdpTargetID is a DevTools target id: 32 hex digits.
var cdpTargetID = regexp.MustCompile(`^[0-9A-Fa-f]{32}$`)

// tabPattern is the schema's pattern for tab: an extension tab id or a
// DevTools target id.
const tabPattern = `^([1-9][0-9]{0,15}|[0-9A-Fa-f]{32})$`

// argNames are request_secret's arguments, in the order the schema lists
// them.
var argNames = []string{"service", "field", "then", "tab", "frame", "no_wait"}

// secretArgs are request_secret's checked arguments.
type secretArgs struct {
	Service string
	Field   string // a wire kind: fill.FieldPassword or fill.FieldOTP
	Then    string // fill.ThenSubmit or fill.ThenNone
	Tab     *int64 // the extension's tab id
	CDPTab  string // or a DevTools target id
	Frame   *int64
	NoWait  bool // with field passkey: answer "armed" once the tab is armed
}

// inputSchema is request_secret's input schema (PROTOCOL.md, section
// 4, documents it).
func inputSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"service": map[string]any{
				"type": "string", "minLength": 1, "maxLength": maxService,
				"description": "the site the secret is for, e.g. github.com (optionally with :port); the page's host must be it or a subdomain of it",
			},
			"field": map[string]any{
				"type": "string", "enum": []string{"password", "otp", "one-time-code", "passkey"}, "default": "password",
				"description": "the kind of field: password (default), or otp (one-time-code) for a one-time code; or passkey: arm the tab for the page's one passkey sign-in, answered with the agents' own passkey (click the site's passkey button while the call waits; it needs the fillgate extension)",
			},
			"then": map[string]any{
				"type": "string", "enum": []string{fill.ThenSubmit, fill.ThenNone}, "default": fill.ThenSubmit,
				"description": "after the insert: submit (default) submits the form and leaves no value in the page; none leaves a value the human types in the field, unsubmitted, where the page and any tool reading it can see it (a saved value is always submitted)",
			},
			"tab": map[string]any{
				"type": "string", "pattern": tabPattern,
				"description": "optional: pin the browser tab, the extension's numeric tab id or a DevTools target id (32 hex digits); the tab must be the active tab of its window",
			},
			"frame": map[string]any{
				"type": "integer", "minimum": 0, "maximum": maxFrameID,
				"description": "optional: pin the frame (the extension's frame id; 0 is the top frame)",
			},
			"no_wait": map[string]any{
				"type": "boolean", "default": false,
				"description": "with field passkey only: return status armed as soon as the tab is armed (after the human's approval, if the policy asks for one), instead of waiting for the page's call; then click the site's passkey button within the time the detail names: fillgate answers that one call",
			},
		},
		"required":             []string{"service"},
		"additionalProperties": false,
	}
}

// outputSchema is the result's schema: fill.Result.
func outputSchema() map[string]any {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	status := str("ok: the value is in the field (and, with then=submit, the form was submitted), or for a passkey the page's call was answered; armed (no_wait only): the tab waits for the page's passkey call, click the site's passkey button now; cancelled, refused, no_response, failed: it is not")
	status["enum"] = []string{"ok", "armed", "cancelled", "refused", "no_response", "failed"}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"status":      status,
			"service":     str("the service asked for, normalised; empty when the service argument was unusable"),
			"origin":      str("the origin of the focused frame the value was (or would have been) typed into"),
			"field":       str("password, one-time-code or passkey"),
			"via":         str("extension or cdp"),
			"detail":      str("what happened, in words, and how to fix a failure"),
			"fallback":    str("after no_response: what to do instead of asking again"),
			"submitted":   map[string]any{"type": "boolean", "description": "on a result where the value was inserted: whether fillgate submitted the form"},
			"navigated":   map[string]any{"type": "boolean", "description": "on a result where the value was inserted: whether the page navigated away after the submit"},
			"handed_over": map[string]any{"type": "boolean", "description": "on a login in fillgate's clean room (a program drives the browser): the session was handed to the tab, which was sent to where the login ended"},
			"tab_origin":  str("with handed_over: the origin the tab shows now"),
		},
		"required": []string{"status", "service"},
	}
}

// parseArgs checks request_secret's raw arguments. On a bad argument it
// returns ok false and the refusal to send; the refusal never echoes more
// of an argument than a short escaped prefix.
func parseArgs(raw json.RawMessage) (in secretArgs, refusal fill.Result, ok bool) {
	refuse := func(format string, a ...any) (secretArgs, fill.Result, bool) {
		return secretArgs{}, fill.Result{Status: fill.StatusRefused, Detail: "bad arguments: " + fmt.Sprintf(format, a...)}, false
	}
	args := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if t[0] != '{' {
			return refuse("the arguments must be an object such as {\"service\": \"github.com\"}")
		}
		if err := json.Unmarshal(t, &args); err != nil {
			return refuse("the arguments are not a JSON object")
		}
	}
	for k := range args {
		if !slices.Contains(argNames, k) {
			return refuse("unknown argument %s: the arguments are %s", quote(k), strings.Join(argNames, ", "))
		}
	}
	// null stands for "not given".
	for k, v := range args {
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			delete(args, k)
		}
	}

	svc, err := stringArg(args, "service", maxService)
	switch {
	case err != nil:
		return refuse("%v", err)
	case strings.TrimSpace(svc) == "":
		return refuse("service is required: the site the secret is for, e.g. github.com")
	}
	in.Service = svc

	field, err := stringArg(args, "field", 16)
	if err != nil {
		return refuse("%v", err)
	}
	if in.Field, err = fill.NormalizeField(field); err != nil {
		return refuse("field %s is not one of password, otp, one-time-code, passkey", quote(field))
	}

	then, err := stringArg(args, "then", 16)
	if err != nil {
		return refuse("%v", err)
	}
	if in.Then, err = fill.NormalizeThen(then); err != nil {
		return refuse("then %s is not one of submit, none", quote(then))
	}

	if err := tabArg(args, &in); err != nil {
		return refuse("%v", err)
	}
	if v, ok := args["frame"]; ok {
		n, err := intArg(v, "frame", 0, maxFrameID)
		if err != nil {
			return refuse("%v", err)
		}
		in.Frame = &n
	}
	if v, ok := args["no_wait"]; ok {
		if err := json.Unmarshal(v, &in.NoWait); err != nil {
			return refuse("no_wait must be true or false; got %s", jsonKind(v))
		}
		if in.NoWait && in.Field != fill.FieldPasskey {
			return refuse("no_wait is for field passkey only")
		}
	}
	return in, fill.Result{}, true
}

// stringArg is the string argument name ("" when absent), at most max
// bytes of valid UTF-8.
func stringArg(args map[string]json.RawMessage, name string, max int) (string, error) {
	v, ok := args[name]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("%s must be a string; got %s", name, jsonKind(v))
	}
	if len(s) > max {
		return "", fmt.Errorf("%s is too long (%d bytes; at most %d): it starts %s", name, len(s), max, quote(s))
	}
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%s is not valid UTF-8", name)
	}
	return s, nil
}

// tabArg reads tab: a string holding an extension tab id (digits) or a
// DevTools target id (32 hex digits); a JSON integer is taken as an
// extension tab id.
func tabArg(args map[string]json.RawMessage, in *secretArgs) error {
	v, ok := args["tab"]
	if !ok {
		return nil
	}
	if t := bytes.TrimSpace(v); len(t) > 0 && (t[0] == '-' || (t[0] >= '0' && t[0] <= '9')) {
		n, err := intArg(v, "tab", 1, maxTabID)
		if err != nil {
			return err
		}
		in.Tab = &n
		return nil
	}
	s, err := stringArg(args, "tab", 64)
	if err != nil {
		return err
	}
	if cdpTargetID.MatchString(s) {
		in.CDPTab = s
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > maxTabID || strconv.FormatInt(n, 10) != s {
		return fmt.Errorf("tab %s is neither an extension tab id (a positive number) nor a DevTools target id (32 hex digits)", quote(s))
	}
	in.Tab = &n
	return nil
}

// intArg reads v as a whole number in [lo, hi].
func intArg(v json.RawMessage, name string, lo, hi int64) (int64, error) {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return 0, fmt.Errorf("%s must be a whole number; got %s", name, jsonKind(v))
	}
	if f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, fmt.Errorf("%s must be a whole number from %d to %d", name, lo, hi)
	}
	return int64(f), nil
}

// jsonKind names the JSON type of v, for a message that must not quote it.
func jsonKind(v json.RawMessage) string {
	t := bytes.TrimSpace(v)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// quote is an escaped prefix of s, for a message: at most quotePrefix
// characters, non-ASCII and control characters escaped.
func quote(s string) string {
	cut := s
	if utf8.RuneCountInString(s) > quotePrefix {
		runes := []rune(s)
		cut = string(runes[:quotePrefix])
	}
	q := strconv.QuoteToASCII(cut)
	if cut != s {
		q += "…"
	}
	return q
}
