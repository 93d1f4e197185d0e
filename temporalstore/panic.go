package temporalstore

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// ErrInternal is the error of a command that met a bug (a panic) while it
// ran. The panic is contained: the command changed nothing (a write panics
// while it is being decided, before its record is logged), its stack is
// logged, Panics counts it, and every other command goes on.
var ErrInternal = errors.New("temporalstore: internal error")

// Panics is how many panics the engine has contained since it opened:
// in its commands' runners and in its shards' write and read functions.
func (e *Engine) Panics() int64 {
	n := e.panics.Load()
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, t := range e.tables {
		for _, s := range t.shards {
			n += s.Panics()
		}
	}
	return n
}

// contain is deferred by the entry points that run a command: a panic
// becomes ErrInternal, and a panic a shard contained is logged with its
// stack and reported the same way.
func (e *Engine) contain(c *Command, err *error) {
	if r := recover(); r != nil {
		e.panics.Add(1)
		e.opts.Logger.Error("temporalstore: a command panicked; contained", "kind", string(c.Kind), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		*err = fmt.Errorf("%w: %v", ErrInternal, r)
		return
	}
	var pe *shard.PanicError
	if *err != nil && errors.As(*err, &pe) {
		e.opts.Logger.Error("temporalstore: a command panicked in its shard; contained", "kind", string(c.Kind), "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
		*err = fmt.Errorf("%w: %v", ErrInternal, pe.Value)
	}
}
