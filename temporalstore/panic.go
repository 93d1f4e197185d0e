package temporalstore

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

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

// recovered turns a panic a command raised into its error, logging the
// stack and counting it.
func (e *Engine) recovered(c *Command, r any) error {
	e.panics.Add(1)
	e.opts.Logger.Error("temporalstore: a command panicked; contained", "kind", string(c.Kind), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	return fmt.Errorf("%w: %v", ErrInternal, r)
}

// shardPanic reports a panic a shard contained (it counted it) as
// ErrInternal, its stack logged; other errors are returned as they are.
func (e *Engine) shardPanic(c *Command, err error) error {
	var pe *shard.PanicError
	if !errors.As(err, &pe) {
		return err
	}
	e.opts.Logger.Error("temporalstore: a command panicked in its shard; contained", "kind", string(c.Kind), "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
	return fmt.Errorf("%w: %w", ErrInternal, err)
}
