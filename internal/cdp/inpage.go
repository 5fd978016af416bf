package cdp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/fillgate/fillgate/extension"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/secretjson"
)

// functionDeclaration is the embedded in-page function in the form
// Runtime.callFunctionOn wants: the file's text is one function expression
// (comments allowed); a trailing semicolon is dropped and a newline added
// so that a trailing line comment cannot swallow the closing parenthesis
// the browser wraps it in.
func functionDeclaration(src string) string {
	s := strings.TrimSpace(src)
	s = strings.TrimSuffix(s, ";")
	return s + "\n"
}

// world is an isolated world made for one frame: its execution context,
// named by the system-unique id so that a call can never land in a context
// of another process after a navigation.
type world struct {
	sess      *session
	frameID   cdp.FrameID
	uniqueID  string
	contextID runtime.ExecutionContextID // for DOM.resolveNode; calls use uniqueID
}

// probeResult is what probe({token}) returns (PROTOCOL.md section 3).
type probeResult struct {
	Origin        string         `json:"origin"`
	Top           bool           `json:"top"`
	ActiveIsFrame bool           `json:"activeIsFrame"`
	Field         fill.FieldInfo `json:"field"`
	Form          *fill.FormInfo `json:"form"`
	// Account is the user name the focused field's form shows, or "".
	Account string `json:"account"`
	// ClosedHost says the focus stopped at an element that may hold it in
	// a closed shadow root the call could not reach (see shadow.go).
	ClosedHost bool `json:"closedHost"`
}

// insertResult is what insert({token, origin, kind, form, then, value})
// returns.
type insertResult struct {
	Inserted  bool   `json:"inserted"`
	Matched   bool   `json:"matched"`
	Reason    string `json:"reason"`
	Submitted bool   `json:"submitted"`
	Navigated bool   `json:"navigated"`
	Cleared   bool   `json:"cleared"`
	Remains   bool   `json:"remains"`
	Stopped   string `json:"stopped"`
	StoppedBy string `json:"stoppedBy"`
}

// insertArg is every member of insert's argument but the value.
type insertArg struct {
	Token  string         `json:"token"`
	Origin string         `json:"origin"`
	Kind   string         `json:"kind"`
	Form   *fill.FormInfo `json:"form"`
	Then   string         `json:"then"`
	// Binding and Nonce: the in-page function calls the binding with the
	// nonce in the task that inserts (markBinding).
	Binding string `json:"binding,omitempty"`
	Nonce   string `json:"nonce,omitempty"`
}

// markBinding is the name of the binding (Runtime.addBinding, in the
// isolated world named world only) through which the in-page insert
// marks that it inserts: when the page's own navigation loses the call's
// answer, a mark says the value went in, no mark that it did not.
func markBinding(world string) string { return world + "-mark" }

// errContextGone reports that the isolated world's context no longer
// exists: its frame navigated or went away.
var errContextGone = errors.New("the frame's isolated world is gone")

// errThrew reports that the in-page function threw. Its text is never
// forwarded: it could quote arguments.
var errThrew = errors.New("the in-page function threw an exception")

// errLeftMidCall reports that the frame's document went away while the
// in-page function ran (it navigated or the frame was removed).
var errLeftMidCall = errors.New("the frame's document went away during the call")

// newWorld creates an isolated world named name in frameID on s and looks
// up its unique context id, which the session's listener recorded from
// Runtime.executionContextCreated (the event precedes the command's reply;
// after a navigation Chromium may hand back a world it re-created itself).
func newWorld(ctx context.Context, s *session, frameID cdp.FrameID, name string) (*world, error) {
	res, err := cdp.Call(ctx, s.target, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{
		FrameID:             frameID,
		WorldName:           name,
		GrantUniveralAccess: new(false),
	})
	if err != nil {
		return nil, fmt.Errorf("create isolated world: %w", err)
	}
	c, err := s.contexts.wait(ctx, res.ExecutionContextID, s.detached)
	if err != nil {
		return nil, err
	}
	if c.name != name || c.frameID != frameID {
		return nil, errors.New("the isolated world's context is not the one asked for")
	}
	return &world{sess: s, frameID: frameID, uniqueID: c.uniqueID, contextID: res.ExecutionContextID}, nil
}

