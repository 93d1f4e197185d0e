package temporalstore

import (
	"context"
	"fmt"
	"math"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// rangeRanks resolves a range's bounds to ascending ranks lo..hi (empty when
// lo > hi).
func rangeRanks(rg *ZRange, z *object.ZSet) (lo, hi int) {
	n := z.Len()
	switch rg.By {
	case ByScore:
		lo = z.CountBelow(rg.Min.Value, rg.Min.Excl)
		hi = z.CountBelow(rg.Max.Value, !rg.Max.Excl) - 1
	case ByLex:
		lo = lexRank(z, rg.LexMin, true)
		hi = lexRank(z, rg.LexMax, false)
	default:
		start, stop := rg.Start, rg.Stop
		if start < 0 {
			start += int64(n)
		}
		if stop < 0 {
			stop += int64(n)
		}
		start = max(start, 0)
		stop = min(stop, int64(n)-1)
		if start > stop {
			return 0, -1
		}
		lo, hi = int(start), int(stop)
		if rg.Rev {
			lo, hi = n-1-hi, n-1-lo
		}
	}
	return lo, hi
}

// lexRank is where a lex bound puts the range's first rank (low) or last
// rank (high end).
func lexRank(z *object.ZSet, b LexBound, low bool) int {
	switch {
	case b.Inf < 0:
		if low {
			return 0
		}
		return -1
	case b.Inf > 0:
		if low {
			return z.Len()
		}
		return z.Len() - 1
	case low:
		return z.CountBelowLex(string(b.Value), b.Excl)
	}
	return z.CountBelowLex(string(b.Value), !b.Excl) - 1
}

// walkRange calls fn for the members rg selects, in its order, after LIMIT.
func walkRange(rg *ZRange, z *object.ZSet, fn func(m string, s float64)) {
	lo, hi := rangeRanks(rg, z)
	if lo > hi {
		return
	}
	if rg.HasLimit {
		if rg.Offset < 0 {
			return
		}
		if rg.Rev {
			hi -= int(min(rg.Offset, int64(hi-lo+1)))
		} else {
			lo += int(min(rg.Offset, int64(hi-lo+1)))
		}
	}
	left := int64(-1)
	if rg.HasLimit && rg.Limit >= 0 {
		left = rg.Limit
	}
	z.Range(lo, hi, rg.Rev, func(m string, s float64) bool {
		if left == 0 {
			return false
		}
		left--
		fn(m, s)
		return true
	})
}

func checkRange(rg *ZRange) error {
	if rg.HasLimit && rg.By == ByRank {
		return fmt.Errorf("%w: syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX", ErrInvalid)
	}
	return nil
}

var zsetKinds = map[Kind]runner{
	KindZRandMember: runZRandMember,
	KindZRangeStore: runZRangeStore,
	KindZAdd:        runZAdd,
	KindZRange: zsetRead(0, func(o *object.Object, c *Command, r *Response) error {
		if err := checkRange(&c.Range); err != nil {
			return err
		}
		r.Values = [][]byte{}
		if o == nil {
			return nil
		}
		walkRange(&c.Range, o.ZSet, func(m string, s float64) {
			r.Values = append(r.Values, []byte(m))
			if c.Range.WithScores {
				r.Scores = append(r.Scores, s)
			}
		})
		return nil
	}),
	KindZCount: zsetRead(0, func(o *object.Object, c *Command, r *Response) error {
		if c.Range.By == ByRank {
			return fmt.Errorf("%w: ZCOUNT takes score or lex bounds", ErrInvalid)
		}
		if o != nil {
			lo, hi := rangeRanks(&c.Range, o.ZSet)
			r.Int = int64(max(hi-lo+1, 0))
		}
		return nil
	}),
	KindZRemRange: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := checkRange(&c.Range); err != nil {
			return Response{}, err
		}
		var r Response
		err := writeObj(ctx, s, c.Key, object.KindZSet, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			if o == nil {
				return nil, nil
			}
			rg := c.Range
			rg.Rev, rg.WithScores = false, false
			var rem [][]byte
			walkRange(&rg, o.ZSet, func(m string, _ float64) { rem = append(rem, []byte(m)) })
			r.Int = int64(len(rem))
			if len(rem) == 0 {
				return nil, nil
			}
			return []command.Command{{Op: shard.OpZRem, Key: c.Key, Args: rem}}, nil
		})
		return r, err
	},
	KindZRank:    zsetRank(false),
	KindZRevRank: zsetRank(true),
	KindZScore: zsetRead(1, func(o *object.Object, c *Command, r *Response) error {
		if o != nil {
			if s, ok := o.ZSet.Score(string(c.Args[0])); ok {
				r.Float, r.Value, r.Found = s, FormatScore(s), true
			}
		}
		return nil
	}),
	KindZMScore: zsetRead(1, func(o *object.Object, c *Command, r *Response) error {
		r.Values = make([][]byte, len(c.Args))
		for i, m := range c.Args {
			if o != nil {
				if s, ok := o.ZSet.Score(string(m)); ok {
					r.Values[i] = FormatScore(s)
				}
			}
		}
		return nil
	}),
	KindZIncrBy: func(ctx context.Context, e *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := needArgs(c, 1, 1); err != nil {
			return Response{}, err
		}
		z := *c
		z.Args, z.Scores, z.ZAdd = c.Args[:1], []float64{c.Float}, ZAddFlags{Incr: true}
		return runZAdd(ctx, e, s, &z)
	},
	KindZRem: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := needArgs(c, 1, 1); err != nil {
			return Response{}, err
		}
		var r Response
		err := writeObj(ctx, s, c.Key, object.KindZSet, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			if o == nil {
				return nil, nil
			}
			var rem [][]byte
			seen := map[string]bool{}
			for _, m := range c.Args {
				if _, ok := o.ZSet.Score(string(m)); ok && !seen[string(m)] {
					seen[string(m)] = true
					rem = append(rem, m)
				}
			}
			r.Int = int64(len(rem))
			if len(rem) == 0 {
				return nil, nil
			}
			return []command.Command{{Op: shard.OpZRem, Key: c.Key, Args: rem}}, nil
		})
		return r, err
	},
	KindZCard: zsetRead(0, func(o *object.Object, _ *Command, r *Response) error {
		if o != nil {
			r.Int = int64(o.ZSet.Len())
		}
		return nil
	}),
	KindZPopMin: zsetPop(false),
	KindZPopMax: zsetPop(true),
	KindZScan: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		count, err := scanCount(c)
		if err != nil {
			return Response{}, err
		}
		var r Response
		err = readObj(ctx, s, c.Key, object.KindZSet, func(o *object.Object, _ *shard.View) error {
			r.Values = [][]byte{}
			if o == nil {
				return nil
			}
			ms := make([]string, 0, o.ZSet.Len())
			for m := range o.ZSet.Members() {
				ms = append(ms, m)
			}
			page, next := scanPage(ms, c.Cursor, count)
			for _, m := range page {
				s, _ := o.ZSet.Score(m)
				r.Values = append(r.Values, []byte(m), FormatScore(s))
			}
			r.Cursor = next
			return nil
		})
		return r, err
	},
}

