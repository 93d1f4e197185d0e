package temporalstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// Sorted-set kinds, with Redis's semantics. Members are in Args.
const (
	// KindZAdd sets the scores (Scores) of members (Args), with ZAdd's
	// flags. Response.Int is how many members are new (or, with CH, new
	// or changed); with INCR, Value/Float hold the new score and Found is
	// false when a condition stopped it (ZADD).
	KindZAdd Kind = "zadd"
	// KindZRange returns the members Range selects in Values (and their
	// scores in Scores when Range.WithScores) (ZRANGE, ZRANGEBYSCORE,
	// ZRANGEBYLEX, ZREVRANGE...).
	KindZRange Kind = "zrange"
	// KindZCount counts the members in Range's score (or lex) bounds
	// (ZCOUNT, ZLEXCOUNT).
	KindZCount Kind = "zcount"
	// KindZRemRange removes the members Range selects; Response.Int is
	// how many (ZREMRANGEBYSCORE, ZREMRANGEBYRANK, ZREMRANGEBYLEX).
	KindZRemRange Kind = "zremrange"
	// KindZRank is Args[0]'s rank, ascending, in Int; Found is false when
	// it is absent (ZRANK). KindZRevRank counts from the highest.
	KindZRank    Kind = "zrank"
	KindZRevRank Kind = "zrevrank"
	// KindZScore is Args[0]'s score in Float and, formatted, in Value.
	KindZScore Kind = "zscore"
	// KindZMScore is the scores of Args in Values, nil when absent.
	KindZMScore Kind = "zmscore"
	// KindZIncrBy adds Float to Args[0]'s score (ZINCRBY).
	KindZIncrBy Kind = "zincrby"
	// KindZRem removes members; Response.Int is how many existed.
	KindZRem Kind = "zrem"
	// KindZCard is the number of members.
	KindZCard Kind = "zcard"
	// KindZPopMin and KindZPopMax remove and return the lowest or highest
	// members, one or Count (when HasCount), with their scores.
	KindZPopMin Kind = "zpopmin"
	KindZPopMax Kind = "zpopmax"
	// KindZScan pages through member, score pairs (ZSCAN).
	KindZScan Kind = "zscan"
)

// ZAddFlags are ZADD's options.
type ZAddFlags struct {
	NX, XX, GT, LT, CH, Incr bool
}

// ZRangeBy says what a ZRange's bounds are.
type ZRangeBy uint8

// Range kinds.
const (
	ByRank ZRangeBy = iota
	ByScore
	ByLex
)

// ScoreBound is one end of a score range: "(" in Redis makes it exclusive.
type ScoreBound struct {
	Value float64
	Excl  bool
}

// LexBound is one end of a lex range: Inf is -1 for Redis's "-", +1 for
// "+", and 0 for a member bound (Excl for "(", inclusive for "[").
type LexBound struct {
	Value []byte
	Excl  bool
	Inf   int8
}

// ZRange selects members of a sorted set.
type ZRange struct {
	By ZRangeBy
	// Start and Stop are ranks for ByRank, negative counting from the end.
	Start, Stop int64
	// Min and Max bound ByScore; LexMin and LexMax bound ByLex. They are
	// the low and the high end even with Rev.
	Min, Max       ScoreBound
	LexMin, LexMax LexBound
	// Rev walks from the highest member down (ranks then count from it).
	Rev bool
	// Offset and Limit are LIMIT (ByScore and ByLex only); a negative
	// Limit is no limit.
	HasLimit      bool
	Offset, Limit int64
	WithScores    bool
}

// ParseScoreBound reads a Redis score bound: a float, "(" before it for an
// exclusive bound, or -inf/+inf. The float is read as Redis reads it, with
// C's strtod: leading white space is skipped, an empty text is 0, a
// hexadecimal number needs no exponent, and one out of range is ±Inf.
func ParseScoreBound(s string) (ScoreBound, error) {
	var b ScoreBound
	if strings.HasPrefix(s, "(") {
		b.Excl, s = true, s[1:]
	}
	f, ok := strtod(s)
	if !ok {
		return b, fmt.Errorf("%w: min or max is not a float", ErrInvalid)
	}
	b.Value = f
	return b, nil
}

// strtod reads s whole as C's strtod does (Redis's score bounds); NaN is
// refused.
func strtod(s string) (float64, bool) {
	if s == "" {
		return 0, true // no conversion, and the end pointer is at the NUL
	}
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	if t == "" || strings.Contains(t, "_") {
		return 0, false
	}
	if h := strings.TrimLeft(t, "+-"); (strings.HasPrefix(h, "0x") || strings.HasPrefix(h, "0X")) && !strings.ContainsAny(h, "pP") {
		t += "p0"
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// ParseLexBound reads a Redis lex bound: "-", "+", or "[" or "(" before a
// member.
func ParseLexBound(s string) (LexBound, error) {
	switch {
	case s == "-":
		return LexBound{Inf: -1}, nil
	case s == "+":
		return LexBound{Inf: 1}, nil
	case strings.HasPrefix(s, "["):
		return LexBound{Value: []byte(s[1:])}, nil
	case strings.HasPrefix(s, "("):
		return LexBound{Value: []byte(s[1:]), Excl: true}, nil
	}
	return LexBound{}, fmt.Errorf("%w: min or max not valid string range item", ErrInvalid)
}

// FormatScore formats a score as Redis replies it.
func FormatScore(f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return []byte("inf")
	case math.IsInf(f, -1):
		return []byte("-inf")
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64)
}

// ranks resolves a range's bounds to ascending ranks lo..hi (empty when
// lo > hi).
func (rg *ZRange) ranks(z *object.ZSet) (lo, hi int) {
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

// walk calls fn for the members rg selects, in its order, after LIMIT.
func (rg *ZRange) walk(z *object.ZSet, fn func(m string, s float64)) {
	lo, hi := rg.ranks(z)
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

func (rg *ZRange) validate() error {
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
		if err := c.Range.validate(); err != nil {
			return err
		}
		r.Values = [][]byte{}
		if o == nil {
			return nil
		}
		c.Range.walk(o.ZSet, func(m string, s float64) {
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
			lo, hi := c.Range.ranks(o.ZSet)
			r.Int = int64(max(hi-lo+1, 0))
		}
		return nil
	}),
	KindZRemRange: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := c.Range.validate(); err != nil {
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
			rg.walk(o.ZSet, func(m string, _ float64) { rem = append(rem, []byte(m)) })
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
