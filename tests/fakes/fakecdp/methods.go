package fakecdp

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/fillgate/fillgate/internal/fill"
)

// enableLike are session methods that only switch something on: they
// succeed with an empty result.
var enableLike = map[string]bool{
	"Runtime.enable": true, "Log.enable": true, "Network.enable": true, "Inspector.enable": true,
	"Page.enable": true, "DOM.enable": true, "CSS.enable": true, "Target.setDiscoverTargets": true,
	"Target.setAutoAttach": true, "Page.setLifecycleEventsEnabled": true, "Page.bringToFront": true,
	"Runtime.releaseObject": true, "Runtime.releaseObjectGroup": true,
}

func targetSession(id string) target.SessionID { return target.SessionID(id) }

// browserMethod answers a browser-level method. s.mu is held.
func (s *Server) browserMethod(c *conn, msg *cdproto.Message) (any, []outgoing, *cdproto.Error) {
	switch msg.Method {
	case target.CommandGetTargets:
		var infos []*target.Info
		for _, t := range s.targets {
			if !t.closed {
				infos = append(infos, &target.Info{TargetID: target.ID(t.ID), Type: t.Type, URL: t.URL, Title: "fake", BrowserContextID: cdp.BrowserContextID(t.Context)})
			}
		}
		return target.GetTargetsResult{TargetInfos: infos}, nil, nil

	case target.CommandAttachToTarget:
		var p target.AttachToTargetParams
		if err := jsonv2.Unmarshal(msg.Params, &p); err != nil {
			return nil, nil, errorf(-32602, "bad params")
		}
		t := s.target(string(p.TargetID))
		if t == nil {
			return nil, nil, errorf(-32602, "No target with given id found")
		}
		if p.Flatten == nil || !*p.Flatten {
			return nil, nil, errorf(-32602, "fakecdp speaks flat sessions only")
		}
		ss := &session{id: newID(), target: t, conn: c, worlds: map[string]*worldState{}}
		s.sessions[ss.id] = ss
		return target.AttachToTargetResult{SessionID: target.SessionID(ss.id)}, nil, nil

	case target.CommandDetachFromTarget:
		var p target.DetachFromTargetParams
		_ = jsonv2.Unmarshal(msg.Params, &p)
		ss := s.sessions[string(p.SessionID)]
		if ss == nil {
			return nil, nil, errorf(-32602, "No session with given id")
		}
		delete(s.sessions, ss.id)
		return nil, []outgoing{event(c, "", "Target.detachedFromTarget", map[string]string{"sessionId": ss.id, "targetId": ss.target.ID})}, nil

	case target.CommandSetDiscoverTargets:
		var p target.SetDiscoverTargetsParams
		_ = jsonv2.Unmarshal(msg.Params, &p)
		c.discover = p.Discover
		return nil, nil, nil

	case target.CommandCreateTarget:
		var p target.CreateTargetParams
		_ = jsonv2.Unmarshal(msg.Params, &p)
		if p.BrowserContextID != "" && !s.contexts[string(p.BrowserContextID)] {
			return nil, nil, errorf(-32602, "Failed to find browser context with id %s", p.BrowserContextID)
		}
		t := s.addPageLocked(p.URL)
		t.Context = string(p.BrowserContextID)
		return target.CreateTargetResult{TargetID: target.ID(t.ID)}, nil, nil

	case target.CommandCreateBrowserContext:
		id := newID()
		if s.contexts == nil {
			s.contexts = map[string]bool{}
		}
		s.contexts[id] = true
		return target.CreateBrowserContextResult{BrowserContextID: cdp.BrowserContextID(id)}, nil, nil

	case target.CommandDisposeBrowserContext:
		var p target.DisposeBrowserContextParams
		_ = jsonv2.Unmarshal(msg.Params, &p)
		if !s.contexts[string(p.BrowserContextID)] {
			return nil, nil, errorf(-32602, "Failed to find context with id %s", p.BrowserContextID)
		}
		delete(s.contexts, string(p.BrowserContextID))
		var out []outgoing
		for _, t := range s.targets {
			if t.Context == string(p.BrowserContextID) && !t.closed {
				out = append(out, s.closeLocked(t.ID)...)
			}
		}
		return nil, out, nil

	case target.CommandCloseTarget:
		var p target.CloseTargetParams
		_ = jsonv2.Unmarshal(msg.Params, &p)
		if s.target(string(p.TargetID)) == nil {
			return nil, nil, errorf(-32602, "No target with given id found")
		}
		return nil, s.closeLocked(string(p.TargetID)), nil
	}
	return nil, nil, errorf(-32601, "'%s' wasn't found", msg.Method)
}

// target finds an open target; s.mu is held.
func (s *Server) target(id string) *Target {
	for _, t := range s.targets {
		if t.ID == id && !t.closed {
			return t
		}
	}
	return nil
}

