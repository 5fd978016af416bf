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
// numeric id.
type contextBook struct {
	mu      sync.Mutex
	byID    map[runtime.ExecutionContextID]execContext
	changed chan struct{} // closed and replaced on every change
}

func newContextBook() *contextBook {
	return &contextBook{byID: map[runtime.ExecutionContextID]execContext{}, changed: make(chan struct{})}
}

// listen is a chromedp listener: it runs on the session's reading
// goroutine, in the order events arrive.
func (cb *contextBook) listen(ev any) {
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
