package fakeext

import (
	"encoding/json"
	"reflect"
	"slices"

	"github.com/fillgate/fillgate/internal/fill"
)

// request is every field of every host → extension message but the value,
// which is read separately without passing through a Go string.
type request struct {
	ID      *int64         `json:"id"`
	Type    string         `json:"type"`
	Tab     *int64         `json:"tab"`
	Frame   *int64         `json:"frame"`
	URL     string         `json:"url"`
	Window  int64          `json:"window"`
	Token   *string        `json:"token"`
	Origins []string       `json:"origins"`
	Kind    string         `json:"kind"`
	Form    *fill.FormInfo `json:"form"`
	Then    string         `json:"then"`
	Title   string         `json:"title"`
	Message string         `json:"message"`
}

// handle answers one frame from the host. It zeroes the frame afterwards.
func (e *Ext) handle(body []byte) {
	defer clear(body)
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		e.record(Message{Type: "(malformed)", Raw: json.RawMessage(`"[malformed]"`)})
		return
	}
	if req.ID == nil && req.Type == "leases" {
		e.gotLeases(body) // before it is recorded: a Wait for it sees the list
	}
	e.record(Message{ID: req.ID, Type: req.Type, Raw: redact(body)})
	if req.ID == nil {
		return // a notice from the host: host, outcome, leases
	}
	reply := map[string]any{"id": *req.ID}

	e.mu.Lock()
	hangUp, ignore := e.disconnectOn[req.Type], e.ignore[req.Type]
	failure, fail := e.fail[req.Type]
	e.mu.Unlock()
	switch {
	case hangUp:
		e.Disconnect()
		return
	case ignore:
		return
	case fail:
		reply["type"], reply["error"], reply["detail"] = "error", failure[0], failure[1]
		e.send(reply)
		return
	}

	switch req.Type {
	case "ping":
		reply["type"] = "pong"
	case "inspect":
		e.inspect(req, reply)
	case "peek":
		e.peek(reply)
	case "drivable":
		e.mu.Lock()
		reply["type"], reply["attached"], reply["webdriver"], reply["debugger_api"], reply["others"] = "drivable", e.page.Attached, e.page.Webdriver, true, e.page.Others
		e.mu.Unlock()
	case "open_prompt":
		id := e.openPrompt(reply)
		if hook := e.opt.OnOpenPrompt; hook != nil {
			defer func() { go hook(req.URL, id) }() // after the reply is queued
		}
	case "close_prompt":
		e.mu.Lock()
		open := e.windows[req.Window]
		delete(e.windows, req.Window)
		e.mu.Unlock()
		if open {
			reply["type"] = "ok"
		} else {
			reply["type"], reply["error"], reply["detail"] = "error", "bad_request", "no such prompt window"
		}
	case "insert":
		e.insert(req, body, reply)
	case "notify":
		e.mu.Lock()
		failNotices := e.failNotices
		if !failNotices {
			e.notices = append(e.notices, fill.Notice{Title: req.Title, Message: req.Message})
		}
		e.mu.Unlock()
		if failNotices {
			reply["type"], reply["error"], reply["detail"] = "error", "internal", "notifications are off"
		} else {
			reply["type"] = "notified"
		}
	default:
		reply["type"], reply["error"], reply["detail"] = "error", "bad_request", "unknown request type"
	}
	e.send(reply)
}