// sessionMethod answers a method sent to an attached session. s.mu is
// held.
func (s *Server) sessionMethod(ss *session, msg *cdproto.Message) (any, []outgoing, *cdproto.Error) {
	m := string(msg.Method)
	switch {
	case enableLike[m]:
		return nil, nil, nil
	case m == runtime.CommandEvaluate:
		return runtime.EvaluateResult{Result: &runtime.RemoteObject{Type: "object", ClassName: "Window"}}, nil, nil
	case m == page.CommandGetFrameTree:
		f := ss.target.Root
		return page.GetFrameTreeResult{FrameTree: &page.FrameTree{Frame: &cdp.Frame{
			ID: cdp.FrameID(f.ID), LoaderID: cdp.LoaderID(strconv.Itoa(f.gen)), URL: f.origin + "/",
			SecurityOrigin: f.origin, MimeType: "text/html",
		}}}, nil, nil
	case m == dom.CommandGetDocument:
		return dom.GetDocumentResult{Root: &cdp.Node{NodeID: 1, BackendNodeID: 1, NodeType: 9, NodeName: "#document"}}, nil, nil
	case m == runtime.CommandAddBinding:
		return nil, nil, nil // the fake's in-page calls send no marks
	case m == page.CommandCreateIsolatedWorld:
		return s.createWorld(ss, msg)
	case m == runtime.CommandCallFunctionOn:
		return s.callFunction(ss, msg)
	case m == dom.CommandDescribeNode:
		var p dom.DescribeNodeParams
		_ = jsonv2.Unmarshal(msg.Params, &p)
		id, ok := strings.CutPrefix(string(p.ObjectID), "frame-element:")
		if !ok {
			return nil, nil, errorf(-32000, "Could not find node with given id")
		}
		return dom.DescribeNodeResult{Node: &cdp.Node{BackendNodeID: 7, NodeType: 1, NodeName: "IFRAME", LocalName: "iframe", FrameID: cdp.FrameID(id)}}, nil, nil
	}
	return nil, nil, errorf(-32601, "'%s' wasn't found", m)
}

// framesOf lists the frames living in t's process: its root and its
// in-process descendants.
func (s *Server) framesOf(t *Target) []*Frame {
	var out []*Frame
	for _, f := range s.frames {
		if f.target == t {
			out = append(out, f)
		}
	}
	return out
}

func (s *Server) createWorld(ss *session, msg *cdproto.Message) (any, []outgoing, *cdproto.Error) {
	var p page.CreateIsolatedWorldParams
	if err := jsonv2.Unmarshal(msg.Params, &p); err != nil {
		return nil, nil, errorf(-32602, "bad params")
	}
	var frame *Frame
	for _, f := range s.framesOf(ss.target) {
		if f.ID == string(p.FrameID) {
			frame = f
		}
	}
	if frame == nil {
		return nil, nil, errorf(-32000, "No frame for given id found")
	}
	s.nextID++
	ctxID := runtime.ExecutionContextID(s.nextID)
	unique := newID()
	ss.worlds[unique] = &worldState{frame: frame, gen: frame.gen, tokens: map[string]remembered{}}
	aux, _ := json.Marshal(map[string]any{"frameId": frame.ID, "isDefault": false, "type": "isolated"})
	ev := event(ss.conn, ss.id, "Runtime.executionContextCreated", runtime.EventExecutionContextCreated{
		Context: &runtime.ExecutionContextDescription{ID: ctxID, Origin: frame.origin, Name: p.WorldName, UniqueID: unique, AuxData: aux},
	})
	return page.CreateIsolatedWorldResult{ExecutionContextID: ctxID}, []outgoing{ev}, nil
}