func zsetRead(n int, fn func(o *object.Object, c *Command, r *Response) error) runner {
	return func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := needArgs(c, n, 1); err != nil {
			return Response{}, err
		}
		var r Response
		err := readObj(ctx, s, c.Key, object.KindZSet, func(o *object.Object, _ *shard.View) error {
			return fn(o, c, &r)
		})
		return r, err
	}
}

func zsetRank(rev bool) runner {
	return zsetRead(1, func(o *object.Object, c *Command, r *Response) error {
		if o == nil {
			return nil
		}
		if rk, ok := o.ZSet.Rank(string(c.Args[0])); ok {
			if rev {
				rk = o.ZSet.Len() - 1 - rk
			}
			r.Int, r.Found = int64(rk), true
		}
		return nil
	})
}

func zsetPop(highest bool) runner {
	return func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if c.HasCount && c.Count < 0 {
			return Response{}, fmt.Errorf("%w: value is out of range, must be positive", ErrInvalid)
		}
		n := 1
		if c.HasCount {
			n = c.Count
		}
		r := Response{Values: [][]byte{}}
		err := writeObj(ctx, s, c.Key, object.KindZSet, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			if o == nil || n == 0 {
				return nil, nil
			}
			lo, hi := 0, n-1
			if highest {
				lo, hi = o.ZSet.Len()-n, o.ZSet.Len()-1
			}
			var rem [][]byte
			o.ZSet.Range(lo, hi, highest, func(m string, sc float64) bool {
				rem = append(rem, []byte(m))
				r.Values = append(r.Values, []byte(m))
				r.Scores = append(r.Scores, sc)
				return true
			})
			return []command.Command{{Op: shard.OpZRem, Key: c.Key, Args: rem}}, nil
		})
		return r, err
	}
}

func runZAdd(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	f := c.ZAdd
	switch {
	case len(c.Args) == 0 || len(c.Args) != len(c.Scores):
		return Response{}, fmt.Errorf("%w: ZADD needs a score for each member", ErrInvalid)
	case f.NX && f.XX:
		return Response{}, fmt.Errorf("%w: XX and NX options at the same time are not compatible", ErrInvalid)
	case (f.GT || f.LT) && f.NX, f.GT && f.LT:
		return Response{}, fmt.Errorf("%w: GT, LT, and/or NX options at the same time are not compatible", ErrInvalid)
	case f.Incr && len(c.Args) != 1:
		return Response{}, fmt.Errorf("%w: INCR option supports a single increment-element pair", ErrInvalid)
	}
	for _, sc := range c.Scores {
		if math.IsNaN(sc) {
			return Response{}, fmt.Errorf("%w: value is not a valid float", ErrInvalid)
		}
	}
	var r Response
	err := writeObj(ctx, s, c.Key, object.KindZSet, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
		// Scores as this command leaves them, over the stored ones, so a
		// member named twice behaves as two ZADDs in a row.
		now := map[string]float64{}
		score := func(m string) (float64, bool) {
			if sc, ok := now[m]; ok {
				return sc, true
			}
			if o == nil {
				return 0, false
			}
			return o.ZSet.Score(m)
		}
		var args [][]byte
		var added, changed int64
		for i, m := range c.Args {
			cur, exists := score(string(m))
			if (f.NX && exists) || (f.XX && !exists) {
				continue
			}
			nv := c.Scores[i]
			if f.Incr {
				nv += cur
				if math.IsNaN(nv) {
					return nil, fmt.Errorf("%w: resulting score is not a number (NaN)", ErrInvalid)
				}
			}
			if exists && ((f.GT && nv <= cur) || (f.LT && nv >= cur)) {
				continue
			}
			if f.Incr {
				r.Float, r.Value, r.Found = nv, FormatScore(nv), true
			}
			switch {
			case !exists:
				added++
			case nv != cur:
				changed++
			default:
				continue
			}
			now[string(m)] = nv
			args = append(args, m, shard.EncodeScore(nv))
		}
		r.Int = added
		if f.CH {
			r.Int += changed
		}
		if len(args) == 0 {
			return nil, nil
		}
		return []command.Command{{Op: shard.OpZAdd, Key: c.Key, Args: args}}, nil
	})
	return r, err
}
