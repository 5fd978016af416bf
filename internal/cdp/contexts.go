package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
)

// execContext is what Runtime.executionContextCreated said about one
// context.
type execContext struct {
	uniqueID string
	name     string
	frameID  cdp.FrameID
}

// contextBook records a session's execution contexts from the moment it
// attaches, so the unique id of any context can be looked up by its
// numeric id, and the marks the in-page insert sends through the binding
// (see markBinding).
type contextBook struct {
	binding string
	mu      sync.Mutex
	byID    map[runtime.ExecutionContextID]execContext
	marks   map[string]bool
	changed chan struct{} // closed and replaced on every change
}

func newContextBook(binding string) *contextBook {
	return &contextBook{binding: binding, byID: map[runtime.ExecutionContextID]execContext{}, marks: map[string]bool{},
		changed: make(chan struct{})}
}

// maxMarks bounds the marks a session keeps (one per insert).
const maxMarks = 64

// marked reports whether the in-page insert of call nonce marked its
// insert, and forgets it. The reading goroutine runs listeners in the
// order messages arrive, so a mark sent before the call's answer (or its
// error) was recorded before the call returns.
func (cb *contextBook) marked(nonce string) bool {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	ok := cb.marks[nonce]
	delete(cb.marks, nonce)
	return ok
}

// listen is a chromedp listener: it runs on the session's reading
// goroutine, in the order events arrive.
func (cb *contextBook) listen(ev any) {
	if called, ok := ev.(*runtime.EventBindingCalled); ok {
		if called.Name == cb.binding && len(called.Payload) <= 64 {
			cb.mu.Lock()
			if len(cb.marks) < maxMarks {
				cb.marks[called.Payload] = true
			}
			cb.mu.Unlock()
		}
		return
	}
	created, ok := ev.(*runtime.EventExecutionContextCreated)
	if !ok || created.Context == nil {
		return
	}
	var aux struct {
		FrameID cdp.FrameID `json:"frameId"`
	}
	_ = json.Unmarshal(created.Context.AuxData, &aux)
	cb.mu.Lock()
	defer cb.mu.Unlock()
	// A newer context with the same numeric id (after a process swap)
	// replaces the old entry.
	cb.byID[created.Context.ID] = execContext{uniqueID: created.Context.UniqueID, name: created.Context.Name, frameID: aux.FrameID}
	close(cb.changed)
	cb.changed = make(chan struct{})
}

// wait returns the context id once it is recorded.
func (cb *contextBook) wait(ctx context.Context, id runtime.ExecutionContextID, detached <-chan struct{}) (execContext, error) {
	for {
		cb.mu.Lock()
		c, ok := cb.byID[id]
		changed := cb.changed
		cb.mu.Unlock()
		if ok && c.uniqueID != "" {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return execContext{}, fmt.Errorf("wait for the isolated world: %w", ctx.Err())
		case <-detached:
			return execContext{}, errSessionGone
		case <-changed:
		}
	}
}