// callFunction answers Runtime.callFunctionOn the way extension/inpage.js
// would in the world named by uniqueContextId.
func (s *Server) callFunction(ss *session, msg *cdproto.Message) (any, []outgoing, *cdproto.Error) {
	var p runtime.CallFunctionOnParams
	if err := jsonv2.Unmarshal(msg.Params, &p); err != nil {
		return nil, nil, errorf(-32602, "bad params")
	}
	defer func() {
		for _, a := range p.Arguments {
			clear(a.Value)
		}
	}()
	inPage := strings.Contains(p.FunctionDeclaration, "function fillgateInPage(op, arg)")
	visibility := !inPage && strings.Contains(p.FunctionDeclaration, `"visibilityState"`)
	if !visibility && !inPage {
		return nil, nil, errorf(-32000, "fakecdp: not the embedded in-page function")
	}
	if p.UniqueContextID == "" || p.ExecutionContextID != 0 {
		return nil, nil, errorf(-32602, "fakecdp: calls must name the world by uniqueContextId")
	}
	w := ss.worlds[p.UniqueContextID]
	if w == nil || w.gen != w.frame.gen {
		return nil, nil, errorf(-32602, "uniqueContextId not found")
	}
	if visibility { // internal/cdp's check of a pinned tab: is the page visible?
		raw, _ := json.Marshal(!w.frame.target.hidden)
		return runtime.CallFunctionOnResult{Result: &runtime.RemoteObject{Type: "boolean", Value: raw}}, nil, nil
	}
	if len(p.Arguments) == 0 {
		return nil, nil, errorf(-32602, "no op")
	}
	var op string
	_ = json.Unmarshal(p.Arguments[0].Value, &op)
	f := w.frame
	if f.Throw || f.ThrowOnInsert && op == "insert" {
		return runtime.CallFunctionOnResult{
			Result:           &runtime.RemoteObject{Type: "object", Subtype: "error"},
			ExceptionDetails: &runtime.ExceptionDetails{Text: "Uncaught"},
		}, nil, nil
	}
	byValue := func(v any) (any, []outgoing, *cdproto.Error) {
		raw, _ := json.Marshal(v)
		return runtime.CallFunctionOnResult{Result: &runtime.RemoteObject{Type: "object", Value: raw}}, nil, nil
	}
	switch op {
	case "probe":
		var arg struct {
			Token string `json:"token"`
		}
		if len(p.Arguments) > 1 {
			_ = json.Unmarshal(p.Arguments[1].Value, &arg)
		}
		field := f.field
		if field.Kind == "" {
			field.Kind = fill.FieldNone
		}
		if f.focusChild != nil {
			field = fill.FieldInfo{Kind: fill.FieldNone, Problem: f.focusChild.frameIssue}
		}
		if arg.Token != "" && field.Kind != fill.FieldNone {
			w.tokens[arg.Token] = remembered{element: f.element, kind: field.Kind}
		}
		var form *fill.FormInfo
		if f.focusChild == nil && (field.Kind == fill.FieldPassword || field.Kind == fill.FieldOTP) {
			form = f.form
		}
		return byValue(map[string]any{
			"origin": f.origin, "top": f.parent == nil, "activeIsFrame": f.focusChild != nil,
			"childFrame": nil, "field": field, "form": form,
		})
	case "activeFrame":
		if f.focusChild == nil {
			return runtime.CallFunctionOnResult{Result: &runtime.RemoteObject{Type: "object", Subtype: "null", Value: []byte("null")}}, nil, nil
		}
		return runtime.CallFunctionOnResult{Result: &runtime.RemoteObject{
			Type: "object", Subtype: "node", ClassName: "HTMLIFrameElement",
			ObjectID: runtime.RemoteObjectID("frame-element:" + f.focusChild.ID),
		}}, nil, nil
	case "insert":
		if len(p.Arguments) < 2 {
			return nil, nil, errorf(-32602, "no arg")
		}
		var arg struct {
			Token   string         `json:"token"`
			Origin  string         `json:"origin"`
			Kind    string         `json:"kind"`
			Form    *fill.FormInfo `json:"form"`
			Then    string         `json:"then"`
			Value   string         `json:"value"`
			Binding string         `json:"binding"`
			Nonce   string         `json:"nonce"`
		}
		if err := json.Unmarshal(p.Arguments[1].Value, &arg); err != nil {
			return nil, nil, errorf(-32602, "bad arg")
		}
		no := func(reason string) (any, []outgoing, *cdproto.Error) {
			return byValue(map[string]any{"inserted": false, "matched": false, "reason": reason})
		}
		saved, ok := w.tokens[arg.Token]
		delete(w.tokens, arg.Token)
		switch {
		case f.origin != arg.Origin:
			return no("origin_changed")
		case !ok:
			return no("element_gone")
		case f.focusChild != nil || f.element != saved.element:
			return no("focus_moved")
		case f.field.Kind != arg.Kind || saved.kind != arg.Kind:
			return no("kind_changed")
		case f.field.Problem != "":
			return no("not_usable")
		case !reflect.DeepEqual(arg.Form, f.form):
			return no("form_changed")
		case arg.Value == "":
			return no("insert_failed")
		case f.LeavesBeforeInsert:
			f.gen++ // gone before the insert: no mark, nothing in
			return nil, nil, errorf(-32000, "Inspected target navigated or closed")
		}
		// The mark, as the in-page function sends it right before the
		// insert, through the binding in the calling world.
		var marks []outgoing
		if arg.Binding != "" {
			marks = append(marks, event(ss.conn, ss.id, "Runtime.bindingCalled",
				map[string]any{"name": arg.Binding, "payload": arg.Nonce, "executionContextId": 1}))
		}
		clear(f.value)
		f.value = []byte(arg.Value)
		then := fill.ThenSubmit
		if arg.Then == fill.ThenNone {
			then = fill.ThenNone
		}
		after := f.After
		after.Short = after.Short || f.NotMatched
		v, holds, gone := after.After(then)
		f.holds = holds
		if gone {
			f.gen++ // the document is gone with its worlds
			return nil, marks, errorf(-32000, "Inspected target navigated or closed")
		}
		if v.Submitted {
			f.submits++
		}
		return byValue(map[string]any{"inserted": true, "matched": v.Matched, "reason": "",
			"submitted": v.Submitted, "navigated": v.Navigated, "cleared": v.Cleared, "remains": v.Remains,
			"stopped": v.Stopped, "stoppedBy": v.StoppedBy})
	}
	return nil, nil, errorf(-32000, "fillgateInPage: unknown op")
}
