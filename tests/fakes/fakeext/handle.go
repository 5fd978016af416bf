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
	Token   string         `json:"token"`
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
	frame, field := p.Frame, p.Field
	if req.Frame != nil && *req.Frame != p.Frame {
		frame, field = *req.Frame, fill.FieldInfo{Kind: fill.FieldNone} // nothing focused there
	}
	token := newToken()
	e.tokens[token] = remembered{tab: p.Tab, frame: frame, element: p.Element}
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

// peek reports the page's focused origin and field, as the real
// extension's peek does, remembering nothing.
func (e *Ext) peek(reply map[string]any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.page
	if p.NoTab {
		reply["type"], reply["error"], reply["detail"] = "error", "no_tab", "no active tab"
		return
	}
	origin := ""
	if len(p.Origins) > 0 {
		origin = p.Origins[0]
	}
	reply["type"], reply["origin"], reply["field"] = "peeked", origin, p.Field
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

// insert re-checks the page in the order the real extension does (paused,
// tab, top origin, frame, frame origin, element, focus, kind, usability,
// the form's destinations) and keeps the value only if every check holds;
// then the page answers the submit (Page.After).
func (e *Ext) insert(req request, body []byte, reply map[string]any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.page
	mem, known := e.tokens[req.Token]
	reason := ""
	switch {
	case e.paused:
		reason = "paused"
	case p.NoTab || req.Tab == nil || *req.Tab != p.Tab:
		reason = "tab_gone"
	case len(req.Origins) == 0 || len(p.Origins) == 0 || req.Origins[len(req.Origins)-1] != p.Origins[len(p.Origins)-1]:
		reason = "origin_changed"
	case req.Frame == nil || *req.Frame != p.Frame:
		reason = "frame_changed"
	case !slices.Equal(req.Origins, p.Origins):
		reason = "origin_changed"
	case !known || mem.tab != p.Tab || mem.frame != p.Frame || p.Detached:
		reason = "element_gone"
	case mem.element != p.Element:
		reason = "focus_moved"
	case req.Kind != p.Field.Kind:
		reason = "kind_changed"
	case p.Field.Problem != "":
		reason = "not_usable"
	case !reflect.DeepEqual(req.Form, p.Form):
		reason = "form_changed"
	case p.RejectInsert:
		reason = "insert_failed"
	}
	if reason != "" {
		reply["type"], reply["reason"] = "not_inserted", reason
		return
	}
	value, ok := extractValue(body)
	if !ok {
		reply["type"], reply["error"], reply["detail"] = "error", "bad_request", "insert without a string value"
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
