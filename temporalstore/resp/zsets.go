package resp

import (
	"strings"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// scoredReply writes members with their scores: RESP3 pairs of [member,
// double], RESP2 a flat member, score list; without scores, members.
func (c *conn) scoredReply(r ts.Response, withScores bool) {
	if !withScores {
		c.w.values(r.Values)
		return
	}
	if c.w.resp3 {
		c.w.array(len(r.Values))
		for i, v := range r.Values {
			c.w.array(2)
			c.w.bulk(v)
			c.w.double(r.Scores[i])
		}
		return
	}
	c.w.array(2 * len(r.Values))
	for i, v := range r.Values {
		c.w.bulk(v)
		c.w.double(r.Scores[i])
	}
}

// rangeBounds parses a range's min and max for by (rank, score or lex).
func (c *conn) rangeBounds(rg *ts.ZRange, lo, hi []byte) bool {
	switch rg.By {
	case ts.ByScore:
		var err1, err2 error
		rg.Min, err1 = ts.ParseScoreBound(string(lo))
		rg.Max, err2 = ts.ParseScoreBound(string(hi))
		if err1 != nil || err2 != nil {
			c.errorf("ERR min or max is not a float")
			return false
		}
	case ts.ByLex:
		var err1, err2 error
		rg.LexMin, err1 = ts.ParseLexBound(string(lo))
		rg.LexMax, err2 = ts.ParseLexBound(string(hi))
		if err1 != nil || err2 != nil {
			c.errorf("ERR min or max not valid string range item")
			return false
		}
	default:
		s, ok := c.intArg(lo)
		if !ok {
			return false
		}
		e, ok := c.intArg(hi)
		if !ok {
			return false
		}
		rg.Start, rg.Stop = s, e
	}
	return true
}

// zrange serves ZRANGE and its older forms. by and rev are fixed by the
// form (ZRANGEBYSCORE, ZREVRANGE ...) or, for ZRANGE, read from the
// options; a reversed form takes max before min.
func zrange(c *conn, a [][]byte, by ts.ZRangeBy, rev, generic bool) {
	rg, ok := c.parseZRange(a, by, rev, generic, false)
	if !ok {
		return
	}
	if r, ok := c.exec(ts.Command{Kind: ts.KindZRange, Key: a[1], Range: rg}); ok {
		c.scoredReply(r, rg.WithScores)
	}
}

// cmdZRangeStore is ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV]
// [LIMIT offset count]: ZRANGE's options, without WITHSCORES.
func cmdZRangeStore(c *conn, a [][]byte) {
	if rg, ok := c.parseZRange(a[1:], ts.ByRank, false, true, true); ok {
		c.intReply(ts.Command{Kind: ts.KindZRangeStore, Key: a[2], Dest: a[1], Range: rg})
	}
}

// parseZRange reads a ZRANGE-like request, a[1] its key, a[2] and a[3]
// its bounds, then its options (store: ZRANGESTORE's, without
// WITHSCORES), with Redis's checks in Redis's order: the options, their
// combinations, then the bounds.
func (c *conn) parseZRange(a [][]byte, by ts.ZRangeBy, rev, generic, store bool) (ts.ZRange, bool) {
	rg := ts.ZRange{By: by, Rev: rev}
	for i := 4; i < len(a); i++ {
		switch {
		case generic && is(a[i], "byscore") && rg.By == ts.ByRank:
			rg.By = ts.ByScore
		case generic && is(a[i], "bylex") && rg.By == ts.ByRank:
			rg.By = ts.ByLex
		case generic && is(a[i], "rev") && !rg.Rev: // once, as Redis
			rg.Rev = true
		case !store && is(a[i], "withscores"):
			rg.WithScores = true
		case is(a[i], "limit") && i+2 < len(a):
			off, ok := c.intArg(a[i+1])
			if !ok {
				return rg, false
			}
			n, ok := c.intArg(a[i+2])
			if !ok {
				return rg, false
			}
			rg.HasLimit, rg.Offset, rg.Limit = true, off, n
			i += 2
		default:
			c.syntaxErr()
			return rg, false
		}
	}
	switch {
	case rg.By == ts.ByRank && rg.HasLimit && rg.Limit == -1:
		// Redis ignores a LIMIT by rank whose count is -1 (no limit),
		// offset and all.
		rg.HasLimit, rg.Offset = false, 0
	case rg.By == ts.ByRank && rg.HasLimit:
		c.errorf("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return rg, false
	}
	if rg.By == ts.ByLex && rg.WithScores {
		c.errorf("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return rg, false
	}
	lo, hi := a[2], a[3]
	if rg.Rev && rg.By != ts.ByRank {
		lo, hi = hi, lo
	}
	if !c.rangeBounds(&rg, lo, hi) {
		return rg, false
	}
	return rg, true
}

// zalgebra serves ZUNION, ZINTER and ZDIFF (numkeys key ... [WEIGHTS w
// ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]) and, with store, their STORE
// forms (destination first; no WITHSCORES). ZDIFF takes neither WEIGHTS
// nor AGGREGATE. Errors come in Redis's order: numkeys, then the keys'
// types, then the options.
func zalgebra(name string, kind ts.Kind, store bool) *cmdSpec {
	at := 1 // numkeys
	if store {
		at = 2
	}
	diff := kind == ts.KindZDiff || kind == ts.KindZDiffStore
	spec := &cmdSpec{name: name, arity: -(at + 2), keys: numKeys(at, store)}
	if store {
		spec.flags = flagWrite
		spec.first, spec.last, spec.step = 1, 1, 1 // as Redis's COMMAND shows it
	}
	spec.run = func(c *conn, a [][]byte) {
		n, ok := c.intArg(a[at])
		switch {
		case !ok:
			return
		case n < 1:
			c.errorf("ERR at least 1 input key is needed for '%s' command", name)
			return
		case n > int64(len(a)-at-1):
			c.syntaxErr()
			return
		}
		cmd := ts.Command{Kind: kind, Keys: a[at+1 : at+1+int(n)]}
		if store {
			cmd.Dest = a[1]
		}
		withScores := false
		bad := ""
		for rest := a[at+1+int(n):]; len(rest) > 0 && bad == ""; {
			switch {
			case !diff && is(rest[0], "weights") && len(rest) > int(n):
				cmd.Scores = make([]float64, n)
				for i := range cmd.Scores {
					f, err := parseFloat(rest[1+i])
					if err != nil {
						bad = "ERR weight value is not a float"
						break
					}
					cmd.Scores[i] = f
				}
				rest = rest[1+n:]
			case !diff && is(rest[0], "aggregate") && len(rest) >= 2:
				if !is(rest[1], "sum") && !is(rest[1], "min") && !is(rest[1], "max") {
					bad = "ERR syntax error"
				}
				cmd.Aggregator, rest = strings.ToLower(string(rest[1])), rest[2:]
			case !store && is(rest[0], "withscores"):
				withScores, rest = true, rest[1:]
			default:
				bad = "ERR syntax error"
			}
		}
		if bad != "" {
			// Redis has read the keys by then: a key of another type is
			// WRONGTYPE first.
			if c.sourcesTyped(cmd.Keys) {
				c.errorf("%s", bad)
			}
			return
		}
		if store {
			c.intReply(cmd)
			return
		}
		if r, ok := c.exec(cmd); ok {
			c.scoredReply(r, withScores)
		}
	}
	return spec
}

// sourcesTyped reports whether every key holds a sorted set, a set or
// nothing, as the sorted-set algebra reads them; else it replies the error
// (WRONGTYPE) and returns false.
func (c *conn) sourcesTyped(keys [][]byte) bool {
	for _, k := range keys {
		r, ok := c.exec(ts.Command{Kind: ts.KindType, Key: k})
		if !ok {
			return false
		}
		if t := string(r.Value); t != "zset" && t != "set" && t != "none" {
			c.errorf("WRONGTYPE Operation against a key holding the wrong kind of value")
			return false
		}
	}
	return true
}

// numKeys finds the keys of a command with a key count at args[at] (the
// destination at args[1] too, with dest).
func numKeys(at int, dest bool) func([][]byte) [][]byte {
	return func(args [][]byte) [][]byte {
		var keys [][]byte
		if dest && len(args) > 1 {
			keys = append(keys, args[1])
		}
		if at >= len(args) {
			return keys
		}
		n, err := parseInt(args[at])
		if err != nil || n < 1 || n > int64(len(args)-at-1) {
			return keys
		}
		return append(keys, args[at+1:at+1+int(n)]...)
	}
}

func registerZSets() {
	register(
		zalgebra("zunion", ts.KindZUnion, false),
		zalgebra("zinter", ts.KindZInter, false),
		zalgebra("zdiff", ts.KindZDiff, false),
		zalgebra("zunionstore", ts.KindZUnionStore, true),
		zalgebra("zinterstore", ts.KindZInterStore, true),
		zalgebra("zdiffstore", ts.KindZDiffStore, true),
		&cmdSpec{name: "zrangestore", arity: -5, flags: flagWrite, first: 1, last: 2, step: 1, run: cmdZRangeStore},
		&cmdSpec{name: "zintercard", arity: -3, run: interCard(ts.KindZInter), keys: numKeys(1, false)},
		keyed("zadd", -4, flagWrite, cmdZAdd),
		keyed("zrange", -4, 0, func(c *conn, a [][]byte) { zrange(c, a, ts.ByRank, false, true) }),
		keyed("zrevrange", -4, 0, func(c *conn, a [][]byte) { zrange(c, a, ts.ByRank, true, false) }),
		keyed("zrangebyscore", -4, 0, func(c *conn, a [][]byte) { zrange(c, a, ts.ByScore, false, false) }),
		keyed("zrevrangebyscore", -4, 0, func(c *conn, a [][]byte) { zrange(c, a, ts.ByScore, true, false) }),
		keyed("zrangebylex", -4, 0, func(c *conn, a [][]byte) { zrange(c, a, ts.ByLex, false, false) }),
		keyed("zrevrangebylex", -4, 0, func(c *conn, a [][]byte) { zrange(c, a, ts.ByLex, true, false) }),
		keyed("zrank", 3, 0, func(c *conn, a [][]byte) { zrank(c, a, ts.KindZRank) }),
		keyed("zrevrank", 3, 0, func(c *conn, a [][]byte) { zrank(c, a, ts.KindZRevRank) }),
		keyed("zscore", 3, 0, func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindZScore, Key: a[1], Args: a[2:]}); ok {
				if !r.Found {
					c.w.null()
				} else {
					c.w.double(r.Float)
				}
			}
		}),
		keyed("zmscore", -3, 0, func(c *conn, a [][]byte) {
			r, ok := c.exec(ts.Command{Kind: ts.KindZMScore, Key: a[1], Args: a[2:]})
			if !ok {
				return
			}
			c.w.array(len(r.Values))
			for _, v := range r.Values {
				if v == nil {
					c.w.null()
					continue
				}
				f, _ := parseFloat(v)
				c.w.double(f)
			}
		}),
		keyed("zincrby", 4, flagWrite, func(c *conn, a [][]byte) {
			f, ok := c.floatArg(a[2])
			if !ok {
				return
			}
			if r, ok := c.exec(ts.Command{Kind: ts.KindZIncrBy, Key: a[1], Args: a[3:], Float: f}); ok {
				c.w.double(r.Float)
			}
		}),
		keyed("zrem", -3, flagWrite, func(c *conn, a [][]byte) { c.intReply(ts.Command{Kind: ts.KindZRem, Key: a[1], Args: a[2:]}) }),
		keyed("zremrangebyscore", 4, flagWrite, func(c *conn, a [][]byte) { zremRange(c, a, ts.ByScore) }),
		keyed("zremrangebyrank", 4, flagWrite, func(c *conn, a [][]byte) { zremRange(c, a, ts.ByRank) }),
		keyed("zremrangebylex", 4, flagWrite, func(c *conn, a [][]byte) { zremRange(c, a, ts.ByLex) }),
		keyed("zcard", 2, 0, func(c *conn, a [][]byte) { c.intReply(ts.Command{Kind: ts.KindZCard, Key: a[1]}) }),
		keyed("zcount", 4, 0, func(c *conn, a [][]byte) { zcount(c, a, ts.ByScore) }),
		keyed("zlexcount", 4, 0, func(c *conn, a [][]byte) { zcount(c, a, ts.ByLex) }),
		keyed("zpopmin", -2, flagWrite, func(c *conn, a [][]byte) { zpop(c, a, ts.KindZPopMin) }),
		keyed("zpopmax", -2, flagWrite, func(c *conn, a [][]byte) { zpop(c, a, ts.KindZPopMax) }),
		keyed("zscan", -3, 0, func(c *conn, a [][]byte) { c.collectionScan(a, ts.KindZScan, 2) }),
	)
}

