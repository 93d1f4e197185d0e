package temporalstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
	// KindIncrBy adds Delta to the integer stored at Key (0 when absent),
	// keeping its TTL, and returns the result in Response.Int (Redis INCRBY).
	KindIncrBy Kind = "incr_by"
	// KindAppend appends Value to the string at Key (creating it), keeping
	// its TTL, and returns the new length in Response.Int (Redis APPEND).
	KindAppend Kind = "append"
)

// Errors of read-modify-write kinds, with Redis's meaning.
var (
	// ErrNotInteger is returned by KindIncrBy when the stored value is not
	// a base-10 64-bit integer; nothing is changed.
	ErrNotInteger = errors.New("temporalstore: value is not an integer or out of range")
	// ErrOverflow is returned by KindIncrBy when the result would not fit
	// 64 bits; nothing is changed.
	ErrOverflow = errors.New("temporalstore: increment or decrement would overflow")
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
	// Delta is KindIncrBy's increment.
	Delta int64
}

// Response is what a command returns: Value and Found for reads, Int for
// the integer replies of KindIncrBy and KindAppend.
type Response struct {
	Value []byte
	Found bool
	Int   int64
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
	case KindSet, KindGet, KindDelete, KindIncrBy, KindAppend:
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
	case KindIncrBy:
		var r Response
		err := s.Update(ctx, c.Key, func(old []byte, exp time.Time, found bool) ([]byte, time.Time, bool, error) {
			var n int64
			if found {
				var err error
				if n, err = strconv.ParseInt(string(old), 10, 64); err != nil {
					return nil, exp, false, ErrNotInteger
				}
			}
			sum := n + c.Delta
			if (c.Delta > 0 && sum < n) || (c.Delta < 0 && sum > n) {
				return nil, exp, false, ErrOverflow
			}
			r.Int = sum
			return strconv.AppendInt(nil, sum, 10), exp, true, nil
		})
		return r, err
	case KindAppend:
		var r Response
		err := s.Update(ctx, c.Key, func(old []byte, exp time.Time, found bool) ([]byte, time.Time, bool, error) {
			v := append(append(make([]byte, 0, len(old)+len(c.Value)), old...), c.Value...)
			r.Int = int64(len(v))
			return v, exp, true, nil
		})
		return r, err
	default:
		v, ok, err := s.Get(c.Key)
		return Response{Value: v, Found: ok}, err
	}
}
