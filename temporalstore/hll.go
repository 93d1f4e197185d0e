package temporalstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/hll"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

var hllKinds = map[Kind]runner{KindPFAdd: runPFAdd, KindPFDebug: runPFDebug}

// hllErr gives the package's errors the engine's names.
func hllErr(err error) error {
	switch {
	case errors.Is(err, hll.ErrNotHLL):
		return ErrNotHLL
	case errors.Is(err, hll.ErrCorrupt):
		return ErrCorruptHLL
	}
	return err
}

func runPFAdd(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	var r Response
	err := s.Update(ctx, c.Key, func(old []byte, exp time.Time, found bool) ([]byte, time.Time, shard.Action, error) {
		v, changed, err := hll.PFAdd(old, found, c.Args)
		if err != nil || v == nil {
			return nil, exp, shard.Keep, hllErr(err)
		}
		r.Int = b2i(changed)
		return v, exp, shard.Write, nil
	})
	return r, err
}

func runPFCount(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	if len(c.Keys) == 0 {
		return Response{}, fmt.Errorf("%w: PFCOUNT needs a key", ErrInvalid)
	}
	_, s, err := e.oneGroup(x, c, c.Keys...)
	if err != nil {
		return Response{}, err
	}
	if len(c.Keys) > 1 {
		return pfCountUnion(ctx, s, c.Keys)
	}
	key := c.Keys[0]
	// A read first: a valid cache, the common case, answers without
	// taking the shard's write path.
	var r Response
	stale := false
	err = s.Read(ctx, func(v *shard.View) error {
		val, exists, err := hllValue(v, key)
		if err != nil {
			return err
		}
		card, out, err := hll.PFCount(val, exists)
		r.Int, stale = int64(card), out != nil
		return hllErr(err)
	})
	if err != nil || !stale {
		return r, err
	}
	err = s.Update(ctx, key, func(old []byte, exp time.Time, found bool) ([]byte, time.Time, shard.Action, error) {
		card, out, err := hll.PFCount(old, found)
		if err != nil || out == nil {
			r.Int = int64(card)
			return nil, exp, shard.Keep, hllErr(err)
		}
		r.Int = int64(card)
		return out, exp, shard.Write, nil
	})
	return r, err
}

// hllValue reads key as a HyperLogLog's string: ErrWrongType for a
// collection, a nil value for a missing key.
func hllValue(v *shard.View, key []byte) ([]byte, bool, error) {
	it, err := v.Get(key)
	switch {
	case err != nil:
		return nil, false, err
	case !it.Exists:
		return nil, false, nil
	case it.Obj != nil:
		return nil, false, ErrWrongType
	case it.Value == nil:
		return []byte{}, true, nil // an empty string, not a missing key
	}
	return it.Value, true, nil
}

// hllUnion merges the HyperLogLogs at keys in order, as Redis does: each
// key's type and value is checked as it is merged, so the first bad key
// names the error. dest is the first key's value (nil when missing).
func hllUnion(v *shard.View, keys [][]byte) (regs *hll.RegisterSet, dense bool, dest []byte, err error) {
	regs = new(hll.RegisterSet)
	for i, k := range keys {
		val, _, err := hllValue(v, k)
		if err != nil {
			return nil, false, nil, err
		}
		d, err := regs.Union(val)
		if err != nil {
			return nil, false, nil, hllErr(err)
		}
		dense = dense || d
		if i == 0 {
			dest = val
		}
	}
	return regs, dense, dest, nil
}

func pfCountUnion(ctx context.Context, s *shard.Shard, keys [][]byte) (Response, error) {
	var r Response
	err := s.Read(ctx, func(v *shard.View) error {
		regs, _, _, err := hllUnion(v, keys)
		if err == nil {
			r.Int = int64(regs.Count())
		}
		return err
	})
	return r, err
}

func runPFMerge(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	if len(c.Dest) == 0 {
		return Response{}, fmt.Errorf("%w: empty destination key", ErrInvalid)
	}
	// Redis merges the destination first, as a source.
	keys := append([][]byte{c.Dest}, c.Keys...)
	_, s, err := e.oneGroup(x, c, keys...)
	if err != nil {
		return Response{}, err
	}
	err = s.Mutate(ctx, func(v *shard.View) ([]command.Command, error) {
		regs, dense, dest, err := hllUnion(v, keys)
		if err != nil {
			return nil, err
		}
		it, err := v.Get(c.Dest)
		if err != nil {
			return nil, err
		}
		out, err := hll.PFMerge(dest, dest != nil, regs, dense)
		if err != nil {
			return nil, hllErr(err)
		}
		return []command.Command{shard.StringSet(c.Dest, out, it.Expiry)}, nil
	})
	return Response{Applied: err == nil}, err
}

func runPFDebug(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	var r Response
	err := s.Update(ctx, c.Key, func(old []byte, exp time.Time, found bool) ([]byte, time.Time, shard.Action, error) {
		if !found {
			return nil, exp, shard.Keep, fmt.Errorf("%w: The specified key does not exist", ErrNoSuchKey)
		}
		h, err := hll.Parse(old)
		if err != nil {
			return nil, exp, shard.Keep, hllErr(err)
		}
		sparse := h.Encoding() == hll.Sparse
		switch sub := strings.ToLower(c.Aggregator); sub {
		case "getreg", "todense":
			if err := h.ToDense(); err != nil {
				return nil, exp, shard.Keep, hllErr(err)
			}
			if sub == "getreg" {
				regs := new(hll.RegisterSet)
				_ = h.Merge(regs) // a dense value always merges
				r.Ints = make([]int64, len(regs))
				for i, v := range regs {
					r.Ints[i] = int64(v)
				}
			}
			if sub == "todense" {
				r.Int = b2i(sparse)
			}
			if sparse {
				return h.Bytes(), exp, shard.Write, nil
			}
		case "encoding":
			r.Value = []byte("dense")
			if sparse {
				r.Value = []byte("sparse")
			}
		case "decode":
			d, ok := h.Decode()
			if !ok {
				return nil, exp, shard.Keep, fmt.Errorf("%w: HLL encoding is not sparse", ErrInvalid)
			}
			r.Value = []byte(d)
		default:
			return nil, exp, shard.Keep, fmt.Errorf("%w: Unknown PFDEBUG subcommand '%s'", ErrInvalid, c.Aggregator)
		}
		return nil, exp, shard.Keep, nil
	})
	return r, err
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// HyperLogLogSelfTest checks the HyperLogLog encodings against each other
// over random sets, as Redis's PFSELFTEST does; nil when they agree.
func HyperLogLogSelfTest() error { return hll.SelfTest() }