func (e *Ext) inspect(req request, reply map[string]any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.page
	switch {
	case p.NoTab || (req.Tab != nil && *req.Tab != p.Tab):
		reply["type"], reply["error"], reply["detail"] = "error", "no_tab", "no such tab"
		return
	case req.Tab != nil && p.Background:
		reply["type"], reply["error"], reply["detail"] = "error", "not_active", "the pinned tab is not the active tab of its window"
		return
	case p.NoAccess:
		reply["type"], reply["error"], reply["detail"] = "error", "no_access", "the page cannot be scripted"
		return
	}
	frame, field := p.Frame, focusedField(p)
	if req.Frame != nil && *req.Frame != p.Frame {
		frame, field = *req.Frame, fill.FieldInfo{Kind: fill.FieldNone} // nothing focused there
	}
	token := newToken()
	if field.Kind != fill.FieldNone {
		// The probe remembers only a focused field, in its own frame.
		e.tokens[token] = remembered{tab: p.Tab, frame: frame, element: p.Element, kind: field.Kind, split: field.Split}
	}
	reply["type"] = "inspected"
	reply["tab"], reply["frame"], reply["token"] = p.Tab, frame, token
	reply["origins"], reply["field"], reply["paused"] = slices.Clone(p.Origins), field, e.paused
	if p.Form != nil && frame == p.Frame {
		reply["form"] = cloneForm(p.Form)
	}
	if p.Account != "" && frame == p.Frame {
		reply["account"] = p.Account
	}
}

// focusedField is the focused field as inspect and peek report it: a
// frame element's problem on the way down comes first.
func focusedField(p Page) fill.FieldInfo {
	f := p.Field
	if p.FrameProblem != "" {
		f.Problem = p.FrameProblem
	}
	return f
}

// peek reports the page's focused origin and field, as the real
// extension's peek does, remembering nothing. A page it cannot script
// shows no focus chain: the tab's origin and no field.
func (e *Ext) peek(reply map[string]any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.page
	if p.NoTab {
		reply["type"], reply["error"], reply["detail"] = "error", "no_tab", "no active tab"
		return
	}
	origin, field := "", focusedField(p)
	if len(p.Origins) > 0 {
		origin = p.Origins[0]
	}
	if p.NoAccess {
		origin, field = "", fill.FieldInfo{Kind: fill.FieldNone}
		if len(p.Origins) > 0 {
			origin = p.Origins[len(p.Origins)-1]
		}
	}
	reply["type"], reply["origin"], reply["field"] = "peeked", origin, field
}

func (e *Ext) openPrompt(reply map[string]any) int64 {
	e.mu.Lock()
	e.nextWindow++
	id := e.nextWindow
	e.windows[id] = true
	e.mu.Unlock()
	reply["type"], reply["window"] = "prompt_opened", id
	return id
}

// insert re-checks the page in the order the real extension does and
// keeps the value only if every check holds; then the page answers the
// submit (Page.After). The order, and the check that reports each fault:
//
//  1. the worker (extension/sw.js): the request names a tab, a frame, a
//     token and origins (else a bad_request error); fills are not paused
//     (paused); the tab still exists (tab_gone); its top origin is the
//     inspected one (origin_changed);
//  2. the worker again, only for a field in a frame (frame ≠ 0 or more
//     than one origin): the focus chain can be followed (origin_changed),
//     still ends in the inspected frame (frame_changed), through the same
//     origins (origin_changed), past frame elements a person can see
//     (not_usable). For a field in the top frame no chain is walked: the
//     in-page function checks the focus itself;
//  3. the in-page function (extension/inpage.js), in that frame: the
//     element remembered under the token is still there (element_gone; a
//     token is used up by one insert, and one from another tab or frame
//     is unknown there); it still has the focus (focus_moved; focus gone
//     into a child frame counts); same kind and box count
//     (kind_changed); usable (not_usable); its form sends where it did
//     (form_changed); a value came and the page takes it
//     (insert_failed).
//
// (The in-page function also checks its frame's origin first; in the fake
// the checks before it already hold it: the top frame's origin is the
// tab's, a child frame's the chain's.)
func (e *Ext) insert(req request, body []byte, reply map[string]any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if req.Tab == nil || req.Frame == nil || req.Token == nil || len(req.Origins) == 0 {
		reply["type"], reply["error"], reply["detail"] = "error", "bad_request", "insert needs tab, frame, token and origins"
		return
	}
	p := e.page
	reason := e.recheck(req)
	if reason == "" && p.NoAccess && *req.Frame == 0 && len(req.Origins) == 1 {
		reply["type"], reply["error"], reply["detail"] = "error", "internal", "cannot access the contents of the page"
		return
	}
	value, ok := []byte(nil), false
	if reason == "" {
		if value, ok = extractValue(body); !ok || len(value) == 0 || p.RejectInsert {
			clear(value)
			reason = "insert_failed"
		}
	}
	if reason != "" {
		reply["type"], reply["reason"] = "not_inserted", reason
		return
	}
	clear(e.value)
	e.value = value
	e.inserts++
	then := fill.ThenSubmit
	if req.Then == fill.ThenNone {
		then = fill.ThenNone
	}
	after := p.After
	after.Short = after.Short || p.WrongLength
	v, holds, gone := after.After(then)
	e.holds = holds
	if gone {
		// The document went away mid-call: the worker answers so.
		reply["type"], reply["matched"], reply["navigated"], reply["unconfirmed"] = "inserted", true, true, true
		return
	}
	if v.Submitted {
		e.submits++
	}
	reply["type"], reply["matched"] = "inserted", v.Matched
	for k, b := range map[string]bool{"submitted": v.Submitted, "navigated": v.Navigated, "cleared": v.Cleared, "remains": v.Remains} {
		if b {
			reply[k] = true
		}
	}
	if v.Stopped != "" {
		reply["stopped"] = v.Stopped
	}
	if v.StoppedBy != "" {
		reply["stopped_by"] = v.StoppedBy
	}
}

