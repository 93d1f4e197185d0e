package api

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
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
