package matrixark

import (
	"context"
	"errors"
)

// MaxGetKeys bounds the keys of one Store.Get: a larger read is split by
// the caller, never refused into an empty result.
const MaxGetKeys = 1000

// ErrTooManyKeys is a Store.Get of more than MaxGetKeys keys.
var ErrTooManyKeys = errors.New("matrixark: more than 1000 keys in one read")

// Store is all matrixark needs of storage: atomic batches of writes, point
// reads and ordered scans. Implementations: memstore (tests, embedding) and
// tsstore (the TemporalStore engine).
type Store interface {
	// Apply writes m atomically: all of it or none. With Durable it
	// returns once the batch survives a crash.
	Apply(ctx context.Context, m []Mutation, o WriteOpts) error
	// Get returns the value of each key, nil where there is none; at most
	// MaxGetKeys keys (ErrTooManyKeys beyond).
	Get(ctx context.Context, keys [][]byte, o ReadOpts) ([][]byte, error)
	// Scan calls fn for each key in r in key order (reverse with
	// o.Reverse) until fn returns false. fn must not keep k or v.
	Scan(ctx context.Context, r Range, o ReadOpts, fn func(k, v []byte) bool) error
}

// getAll is s.Get of any number of keys, MaxGetKeys a read.
func getAll(ctx context.Context, s Store, keys [][]byte, o ReadOpts) ([][]byte, error) {
	out := make([][]byte, 0, len(keys))
	for from := 0; from < len(keys); from += MaxGetKeys {
		part, err := s.Get(ctx, keys[from:min(from+MaxGetKeys, len(keys))], o)
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	return out, nil
}

// Mutation is one write of an Apply: a put, or a delete of Key.
type Mutation struct {
	Key, Value []byte
	Delete     bool
}

// Range is the keys k with Start <= k < End; a nil End is every key from
// Start on.
type Range struct {
	Start, End []byte
}

// PrefixRange is the range of the keys that start with p.
func PrefixRange(p []byte) Range {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return Range{Start: p, End: end[:i+1]}
		}
	}
	return Range{Start: p} // all 0xff: no key above it shares the prefix
}

// WriteOpts are an Apply's options.
type WriteOpts struct {
	// Durable acknowledges only after the engine's durable commit:
	// memories, audits, Space pins and history are written so. Bulk
	// ingest may go without.
	Durable bool
}

// ReadOpts are a Get's or Scan's options.
type ReadOpts struct {
	// NoFill reads without filling caches: a maintenance sweep over cold
	// data must not push the hot set out.
	NoFill bool
	// Reverse scans from the end of the range.
	Reverse bool
}