// call runs fillgateInPage(op, arg, ...roots) in the world. argJSON is the
// raw JSON of arg (null when nil); roots are closed shadow roots resolved
// in this world (see shadow.go). With byValue the result comes back as
// JSON; otherwise as a remote object in objectGroup.
func (w *world) call(ctx context.Context, js, op string, argJSON []byte, byValue bool, roots []runtime.RemoteObjectID) (*runtime.RemoteObject, error) {
	opJSON, _ := json.Marshal(op)
	args := []*runtime.CallArgument{{Value: opJSON}}
	if argJSON != nil || len(roots) > 0 {
		if argJSON == nil {
			argJSON = []byte("null")
		}
		args = append(args, &runtime.CallArgument{Value: argJSON})
	}
	for _, r := range roots {
		args = append(args, &runtime.CallArgument{ObjectID: r})
	}
	res, err := cdp.Call(ctx, w.sess.target, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: js,
		Arguments:           args,
		UniqueContextID:     w.uniqueID,
		ReturnByValue:       new(byValue),
		AwaitPromise:        new(true),
		Silent:              new(true),
		ObjectGroup:         objectGroup,
	})
	if err != nil {
		if isContextGone(err) {
			return nil, errContextGone
		}
		if isLeftMidCall(err) {
			return nil, errLeftMidCall
		}
		return nil, w.sess.wrap(err)
	}
	if res.ExceptionDetails != nil {
		return nil, errThrew
	}
	if res.Result == nil {
		return nil, fmt.Errorf("%s: no result", op)
	}
	return res.Result, nil
}

// objectGroup holds the remote objects fillgate asks for, so they can be
// released together.
const objectGroup = "fillgate"

// probe runs probe({token, shown}) with the closed shadow roots resolved
// so far. shown says the tab was just brought to the front: the page gets
// a moment to be shown before its field is judged.
func (w *world) probe(ctx context.Context, js, token string, roots []runtime.RemoteObjectID, shown bool) (probeResult, error) {
	arg, _ := json.Marshal(map[string]any{"token": token, "shown": shown})
	obj, err := w.call(ctx, js, "probe", arg, true, roots)
	if err != nil {
		return probeResult{}, err
	}
	var pr probeResult
	if len(obj.Value) == 0 || string(obj.Value) == "null" {
		return probeResult{}, errors.New("probe returned nothing")
	}
	if err := json.Unmarshal(obj.Value, &pr); err != nil {
		return probeResult{}, fmt.Errorf("probe result: %w", err)
	}
	if pr.Field.Kind == "" {
		pr.Field.Kind = fill.FieldNone
	}
	return pr, nil
}

// activeChild runs activeFrame() and maps the focused frame element to the
// id of the frame it holds.
func (w *world) activeChild(ctx context.Context, js string, roots []runtime.RemoteObjectID) (cdp.FrameID, error) {
	obj, err := w.call(ctx, js, "activeFrame", nil, false, roots)
	if err != nil {
		return "", err
	}
	if obj.ObjectID == "" {
		return "", errors.New("activeFrame returned no element")
	}
	defer func() {
		_, _ = cdp.Call(ctx, w.sess.target, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: obj.ObjectID})
	}()
	node, err := cdp.Call(ctx, w.sess.target, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: obj.ObjectID})
	if err != nil {
		return "", fmt.Errorf("describe the focused frame element: %w", w.sess.wrap(err))
	}
	if node.Node == nil || node.Node.FrameID == "" {
		return "", errors.New("the focused frame element has no frame")
	}
	return node.Node.FrameID, nil
}

// insert runs insert({token, origin, kind, form, then, value}) with the
// closed shadow roots of the focused frame's level. The argument is one
// buffer written by secretjson.Message and zeroed when the call returns.
// chromedp copies the parameters into its own message buffers
// (jsonv2.Marshal, the WebSocket encoder); those copies are beyond our
// reach and live until the garbage collector or the next message reuses
// them.
func (w *world) insert(ctx context.Context, js string, meta insertArg, value []byte, roots []runtime.RemoteObjectID) (insertResult, error) {
	arg, err := secretjson.Message(meta, value)
	if err != nil {
		return insertResult{}, fmt.Errorf("encode insert: %w", err)
	}
	obj, err := w.call(ctx, js, "insert", arg, true, roots)
	clear(arg)
	if err != nil {
		return insertResult{}, err
	}
	var ir insertResult
	if err := json.Unmarshal(obj.Value, &ir); err != nil {
		return insertResult{}, errors.New("insert returned something unexpected")
	}
	return ir, nil
}

// newToken returns a random name for the element a probe remembers.
func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// worldName is a random isolated-world name per connection, so no other
// CDP client can have made a world of that name first.
func worldName() string { return "fillgate-" + newToken() }

// inPageSource is the embedded in-page function.
func inPageSource() string { return functionDeclaration(extension.InPageJS) }
