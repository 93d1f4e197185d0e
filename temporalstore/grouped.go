package temporalstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// oneGroup returns the table and the shard holding keys, which must share
// a key group, with the command admitted on it.
func (e *Engine) oneGroup(x *scope, c *Command, keys ...[]byte) (*table, *shard.Shard, error) {
	t, err := e.table(c)
	if err != nil {
		return nil, nil, err
	}
	g := -1
	for _, k := range keys {
		if len(k) == 0 {
			return nil, nil, fmt.Errorf("%w: empty key", ErrInvalid)
		}
		kg := t.opts.KeyGroup(k)
		if g >= 0 && kg != g {
			return nil, nil, ErrCrossShard
		}
		g = kg
	}
	sh := t.opts.KeyShard(keys[0])
	if err := e.admit(t, sh, c); err != nil {
		return nil, nil, err
	}
	return t, x.shard(t, sh), nil
}

func runSMove(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	if len(c.Args) != 1 {
		return Response{}, fmt.Errorf("%w: SMOVE takes one member", ErrInvalid)
	}
	member := c.Args[0]
	var r Response
	err := s.Mutate(ctx, func(v *shard.View) ([]command.Command, error) {
		// Redis's order: an absent source is 0; then both types are
		// checked, even when the member is not there to move.
		src, err := objOf(v, c.Key, object.KindSet)
		if err != nil || src == nil {
			return nil, err
		}
		if _, err := objOf(v, c.Dest, object.KindSet); err != nil {
			return nil, err
		}
		if _, ok := src.Set[string(member)]; !ok {
			return nil, nil
		}
		r.Int = 1
		if string(c.Key) == string(c.Dest) {
			return nil, nil
		}
		return []command.Command{
			{Op: shard.OpSRem, Key: c.Key, Args: [][]byte{member}},
			{Op: shard.OpSAdd, Key: c.Dest, Args: [][]byte{member}},
		}, nil
	})
	return r, err
}

func runSetStore(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	if len(c.Keys) == 0 {
		return Response{}, fmt.Errorf("%w: no keys", ErrInvalid)
	}
	_, s, err := e.oneGroup(x, c, append([][]byte{c.Dest}, c.Keys...)...)
	if err != nil {
		return Response{}, err
	}
	var r Response
	err = s.Mutate(ctx, func(v *shard.View) ([]command.Command, error) {
		sets := make([]map[string]struct{}, len(c.Keys))
		for i, k := range c.Keys {
			o, err := objOf(v, k, object.KindSet)
			if err != nil {
				return nil, err
			}
			if o != nil {
				sets[i] = o.Set
			}
		}
		out := combineSets(c.Kind, sets)
		r.Int = int64(len(out))
		cmds := []command.Command{{Op: shard.OpDelete, Key: c.Dest}}
		if len(out) > 0 {
			members := make([][]byte, 0, len(out))
			for _, m := range slices.Sorted(maps.Keys(out)) {
				members = append(members, []byte(m))
			}
			cmds = append(cmds, command.Command{Op: shard.OpSAdd, Key: c.Dest, Args: members})
		}
		return cmds, nil
	})
	return r, err
}

// combineSets is the intersection, union or difference (by kind, plain or
// STORE) of sets, a nil one empty.
func combineSets(kind Kind, sets []map[string]struct{}) map[string]struct{} {
	out := map[string]struct{}{}
	switch kind {
	case KindSUnion, KindSUnionStore:
		for _, s := range sets {
			for m := range s {
				out[m] = struct{}{}
			}
		}
	case KindSInter, KindSInterStore:
	members:
		for m := range sets[0] {
			for _, s := range sets[1:] {
				if _, ok := s[m]; !ok {
					continue members
				}
			}
			out[m] = struct{}{}
		}
	case KindSDiff, KindSDiffStore:
	diff:
		for m := range sets[0] {
			for _, s := range sets[1:] {
				if _, ok := s[m]; ok {
					continue diff
				}
			}
			out[m] = struct{}{}
		}
	}
	return out
}

func runMSetNX(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	if len(c.Args) != len(c.Keys) || len(c.Keys) == 0 {
		return Response{}, fmt.Errorf("%w: %d keys and %d values", ErrInvalid, len(c.Keys), len(c.Args))
	}
	t, s, err := e.oneGroup(x, c, c.Keys...)
	if err != nil {
		return Response{}, err
	}
	var r Response
	err = s.Mutate(ctx, func(v *shard.View) ([]command.Command, error) {
		for _, k := range c.Keys {
			it, err := v.Get(k)
			if err != nil {
				return nil, err
			}
			if it.Exists {
				return nil, nil
			}
		}
		var exp time.Time
		if t.opts.DefaultTTL > 0 {
			exp = v.Now().Add(t.opts.DefaultTTL)
		}
		r.Int = 1
		cmds := make([]command.Command, len(c.Keys))
		for i, k := range c.Keys {
			cmds[i] = shard.StringSet(k, c.Args[i], exp)
		}
		return cmds, nil
	})
	return r, err
}