func cmdZAdd(c *conn, a [][]byte) {
	cmd := ts.Command{Kind: ts.KindZAdd, Key: a[1]}
	i := 2
options:
	for ; i < len(a); i++ {
		switch {
		case is(a[i], "nx"):
			cmd.ZAdd.NX = true
		case is(a[i], "xx"):
			cmd.ZAdd.XX = true
		case is(a[i], "gt"):
			cmd.ZAdd.GT = true
		case is(a[i], "lt"):
			cmd.ZAdd.LT = true
		case is(a[i], "ch"):
			cmd.ZAdd.CH = true
		case is(a[i], "incr"):
			cmd.ZAdd.Incr = true
		default:
			break options
		}
	}
	rest := a[i:]
	if len(rest) == 0 || len(rest)%2 != 0 {
		c.syntaxErr()
		return
	}
	// Redis refuses clashing options before it reads a score.
	if f := cmd.ZAdd; f.NX && f.XX {
		c.errorf("ERR XX and NX options at the same time are not compatible")
		return
	} else if (f.GT || f.LT) && f.NX || f.GT && f.LT {
		c.errorf("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	} else if f.Incr && len(rest) > 2 {
		c.errorf("ERR INCR option supports a single increment-element pair")
		return
	}
	for j := 0; j < len(rest); j += 2 {
		f, err := parseFloat(rest[j])
		if err != nil {
			c.errorf("%s", err.Error())
			return
		}
		cmd.Scores = append(cmd.Scores, f)
		cmd.Args = append(cmd.Args, rest[j+1])
	}
	r, ok := c.exec(cmd)
	switch {
	case !ok:
	case cmd.ZAdd.Incr && !r.Found:
		c.w.null()
	case cmd.ZAdd.Incr:
		c.w.double(r.Float)
	default:
		c.w.int(r.Int)
	}
}

func zrank(c *conn, a [][]byte, kind ts.Kind) {
	if r, ok := c.exec(ts.Command{Kind: kind, Key: a[1], Args: a[2:]}); ok {
		if !r.Found {
			c.w.null()
		} else {
			c.w.int(r.Int)
		}
	}
}

func zremRange(c *conn, a [][]byte, by ts.ZRangeBy) {
	rg := ts.ZRange{By: by}
	if c.rangeBounds(&rg, a[2], a[3]) {
		c.intReply(ts.Command{Kind: ts.KindZRemRange, Key: a[1], Range: rg})
	}
}

func zcount(c *conn, a [][]byte, by ts.ZRangeBy) {
	rg := ts.ZRange{By: by}
	if c.rangeBounds(&rg, a[2], a[3]) {
		c.intReply(ts.Command{Kind: ts.KindZCount, Key: a[1], Range: rg})
	}
}

func zpop(c *conn, a [][]byte, kind ts.Kind) {
	if len(a) > 3 {
		c.syntaxErr()
		return
	}
	cmd := ts.Command{Kind: kind, Key: a[1]}
	if len(a) == 3 {
		n := positiveCount(c, a[2])
		if n < 0 {
			return
		}
		cmd.HasCount, cmd.Count = true, int(n)
	}
	r, ok := c.exec(cmd)
	if !ok {
		return
	}
	if !cmd.HasCount || !c.w.resp3 {
		// Redis answers a flat member, score list here, in RESP3 too
		// when no count is given.
		c.w.array(2 * len(r.Values))
		for i, v := range r.Values {
			c.w.bulk(v)
			c.w.double(r.Scores[i])
		}
		return
	}
	c.scoredReply(r, true)
}
