package temporalstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// scored is a member and its score.
type scored struct {
	member string
	score  float64
}

// zsetsOf reads the sorted sets (or sets, scored 1) at keys from v; a
// missing key is nil.
func zsetsOf(v *shard.View, keys [][]byte) ([]map[string]float64, error) {
	out := make([]map[string]float64, len(keys))
	for i, k := range keys {
		it, err := v.Get(k)
		switch {
		case err != nil:
			return nil, err
		case !it.Exists:
			continue
		case it.Obj != nil && it.Obj.Kind == object.KindZSet:
			out[i] = it.Obj.ZSet.Members()
		case it.Obj != nil && it.Obj.Kind == object.KindSet:
			m := make(map[string]float64, len(it.Obj.Set))
			for s := range it.Obj.Set {
				m[s] = 1
			}
			out[i] = m
		default:
			return nil, ErrWrongType
		}
	}
	return out, nil
}

// checkZAlgebra checks the weights and the aggregator of c.
func checkZAlgebra(c *Command) error {
	if len(c.Keys) == 0 {
		return fmt.Errorf("%w: at least 1 input key is needed", ErrInvalid)
	}
	diff := c.Kind == KindZDiff || c.Kind == KindZDiffStore
	if c.Scores != nil && (diff || len(c.Scores) != len(c.Keys)) {
		return fmt.Errorf("%w: one weight per key, and none for ZDIFF", ErrInvalid)
	}
	switch strings.ToLower(c.Aggregator) {
	case "", "sum", "min", "max":
		if diff && c.Aggregator != "" {
			return fmt.Errorf("%w: ZDIFF takes no aggregator", ErrInvalid)
		}
		return nil
	}
	return fmt.Errorf("%w: unknown aggregator %q (sum, min, max)", ErrInvalid, c.Aggregator)
}

// combineZSets is the union, intersection or difference of sets, weighted
// and aggregated as Redis's zunionInterDiffGenericCommand does, sorted.
// Redis takes the union's and intersection's inputs from the smallest
// (ties in their order), and that order shows where a weighted score is
// not a number (inf × 0): an intersection's first score counts as 0 then,
// later ones are aggregated as they are (a NaN sum is 0; MIN and MAX keep
// what they had); every score of a union counts as 0.
func combineZSets(c *Command, sets []map[string]float64) []scored {
	type source struct {
		set    map[string]float64
		weight float64
	}
	srcs := make([]source, len(sets))
	for i, s := range sets {
		srcs[i] = source{s, 1}
		if c.Scores != nil {
			srcs[i].weight = c.Scores[i]
		}
	}
	noNaN := func(f float64) float64 {
		if math.IsNaN(f) {
			return 0
		}
		return f
	}
	aggregator := strings.ToLower(c.Aggregator)
	agg := func(acc, x float64) float64 {
		switch aggregator {
		case "min":
			if x < acc {
				return x
			}
			return acc
		case "max":
			if x > acc {
				return x
			}
			return acc
		}
		return noNaN(acc + x)
	}
	slices.SortStableFunc(srcs, func(a, b source) int { return cmp.Compare(len(a.set), len(b.set)) })
	out := map[string]float64{}
	switch c.Kind {
	case KindZUnion, KindZUnionStore:
		for _, src := range srcs {
			for m, sc := range src.set {
				w := noNaN(sc * src.weight)
				if acc, ok := out[m]; ok {
					out[m] = agg(acc, w)
				} else {
					out[m] = w
				}
			}
		}
	case KindZInter, KindZInterStore:
		if len(srcs) == 0 || len(srcs[0].set) == 0 {
			break
		}
	members:
		for m, sc := range srcs[0].set {
			acc := noNaN(sc * srcs[0].weight)
			for _, src := range srcs[1:] {
				x, ok := src.set[m]
				if !ok {
					continue members
				}
				acc = agg(acc, x*src.weight)
			}
			out[m] = acc
		}
	case KindZDiff, KindZDiffStore:
	diff:
		for m, sc := range sets[0] {
			for _, s := range sets[1:] {
				if _, ok := s[m]; ok {
					continue diff
				}
			}
			out[m] = sc
		}
	}
	res := make([]scored, 0, len(out))
	for m, sc := range out {
		res = append(res, scored{m, sc})
	}
	slices.SortFunc(res, func(a, b scored) int {
		return cmp.Or(cmp.Compare(a.score, b.score), strings.Compare(a.member, b.member))
	})
	return res
}

// runZAlgebra serves KindZUnion, KindZInter and KindZDiff: each key read
// on its shard, as SUNION's are.
func runZAlgebra(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	if err := checkZAlgebra(c); err != nil {
		return Response{}, err
	}
	t, _, err := e.byShard(c, c.Keys)
	if err != nil {
		return Response{}, err
	}
	sets := make([]map[string]float64, len(c.Keys))
	for i, k := range c.Keys {
		err := x.shard(t, t.opts.KeyShard(k)).Read(ctx, func(v *shard.View) error {
			s, err := zsetsOf(v, [][]byte{k})
			if err == nil && s[0] != nil {
				sets[i] = maps.Clone(s[0]) // the view's own map, not to be kept
			}
			return err
		})
		if err != nil {
			return Response{}, err
		}
	}
	r := Response{Values: [][]byte{}, Scores: []float64{}}
	for _, m := range combineZSets(c, sets) {
		r.Values = append(r.Values, []byte(m.member))
		r.Scores = append(r.Scores, m.score)
	}
	return r, nil
}

// storeZ returns the commands that make dest the sorted set of members.
func storeZ(dest []byte, members []scored) []command.Command {
	cmds := []command.Command{{Op: shard.OpDelete, Key: dest}}
	if len(members) == 0 {
		return cmds
	}
	args := make([][]byte, 0, 2*len(members))
	for _, m := range members {
		args = append(args, []byte(m.member), shard.EncodeScore(m.score))
	}
	return append(cmds, command.Command{Op: shard.OpZAdd, Key: dest, Args: args})
}

func runZAlgebraStore(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	if err := checkZAlgebra(c); err != nil {
		return Response{}, err
	}
	_, s, err := e.oneGroup(x, c, append([][]byte{c.Dest}, c.Keys...)...)
	if err != nil {
		return Response{}, err
	}
	var r Response
	err = s.Mutate(ctx, func(v *shard.View) ([]command.Command, error) {
		sets, err := zsetsOf(v, c.Keys)
		if err != nil {
			return nil, err
		}
		res := combineZSets(c, sets)
		r.Int = int64(len(res))
		return storeZ(c.Dest, res), nil
	})
	return r, err
}

func runZRangeStore(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	if err := checkRange(&c.Range); err != nil {
		return Response{}, err
	}
	if c.Range.WithScores {
		return Response{}, fmt.Errorf("%w: ZRANGESTORE takes no WITHSCORES", ErrInvalid)
	}
	var r Response
	err := s.Mutate(ctx, func(v *shard.View) ([]command.Command, error) {
		o, err := objOf(v, c.Key, object.KindZSet)
		if err != nil {
			return nil, err
		}
		var res []scored
		if o != nil {
			walkRange(&c.Range, o.ZSet, func(m string, sc float64) { res = append(res, scored{m, sc}) })
		}
		r.Int = int64(len(res))
		return storeZ(c.Dest, res), nil
	})
	return r, err
}
