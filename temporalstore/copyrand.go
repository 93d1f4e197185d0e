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

func runCopy(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	if string(c.Key) == string(c.Dest) {
		return Response{}, fmt.Errorf("%w: source and destination objects are the same", ErrInvalid)
	}
	var r Response
	err := s.Mutate(ctx, func(v *shard.View) ([]command.Command, error) {
		src, err := v.Get(c.Key)
		if err != nil || !src.Exists {
			return nil, err
		}
		dst, err := v.Get(c.Dest)
		if err != nil || dst.Exists && !c.Replace {
			return nil, err
		}
		cmds, err := copyCommands(c.Dest, src)
		if err != nil {
			return nil, err
		}
		r.Int = 1
		return append([]command.Command{{Op: shard.OpDelete, Key: c.Dest}}, cmds...), nil
	})
	return r, err
}

// copyCommands are the commands that make key a copy of it.
func copyCommands(key []byte, it shard.Item) ([]command.Command, error) {
	if it.Obj == nil {
		return []command.Command{shard.StringSet(key, it.Value, it.Expiry)}, nil
	}
	o := it.Obj
	var c command.Command
	switch o.Kind {
	case object.KindHash:
		c = command.Command{Op: shard.OpHSet, Key: key}
		for _, f := range slices.Sorted(maps.Keys(o.Hash)) {
			c.Args = append(c.Args, []byte(f), o.Hash[f])
		}
	case object.KindSet:
		c = command.Command{Op: shard.OpSAdd, Key: key}
		for _, m := range slices.Sorted(maps.Keys(o.Set)) {
			c.Args = append(c.Args, []byte(m))
		}
	case object.KindZSet:
		c = command.Command{Op: shard.OpZAdd, Key: key}
		o.ZSet.All(func(m string, sc float64) bool {
			c.Args = append(c.Args, []byte(m), shard.EncodeScore(sc))
			return true
		})
	case object.KindList:
		c = command.Command{Op: shard.OpRPush, Key: key}
		for i := range o.List.Len() {
			c.Args = append(c.Args, o.List.Index(i))
		}
	default:
		return nil, fmt.Errorf("%w: COPY of a %s is not supported", ErrInvalid, o.Kind)
	}
	cmds := []command.Command{c}
	if !it.Expiry.IsZero() {
		cmds = append(cmds, command.Command{Op: shard.OpExpireAt, Key: key, Expiry: it.Expiry.UnixMilli()})
	}
	return cmds, nil
}

// pickRandom is the random read of SRANDMEMBER, HRANDFIELD and
// ZRANDMEMBER over names: without a count one name in Value (none when
// names is empty); with a count up to Count distinct ones, or -Count
// possibly repeated ones when Count is negative, in Values, with (when
// set) appending what goes with each after it.
func pickRandom(c *Command, names []string, r *Response, with func(i int)) {
	n := len(names)
	if !c.HasCount {
		if n > 0 {
			r.Value, r.Found = []byte(names[rand.IntN(n)]), true
		}
		return
	}
	var picks []int
	if c.Count >= 0 {
		picks = rand.Perm(n)[:min(n, c.Count)]
	} else {
		for i := 0; i < -c.Count && n > 0; i++ {
			picks = append(picks, rand.IntN(n))
		}
	}
	r.Values = [][]byte{}
	for _, i := range picks {
		r.Values = append(r.Values, []byte(names[i]))
		if with != nil {
			with(i)
		}
	}
}

func checkRandCount(c *Command) error {
	// A huge negative count asks for that many picks, repeats allowed,
	// which no memory holds: refused beyond 2^31 (Redis tries). A huge
	// positive count is the whole collection.
	if c.HasCount && c.Count < -(1<<31) {
		return fmt.Errorf("%w: value is out of range", ErrInvalid)
	}
	return nil
}

func runHRandField(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	if err := checkRandCount(c); err != nil {
		return Response{}, err
	}
	var r Response
	err := readObj(ctx, s, c.Key, object.KindHash, func(o *object.Object, _ *shard.View) error {
		var fields []string
		if o != nil {
			fields = slices.Sorted(maps.Keys(o.Hash))
		}
		pickRandom(c, fields, &r, func(i int) {
			if c.WithValues {
				r.Values = append(r.Values, cp(o.Hash[fields[i]]))
			}
		})
		return nil
	})
	return r, err
}

func runZRandMember(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	if err := checkRandCount(c); err != nil {
		return Response{}, err
	}
	var r Response
	err := readObj(ctx, s, c.Key, object.KindZSet, func(o *object.Object, _ *shard.View) error {
		var members []string
		var scores []float64
		if o != nil {
			o.ZSet.All(func(m string, sc float64) bool {
				members, scores = append(members, m), append(scores, sc)
				return true
			})
		}
		pickRandom(c, members, &r, func(i int) {
			if c.WithValues {
				r.Scores = append(r.Scores, scores[i])
			}
		})
		return nil
	})
	return r, err
}
