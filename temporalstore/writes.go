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

// hooks are the functions registered with OnWrite or OnExpired, copied
// on change so that a call reads them with one atomic load.
type hooks[F any] struct {
	fns atomic.Pointer[[]*F]
	mu  sync.Mutex
}

// add registers fn; the function it returns removes it.
func (h *hooks[F]) add(fn F) (remove func()) {
	p := &fn
	h.mu.Lock()
	defer h.mu.Unlock()
	var fns []*F
	if cur := h.fns.Load(); cur != nil {
		fns = slices.Clone(*cur)
	}
	fns = append(fns, p)
	h.fns.Store(&fns)
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if cur := h.fns.Load(); cur != nil {
			fns := slices.DeleteFunc(slices.Clone(*cur), func(q *F) bool { return q == p })
			h.fns.Store(&fns)
		}
	}
}

// list is the functions registered now.
func (h *hooks[F]) list() []*F {
	if fns := h.fns.Load(); fns != nil {
		return *fns
	}
	return nil
}

// hooked reports whether any function is registered.
func (h *hooks[F]) hooked() bool { return len(h.list()) > 0 }

// OnWrite has fn called after each applied write (see WriteHook): what
// Redis's keyspace notifications are made from. cancel stops the calls.
func (e *Engine) OnWrite(fn WriteHook) (cancel func()) { return e.writes.add(fn) }

// wrote calls the write hooks for c, applied in x with response r.
func (e *Engine) wrote(ctx context.Context, x *scope, c *Command, r Response) {
	for _, fn := range e.writes.list() {
		(*fn)(ctx, c, r, WriteView{e: e, x: x})
	}
}