// recheck runs the checks of insert's steps 1 to 3 but the value's, and
// returns the reason of the first that fails ("" when all hold). The
// caller holds e.mu.
func (e *Ext) recheck(req request) string {
	p, tab, frame := e.page, *req.Tab, *req.Frame
	switch {
	case e.paused:
		return "paused"
	case p.NoTab || tab != p.Tab:
		return "tab_gone"
	case len(p.Origins) == 0 || req.Origins[len(req.Origins)-1] != p.Origins[len(p.Origins)-1]:
		return "origin_changed"
	}
	if frame != 0 || len(req.Origins) != 1 {
		switch {
		case p.NoAccess:
			return "origin_changed"
		case p.Frame != frame:
			return "frame_changed"
		case !slices.Equal(req.Origins, p.Origins):
			return "origin_changed"
		case p.FrameProblem != "":
			return "not_usable"
		}
	} else if p.NoAccess {
		return "" // the insert cannot run in the page: insert answers an error
	}
	mem, known := e.tokens[*req.Token]
	known = known && mem.tab == tab && mem.frame == frame
	if known {
		delete(e.tokens, *req.Token) // used up, whatever the answer
	}
	switch {
	case !known || p.Detached:
		return "element_gone"
	case p.Frame != frame || len(p.Origins) != len(req.Origins) || p.Element != mem.element:
		return "focus_moved"
	case req.Kind != p.Field.Kind || mem.kind != p.Field.Kind || mem.split != p.Field.Split:
		return "kind_changed"
	case p.Field.Problem != "":
		return "not_usable"
	case !reflect.DeepEqual(req.Form, p.Form):
		return "form_changed"
	}
	return ""
}

func (e *Ext) record(m Message) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.received = append(e.received, m)
	close(e.changed)
	e.changed = make(chan struct{})
}

// members decodes a JSON object into its raw members. The raw slices are
// copies; callers zero the ones that may hold the value.
func members(body []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// redact returns body with its "value" member, if any, replaced.
func redact(body []byte) json.RawMessage {
	m, ok := members(body)
	if !ok {
		return json.RawMessage(`"[not an object]"`)
	}
	if v, has := m["value"]; has {
		clear(v)
		m["value"] = json.RawMessage(`"[redacted]"`)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`"[unencodable]"`)
	}
	return out
}

// extractValue returns the decoded "value" member of body as a new []byte,
// never as a Go string.
func extractValue(body []byte) ([]byte, bool) {
	m, ok := members(body)
	if !ok {
		return nil, false
	}
	raw := m["value"]
	defer clear(raw)
	return unquote(raw)
}
