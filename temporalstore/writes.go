package temporalstore

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// WriteHook is called after each write command the engine applies, from
// any surface (RESP, HTTP, the Go API): c is the command as run and r its
// response (a KindDeleteKeys is also reported key by key, each key it
// deleted as a KindDelete); v reads where c ran (inside its transaction, whose locks a
// separate call would wait for). It runs on the caller's goroutine before
// the call returns, so it must be quick, and must not keep c or r.
type WriteHook func(ctx context.Context, c *Command, r Response, v WriteView)

// WriteView runs reads for a WriteHook where the write ran.
type WriteView struct {
	e *Engine
	x *scope
}

// Execute runs the read command c.
func (v WriteView) Execute(ctx context.Context, c Command) (Response, error) {
	return v.e.executeCopy(ctx, v.x, c)
}

// writeHooks are the OnWrite functions, copied on change so that a write
// reads them with one atomic load.
type writeHooks struct {
	fns atomic.Pointer[[]*WriteHook]
	mu  sync.Mutex
}

// OnWrite has fn called after each applied write (see WriteHook): what
// Redis's keyspace notifications are made from. cancel stops the calls.
func (e *Engine) OnWrite(fn WriteHook) (cancel func()) {
	w := &e.writes
	p := &fn
	w.mu.Lock()
	defer w.mu.Unlock()
	var fns []*WriteHook
	if cur := w.fns.Load(); cur != nil {
		fns = slices.Clone(*cur)
	}
	fns = append(fns, p)
	w.fns.Store(&fns)
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if cur := w.fns.Load(); cur != nil {
			fns := slices.DeleteFunc(slices.Clone(*cur), func(q *WriteHook) bool { return q == p })
			w.fns.Store(&fns)
		}
	}
}

// hooked reports whether a write must call wrote.
func (w *writeHooks) hooked() bool {
	fns := w.fns.Load()
	return fns != nil && len(*fns) > 0
}

// wrote calls the hooks for c, applied in x with response r.
func (e *Engine) wrote(ctx context.Context, x *scope, c *Command, r Response) {
	fns := e.writes.fns.Load()
	if fns == nil {
		return
	}
	for _, fn := range *fns {
		(*fn)(ctx, c, r, WriteView{e: e, x: x})
	}
}
