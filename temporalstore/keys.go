package temporalstore

import (
	"context"
	"fmt"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

var keyKinds = map[Kind]runner{
	KindCopy:       runCopy,
	KindSet:        runSet,
	KindDelete:     runDelete,
	KindExists:     runExists,
	KindType:       runType,
	KindPTTL:       runPTTL,
	KindExpireTime: runExpireTime,
	KindExpire:     runExpire,
	KindPersist:    runPersist,
	KindGetEx:      runGetEx,
	KindRename:     runRename,
}

// multiRunner runs a kind over several keys (or none), finding their
// shards itself through x.
type multiRunner func(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error)

var multiKinds = map[Kind]multiRunner{
	KindExistsKeys:  runExistsKeys,
	KindDeleteKeys:  runDeleteKeys,
	KindMGet:        runMGet,
	KindMSet:        runMSet,
	KindSInter:      runSetAlgebra,
	KindSUnion:      runSetAlgebra,
	KindSDiff:       runSetAlgebra,
	KindSInterStore: runSetStore,
	KindSUnionStore: runSetStore,
	KindSDiffStore:  runSetStore,
	KindMSetNX:      runMSetNX,
	KindBitOp:       runBitOp,
	KindPFCount:     runPFCount,
	KindPFMerge:     runPFMerge,
	KindZUnion:      runZAlgebra,
	KindZInter:      runZAlgebra,
	KindZDiff:       runZAlgebra,
	KindZUnionStore: runZAlgebraStore,
	KindZInterStore: runZAlgebraStore,
	KindZDiffStore:  runZAlgebraStore,

	KindRowWriteBatch: runRowWriteBatch,
	KindRowReadBatch:  runRowReadBatch,
	KindSeqBatchQuery: runSeqBatchQuery,
	KindCManager:      runCManager,
}

// item reads key's state.
func item(ctx context.Context, s *shard.Shard, key []byte) (shard.Item, error) {
	var it shard.Item
	err := s.Read(ctx, func(v *shard.View) error {
		var err error
		it, err = v.Get(key)
		if it.Obj != nil {
			// The object may change once the lock is released: callers
			// of item only look at its type and expiry.
			it.Obj = &object.Object{Kind: it.Obj.Kind, Expiry: it.Obj.Expiry}
		}
		return err
	})
	return it, err
}

func runExists(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	it, err := item(ctx, s, c.Key)
	if it.Exists {
		return Response{Int: 1}, err
	}
	return Response{}, err
}

func runType(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	it, err := item(ctx, s, c.Key)
	switch {
	case err != nil:
		return Response{}, err
	case !it.Exists:
		return Response{Value: []byte("none")}, nil
	case it.Obj == nil:
		return Response{Value: []byte("string")}, nil
	}
	return Response{Value: []byte(it.Obj.Kind.String())}, nil
}

func runPTTL(ctx context.Context, e *Engine, s *shard.Shard, c *Command) (Response, error) {
	it, err := item(ctx, s, c.Key)
	switch {
	case err != nil:
		return Response{}, err
	case !it.Exists:
		return Response{Int: -2}, nil
	case it.Expiry.IsZero():
		return Response{Int: -1}, nil
	}
	// In milliseconds, not a time.Duration, which saturates at 292 years.
	return Response{Int: max(0, it.Expiry.UnixMilli()-e.opts.Now().UnixMilli())}, nil
}

func runExpireTime(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	it, err := item(ctx, s, c.Key)
	switch {
	case err != nil:
		return Response{}, err
	case !it.Exists:
		return Response{Int: -2}, nil
	case it.Expiry.IsZero():
		return Response{Int: -1}, nil
	}
	return Response{Int: it.Expiry.UnixMilli()}, nil
}

// setExpiry is the command that gives key (in state it) a new expiry
// (zero: none): a string is rewritten with it, a collection's is set.
func setExpiry(key []byte, it shard.Item, exp time.Time) command.Command {
	if it.Obj == nil {
		return shard.StringSet(key, it.Value, exp)
	}
	c := command.Command{Op: shard.OpExpireAt, Key: key}
	if !exp.IsZero() {
		c.Expiry = exp.UnixMilli()
	}
	return c
}

// expiryOf is the absolute expiry c asks for: ExpireAt, or now plus TTL.
func expiryOf(c *Command, now time.Time) time.Time {
	if !c.ExpireAt.IsZero() {
		return c.ExpireAt
	}
	return now.Add(c.TTL)
}

func runExpire(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	var r Response
	err := s.MutateKey(ctx, c.Key, func(v *shard.View) ([]command.Command, error) {
		it, err := v.Get(c.Key)
		if err != nil || !it.Exists {
			return nil, err
		}
		exp := expiryOf(c, v.Now())
		if !expiryAllowed(c.ExpireCond, it.Expiry, exp) {
			return nil, nil
		}
		r.Int = 1
		if !exp.After(v.Now()) {
			return []command.Command{{Op: shard.OpDelete, Key: c.Key}}, nil
		}
		return []command.Command{setExpiry(c.Key, it, exp)}, nil
	})
	return r, err
}

func runPersist(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	var r Response
	err := s.MutateKey(ctx, c.Key, func(v *shard.View) ([]command.Command, error) {
		it, err := v.Get(c.Key)
		if err != nil || !it.Exists || it.Expiry.IsZero() {
			return nil, err
		}
		r.Int = 1
		return []command.Command{setExpiry(c.Key, it, time.Time{})}, nil
	})
	return r, err
}

func runGetEx(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	if c.Persist && (c.TTL != 0 || !c.ExpireAt.IsZero()) {
		return Response{}, fmt.Errorf("%w: PERSIST with an expiry", ErrInvalid)
	}
	var r Response
	err := s.MutateKey(ctx, c.Key, func(v *shard.View) ([]command.Command, error) {
		it, err := v.Get(c.Key)
		switch {
		case err != nil || !it.Exists:
			return nil, err
		case it.Obj != nil:
			return nil, ErrWrongType
		}
		r.Value, r.Found = cp(it.Value), true
		switch {
		case c.Persist && !it.Expiry.IsZero():
			return []command.Command{shard.StringSet(c.Key, it.Value, time.Time{})}, nil
		case c.TTL != 0 || !c.ExpireAt.IsZero():
			exp := expiryOf(c, v.Now())
			if !exp.After(v.Now()) {
				return []command.Command{{Op: shard.OpDelete, Key: c.Key}}, nil
			}
			return []command.Command{shard.StringSet(c.Key, it.Value, exp)}, nil
		}
		return nil, nil
	})
	return r, err
}

func runRename(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	if c.Dest == nil {
		return Response{}, fmt.Errorf("%w: RENAME needs a destination", ErrInvalid)
	}
	nx := c.Cond == IfAbsent
	var r Response
	err := s.Mutate(ctx, func(v *shard.View) ([]command.Command, error) {
		it, err := v.Get(c.Key)
		switch {
		case err != nil:
			return nil, err
		case !it.Exists:
			return nil, ErrNoSuchKey
		case string(c.Key) == string(c.Dest):
			r.Applied = !nx // RENAMENX of a key onto itself renames nothing
			return nil, nil
		}
		if nx {
			if dst, err := v.Get(c.Dest); err != nil || dst.Exists {
				return nil, err
			}
		}
		r.Applied = true
		if it.Obj != nil {
			return []command.Command{{Op: shard.OpRename, Key: c.Key, Args: [][]byte{c.Dest}}}, nil
		}
		return []command.Command{
			shard.StringSet(c.Dest, it.Value, it.Expiry),
			{Op: shard.OpDelete, Key: c.Key},
		}, nil
	})
	return r, err
}

// setDeadline is when a SET with c's TTL or ExpireAt expires (zero:
// never).
func setDeadline(e *Engine, c *Command) time.Time {
	if !c.ExpireAt.IsZero() {
		return c.ExpireAt
	}
	if c.TTL > 0 {
		return e.opts.Now().Add(c.TTL)
	}
	return time.Time{}
}

func runSet(ctx context.Context, e *Engine, s *shard.Shard, c *Command) (Response, error) {
	// An ExpireAt in the past deletes the key, as Redis's SET with EXAT
	// or PXAT in the past leaves none.
	exp := setDeadline(e, c)
	gone := !c.ExpireAt.IsZero() && !exp.After(e.opts.Now())
	if c.Cond == Always && !c.ReturnOld && !c.KeepTTL {
		// The common SET needs no read: a plain append.
		if gone {
			return Response{Applied: true}, s.Delete(ctx, c.Key)
		}
		return Response{Applied: true}, s.Set(ctx, c.Key, c.Value, exp)
	}
	var r Response
	err := s.MutateKey(ctx, c.Key, func(v *shard.View) ([]command.Command, error) {
		it, err := v.Get(c.Key)
		if err != nil {
			return nil, err
		}
		if c.ReturnOld {
			if it.Obj != nil {
				return nil, ErrWrongType
			}
			r.Value, r.Found = cp(it.Value), it.Exists
		}
		if (c.Cond == IfAbsent && it.Exists) || (c.Cond == IfPresent && !it.Exists) {
			return nil, nil
		}
		r.Applied = true
		switch {
		case gone:
			return []command.Command{{Op: shard.OpDelete, Key: c.Key}}, nil
		case c.KeepTTL:
			exp = it.Expiry
		}
		return []command.Command{shard.StringSet(c.Key, c.Value, exp)}, nil
	})
	return r, err
}

func runDelete(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	var r Response
	err := s.MutateKey(ctx, c.Key, func(v *shard.View) ([]command.Command, error) {
		it, err := v.Get(c.Key)
		if err != nil || !it.Exists {
			return nil, err
		}
		r.Int = 1
		return []command.Command{{Op: shard.OpDelete, Key: c.Key}}, nil
	})
	return r, err
}

// byShard groups the positions of keys by shard, after checking the keys
// and admitting the command on each shard it touches.
func (e *Engine) byShard(c *Command, keys [][]byte) (*table, map[int][]int, error) {
	if len(keys) == 0 {
		return nil, nil, fmt.Errorf("%w: no keys", ErrInvalid)
	}
	t, err := e.table(c)
	if err != nil {
		return nil, nil, err
	}
	groups := map[int][]int{}
	for i, k := range keys {
		if len(k) == 0 {
			return nil, nil, fmt.Errorf("%w: empty key", ErrInvalid)
		}
		sh := t.opts.KeyShard(k)
		groups[sh] = append(groups[sh], i)
	}
	for sh := range groups {
		if err := e.admit(t, sh, c); err != nil {
			return nil, nil, err
		}
	}
	return t, groups, nil
}

func runExistsKeys(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	t, groups, err := e.byShard(c, c.Keys)
	if err != nil {
		return Response{}, err
	}
	var r Response
	for sh, idx := range groups {
		err := x.shard(t, sh).Read(ctx, func(v *shard.View) error {
			for _, i := range idx {
				it, err := v.Get(c.Keys[i])
				if err != nil {
					return err
				}
				if it.Exists {
					r.Int++
				}
			}
			return nil
		})
		if err != nil {
			return Response{}, err
		}
	}
	return r, nil
}

func runDeleteKeys(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	t, groups, err := e.byShard(c, c.Keys)
	if err != nil {
		return Response{}, err
	}
	var r Response
	deleted := make([]bool, len(c.Keys))
	for sh, idx := range groups {
		err := x.shard(t, sh).Mutate(ctx, func(v *shard.View) ([]command.Command, error) {
			var cmds []command.Command
			seen := map[string]bool{}
			for _, i := range idx {
				k := c.Keys[i]
				if seen[string(k)] {
					continue
				}
				seen[string(k)] = true
				it, err := v.Get(k)
				if err != nil {
					return nil, err
				}
				if it.Exists {
					cmds = append(cmds, command.Command{Op: shard.OpDelete, Key: k})
					deleted[i] = true
				}
			}
			r.Int += int64(len(cmds))
			return cmds, nil
		})
		if err != nil {
			return r, err
		}
	}
	// Write hooks see a multi-key delete key by key, each key deleted as
	// a KindDelete, in the order given (Redis publishes a del for each).
	if e.writes.hooked() {
		for i, d := range deleted {
			if d {
				e.wrote(ctx, x, &Command{Namespace: c.Namespace, Table: c.Table, Kind: KindDelete, Key: c.Keys[i]}, Response{Int: 1})
			}
		}
	}
	return r, nil
}

func runMGet(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	t, groups, err := e.byShard(c, c.Keys)
	if err != nil {
		return Response{}, err
	}
	r := Response{Values: make([][]byte, len(c.Keys))}
	// Each shard's keys are read under one hold of its lock, their
	// lookups' misses overlapping (shard.AppendStrings); the values share
	// one buffer, which the Response keeps.
	vals := make([]byte, 0, 64*len(c.Keys))
	keys := make([][]byte, 0, len(c.Keys))
	reads, coll := make([]shard.StringRead, len(c.Keys)), make([]bool, len(c.Keys))
	for sh, idx := range groups {
		keys = keys[:0]
		for _, i := range idx {
			keys = append(keys, c.Keys[i])
		}
		vals = x.shard(t, sh).AppendStrings(ctx, vals, keys, reads, coll)
		for j, i := range idx {
			g := reads[j]
			if g.Err != nil {
				return Response{}, engineErr(g.Err)
			}
			if g.Found && !coll[j] { // MGET answers nil for a collection
				r.Values[i] = vals[g.Start:g.End:g.End]
			}
		}
	}
	return r, nil
}

func runMSet(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	if len(c.Args) != len(c.Keys) {
		return Response{}, fmt.Errorf("%w: %d keys and %d values", ErrInvalid, len(c.Keys), len(c.Args))
	}
	t, groups, err := e.byShard(c, c.Keys)
	if err != nil {
		return Response{}, err
	}
	for sh, idx := range groups {
		err := x.shard(t, sh).Mutate(ctx, func(v *shard.View) ([]command.Command, error) {
			var exp time.Time
			if t.opts.DefaultTTL > 0 {
				exp = v.Now().Add(t.opts.DefaultTTL)
			}
			cmds := make([]command.Command, len(idx))
			for j, i := range idx {
				cmds[j] = shard.StringSet(c.Keys[i], c.Args[i], exp)
			}
			return cmds, nil
		})
		if err != nil {
			return Response{}, err
		}
	}
	return Response{Applied: true}, nil
}
