package shard

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
)

// ErrInternal is the error of a call whose function panicked: a bug met
// while deciding a write or serving a read. It is contained where the
// function runs, before anything is logged, so the shard is unchanged and
// its other callers (the rest of a combined batch) go on.
var ErrInternal = errors.New("shard: internal error")

// PanicError is a contained panic: its value and the stack it was raised
// on, for the caller to log. It wraps ErrInternal.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("shard: internal error: %v", e.Value) }

// Unwrap makes errors.Is(err, ErrInternal) hold.
func (e *PanicError) Unwrap() error { return ErrInternal }

func (s *Shard) contained(r any) *PanicError {
	s.panics.Add(1)
	return &PanicError{Value: r, Stack: debug.Stack()}
}

// Panics is how many panics the shard has contained since it opened.
func (s *Shard) Panics() int64 { return s.panics.Load() }

// maintSafely, deferred by a maintenance step (Checkpoint, Sweep, Compact
// ...), turns a panic of the step into its error, counted and with its
// stack. The steps let their locks go by defers, so a panic leaves none
// held; what a step changed before it is whole (its writes are logged
// records), so the shard goes on.
func (s *Shard) maintSafely(step string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("shard: %s: %w", step, s.contained(r))
	}
}

// rlocked runs fn under the shard's read lock, let go even if fn panics.
func (s *Shard) rlocked(fn func()) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	fn()
}

// locked runs fn under the shard's lock, let go even if fn panics.
func (s *Shard) locked(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn()
}

// evalSafely runs a write's function; a panic in it is its error.
func (s *Shard) evalSafely(fn MutateFunc, v *View) (cmds []command.Command, err error) {
	defer func() {
		if r := recover(); r != nil {
			cmds, err = nil, s.contained(r)
		}
	}()
	return fn(v)
}

// readSafely runs a read's function; a panic in it is its error, and the
// lock the caller holds is let go as usual.
func (s *Shard) readSafely(fn func(*View) error, v *View) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = s.contained(r)
		}
	}()
	return fn(v)
}
