package cdp

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
)

// maxShadowDepth bounds the closed shadow roots followed in one frame.
const maxShadowDepth = 16

// Closed shadow roots on the CDP path. In the isolated world the in-page
// function cannot see into a closed shadow root (element.shadowRoot is
// null), and CDP has no chrome.dom. When its probe says the focus stopped
// at a possible host (closedHost), the host's shadow root is found here
// with DOM.describeNode (pierce) and resolved into the same isolated world
// with DOM.resolveNode; the probe then runs again with that root passed as
// an argument after arg, and so on for nested roots. The in-page function
// uses only roots whose host is the element it reached, so the check and
// the insert stay one call in the page, as on the extension path.

// pierce resolves the closed shadow roots the focus is in, one level at a
// time, and returns them with the probe that ran with all of them. A root
// that cannot be resolved (the host went away meanwhile) ends the descent:
// the probe then reports the host, which is no login field.
func (w *world) pierce(ctx context.Context, js, token string, pr probeResult, shown bool) ([]runtime.RemoteObjectID, probeResult, error) {
	var roots []runtime.RemoteObjectID
	for i := 0; pr.ClosedHost && i < maxShadowDepth; i++ {
		root, err := w.closedRoot(ctx, js, roots)
		if ctx.Err() != nil || errors.Is(err, errSessionGone) || errors.Is(err, errContextGone) {
			return nil, probeResult{}, cmp.Or(ctx.Err(), err)
		}
		if err != nil || root == "" {
			return roots, pr, nil
		}
		roots = append(roots, root)
		if pr, err = w.probe(ctx, js, token, roots, shown); err != nil {
			return nil, probeResult{}, err
		}
	}
	return roots, pr, nil
}

// closedRoot returns the closed shadow root of the element the focus
// stopped at (activeHost), resolved in this world, or "" when it has none.
func (w *world) closedRoot(ctx context.Context, js string, roots []runtime.RemoteObjectID) (runtime.RemoteObjectID, error) {
	obj, err := w.call(ctx, js, "activeHost", nil, false, roots)
	if err != nil {
		return "", err
	}
	if obj.ObjectID == "" {
		return "", nil
	}
	defer func() {
		_, _ = cdp.Call(ctx, w.sess.target, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: obj.ObjectID})
	}()
	node, err := cdp.Call(ctx, w.sess.target, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: obj.ObjectID, Depth: new(int64(1)), Pierce: new(true)})
	if err != nil {
		return "", fmt.Errorf("describe the focused shadow host: %w", w.sess.wrap(err))
	}
	if node.Node == nil {
		return "", errors.New("the focused shadow host has no node")
	}
	for _, sr := range node.Node.ShadowRoots {
		if sr.ShadowRootType != cdp.ShadowRootTypeClosed {
			continue
		}
		res, err := cdp.Call(ctx, w.sess.target, dom.ResolveNode, dom.ResolveNodeParams{
			BackendNodeID: sr.BackendNodeID, ExecutionContextID: w.contextID, ObjectGroup: objectGroup,
		})
		if err != nil {
			return "", fmt.Errorf("resolve the closed shadow root: %w", w.sess.wrap(err))
		}
		if res.Object == nil || res.Object.ObjectID == "" {
			return "", errors.New("the closed shadow root resolved to nothing")
		}
		return res.Object.ObjectID, nil
	}
	return "", nil
}
