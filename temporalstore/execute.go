package temporalstore

import (
	"context"
	"fmt"
	"time"
)

// Kind names a command.
type Kind string

// Command kinds the engine executes so far.
const (
	// KindSet stores Value under Key, expiring after TTL (0: never).
	KindSet Kind = "set"
	// KindGet reads Key.
	KindGet Kind = "get"
	// KindDelete removes Key.
	KindDelete Kind = "delete"
)

// Command is one request to the engine, addressed to a table (the default
// table when Namespace and Table are empty).
type Command struct {
	Namespace string
	Table     string
	Kind      Kind
	Key       []byte
	Value     []byte
	TTL       time.Duration
}

// Response is what a command returns: Value and Found for reads.
type Response struct {
	Value []byte
	Found bool
}

// Execute routes c to its shard and runs it. A write returns once it is
// durable (or written, for an async table) and applied. Bad input gets an
// error wrapping ErrInvalid and changes nothing.
func (e *Engine) Execute(ctx context.Context, c Command) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	if len(c.Key) == 0 {
		return Response{}, fmt.Errorf("%w: empty key", ErrInvalid)
	}
	if c.TTL < 0 {
		return Response{}, fmt.Errorf("%w: negative TTL", ErrInvalid)
	}
	switch c.Kind {
	case KindSet, KindGet, KindDelete:
	default:
		return Response{}, fmt.Errorf("%w: %q", ErrUnknownKind, c.Kind)
	}
	s, err := e.route(&c)
	if err != nil {
		return Response{}, err
	}
	switch c.Kind {
	case KindSet:
		var exp time.Time
		if c.TTL > 0 {
			exp = e.opts.Now().Add(c.TTL)
		}
		return Response{}, s.Set(ctx, c.Key, c.Value, exp)
	case KindDelete:
		return Response{}, s.Delete(ctx, c.Key)
	default:
		v, ok, err := s.Get(c.Key)
		return Response{Value: v, Found: ok}, err
	}
}
