package temporalstore

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

var setKinds = map[Kind]runner{
	KindSMove: runSMove,
	KindSAdd: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := needArgs(c, 1, 1); err != nil {
			return Response{}, err
		}
		var r Response
		err := writeObj(ctx, s, c.Key, object.KindSet, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			var add [][]byte
			seen := map[string]bool{}
			for _, m := range c.Args {
				if seen[string(m)] {
					continue
				}
				seen[string(m)] = true
				if o != nil {
					if _, ok := o.Set[string(m)]; ok {
						continue
					}
				}
				add = append(add, m)
			}
			r.Int = int64(len(add))
			if len(add) == 0 {
				return nil, nil
			}
			return []command.Command{{Op: shard.OpSAdd, Key: c.Key, Args: add}}, nil
		})
		return r, err
	},
	KindSRem: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := needArgs(c, 1, 1); err != nil {
			return Response{}, err
		}
		var r Response
		err := writeObj(ctx, s, c.Key, object.KindSet, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			if o == nil {
				return nil, nil
			}
			var rem [][]byte
			seen := map[string]bool{}
			for _, m := range c.Args {
				if _, ok := o.Set[string(m)]; ok && !seen[string(m)] {
					seen[string(m)] = true
					rem = append(rem, m)
				}
			}
			r.Int = int64(len(rem))
			if len(rem) == 0 {
				return nil, nil
			}
			return []command.Command{{Op: shard.OpSRem, Key: c.Key, Args: rem}}, nil
		})
		return r, err
	},
	KindSMembers: setRead(0, func(o *object.Object, _ *Command, r *Response) {
		r.Values = toBytes(sortedMembers(o))
	}),
	KindSIsMember: setRead(1, func(o *object.Object, c *Command, r *Response) {
		if isMember(o, c.Args[0]) {
			r.Int = 1
		}
	}),
	KindSMIsMember: setRead(1, func(o *object.Object, c *Command, r *Response) {
		r.Ints = make([]int64, len(c.Args))
		for i, m := range c.Args {
			if isMember(o, m) {
				r.Ints[i] = 1
			}
		}
	}),
	KindSCard: setRead(0, func(o *object.Object, _ *Command, r *Response) {
		if o != nil {
			r.Int = int64(len(o.Set))
		}
	}),
	KindSPop: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if c.HasCount && c.Count < 0 {
			return Response{}, fmt.Errorf("%w: value is out of range, must be positive", ErrInvalid)
		}
		var r Response
		if c.HasCount {
			r.Values = [][]byte{}
		}
		err := writeObj(ctx, s, c.Key, object.KindSet, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			if o == nil {
				return nil, nil
			}
			n := 1
			if c.HasCount {
				n = c.Count
			}
			pick := sample(sortedMembers(o), n)
			if len(pick) == 0 {
				return nil, nil
			}
			if c.HasCount {
				r.Values = toBytes(pick)
			} else {
				r.Value, r.Found = []byte(pick[0]), true
			}
			// The log holds the members chosen, not the draw: replay
			// removes the same ones.
			return []command.Command{{Op: shard.OpSRem, Key: c.Key, Args: toBytes(pick)}}, nil
		})
		return r, err
	},
	KindSRandMember: func(ctx context.Context, e *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := checkRandCount(c); err != nil {
			return Response{}, err
		}
		return setRead(0, func(o *object.Object, c *Command, r *Response) {
			pickRandom(c, sortedMembers(o), r, nil)
		})(ctx, e, s, c)
	},
	KindSScan: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		count, err := scanCount(c)
		if err != nil {
			return Response{}, err
		}
		var r Response
		err = readObj(ctx, s, c.Key, object.KindSet, func(o *object.Object, _ *shard.View) error {
			page, next := scanPage(sortedMembers(o), c.Cursor, count)
			r.Values, r.Cursor = toBytes(page), next
			return nil
		})
		return r, err
	},
}

func setRead(n int, fn func(o *object.Object, c *Command, r *Response)) runner {
	return func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := needArgs(c, n, 1); err != nil {
			return Response{}, err
		}
		var r Response
		err := readObj(ctx, s, c.Key, object.KindSet, func(o *object.Object, _ *shard.View) error {
			fn(o, c, &r)
			return nil
		})
		return r, err
	}
}

func isMember(o *object.Object, m []byte) bool {
	if o == nil {
		return false
	}
	_, ok := o.Set[string(m)]
	return ok
}

func sortedMembers(o *object.Object) []string {
	if o == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(o.Set))
}

// sample returns up to n distinct elements of ms, chosen uniformly.
func sample(ms []string, n int) []string {
	if n >= len(ms) {
		return slices.Clone(ms)
	}
	ms = slices.Clone(ms)
	for i := range n {
		j := i + rand.IntN(len(ms)-i)
		ms[i], ms[j] = ms[j], ms[i]
	}
	return ms[:n]
}

func toBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// runSetAlgebra is SINTER, SUNION and SDIFF over sets that may sit on
// several shards; each set is read under its shard's lock.
func runSetAlgebra(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	// byShard checks the keys and admits the command on every shard read.
	t, _, err := e.byShard(c, c.Keys)
	if err != nil {
		return Response{}, err
	}
	sets := make([]map[string]struct{}, len(c.Keys))
	for i, k := range c.Keys {
		err := readObj(ctx, x.shard(t, t.opts.KeyShard(k)), k, object.KindSet, func(o *object.Object, _ *shard.View) error {
			sets[i] = map[string]struct{}{}
			if o != nil {
				for m := range o.Set {
					sets[i][m] = struct{}{}
				}
			}
			return nil
		})
		if err != nil {
			return Response{}, err
		}
	}
	out := combineSets(c.Kind, sets)
	return Response{Values: toBytes(slices.Sorted(maps.Keys(out)))}, nil
}
