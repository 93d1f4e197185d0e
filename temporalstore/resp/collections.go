package resp

import (
	"math"
	"strconv"
	"strings"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// kv writes a flat field, value list as a map (RESP3) or array (RESP2).
func (c *conn) pairs(vs [][]byte) {
	c.w.mapHeader(len(vs) / 2)
	for _, v := range vs {
		c.w.bulk(v)
	}
}

func (c *conn) intReply(cmd ts.Command) { c.intReplyIn(c.command(cmd)) }

// intReplyIn is intReply for a command in place (see execIn).
func (c *conn) intReplyIn(cmd *ts.Command) {
	if r, ok := c.execIn(cmd); ok {
		c.w.int(r.Int)
	}
}

func (c *conn) valuesReply(cmd ts.Command) {
	if r, ok := c.exec(cmd); ok {
		c.w.values(r.Values)
	}
}

// parseCursor reads a SCAN cursor as Redis does, with C's strtoul: an
// optional sign (a negative number wraps around 2^64), decimal digits, no
// leading space, nothing after them; the empty text is 0.
func parseCursor(b []byte) (uint64, bool) {
	s := string(b)
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
		if s == "" {
			return 0, false
		}
	}
	if s == "" {
		return 0, true
	}
	if s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// scanReply writes a collection scan's [cursor, page] reply, filtered by
// MATCH on its elements (every step-th one, the rest following along).
func (c *conn) collectionScan(a [][]byte, kind ts.Kind, step int) {
	cur, ok := parseCursor(a[2])
	if !ok {
		c.errorf("ERR invalid cursor")
		return
	}
	cmd := ts.Command{Kind: kind, Key: a[1], Cursor: cur}
	var match []byte
	bad := ""
	for i := 3; i < len(a) && bad == ""; i += 2 {
		if i+1 >= len(a) {
			bad = "ERR syntax error"
			break
		}
		switch {
		case is(a[i], "match"):
			match = a[i+1]
		case is(a[i], "count"):
			n, err := parseInt(a[i+1])
			switch {
			case err != nil:
				bad = err.Error()
			case n < 1:
				bad = "ERR syntax error"
			}
			cmd.Count = int(n)
		default:
			bad = "ERR syntax error"
		}
	}
	if bad != "" {
		// Redis looks the key up before it reads the options: a missing
		// key is an empty scan, another type WRONGTYPE.
		r, ok := c.exec(ts.Command{Kind: ts.KindType, Key: a[1]})
		switch {
		case !ok:
		case string(r.Value) == "none":
			c.w.array(2)
			c.w.bulkString("0")
			c.w.array(0)
		case string(r.Value) != map[ts.Kind]string{ts.KindHScan: "hash", ts.KindSScan: "set", ts.KindZScan: "zset"}[kind]:
			c.errorf("WRONGTYPE Operation against a key holding the wrong kind of value")
		default:
			c.errorf("%s", bad)
		}
		return
	}
	r, ok := c.exec(cmd)
	if !ok {
		return
	}
	var page [][]byte
	for i := 0; i+step <= len(r.Values); i += step {
		if match == nil || globMatch(match, r.Values[i]) {
			page = append(page, r.Values[i:i+step]...)
		}
	}
	c.w.array(2)
	c.w.bulkString(strconv.FormatUint(r.Cursor, 10))
	c.w.values(page)
}

func registerHashes() {
	register(
		keyed("hset", -4, flagWrite, func(c *conn, a [][]byte) {
			if len(a)%2 != 0 {
				c.errorf("ERR wrong number of arguments for 'hset' command")
				return
			}
			c.intReply(ts.Command{Kind: ts.KindHSet, Key: a[1], Args: a[2:]})
		}),
		keyed("hmset", -4, flagWrite, func(c *conn, a [][]byte) {
			if len(a)%2 != 0 {
				c.errorf("ERR wrong number of arguments for 'hmset' command")
				return
			}
			if _, ok := c.exec(ts.Command{Kind: ts.KindHSet, Key: a[1], Args: a[2:]}); ok {
				c.w.ok()
			}
		}),
		keyed("hsetnx", 4, flagWrite, func(c *conn, a [][]byte) {
			c.intReply(ts.Command{Kind: ts.KindHSetNX, Key: a[1], Args: a[2:3], Value: a[3]})
		}),
		keyed("hget", 3, 0, func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindHGet, Key: a[1], Args: a[2:]}); ok {
				c.bulkOrNull(r)
			}
		}),
		keyed("hmget", -3, 0, func(c *conn, a [][]byte) { c.valuesReply(ts.Command{Kind: ts.KindHMGet, Key: a[1], Args: a[2:]}) }),
		keyed("hgetall", 2, 0, func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindHGetAll, Key: a[1]}); ok {
				c.pairs(r.Values)
			}
		}),
		keyed("hdel", -3, flagWrite, func(c *conn, a [][]byte) { c.intReply(ts.Command{Kind: ts.KindHDel, Key: a[1], Args: a[2:]}) }),
		keyed("hincrby", 4, flagWrite, func(c *conn, a [][]byte) {
			if n, ok := c.intArg(a[3]); ok {
				c.intReply(ts.Command{Kind: ts.KindHIncrBy, Key: a[1], Args: a[2:3], Delta: n})
			}
		}),
		keyed("hincrbyfloat", 4, flagWrite, func(c *conn, a [][]byte) {
			f, ok := c.floatArg(a[3])
			if !ok {
				return
			}
			if math.IsInf(f, 0) {
				c.errorf("ERR value is NaN or Infinity")
				return
			}
			if r, ok := c.exec(ts.Command{Kind: ts.KindHIncrByFloat, Key: a[1], Args: a[2:3], Float: f, Value: a[3]}); ok {
				c.w.bulk(r.Value)
			}
		}),
		keyed("hlen", 2, 0, func(c *conn, a [][]byte) { c.intReply(ts.Command{Kind: ts.KindHLen, Key: a[1]}) }),
		keyed("hexists", 3, 0, func(c *conn, a [][]byte) { c.intReply(ts.Command{Kind: ts.KindHExists, Key: a[1], Args: a[2:]}) }),
		keyed("hstrlen", 3, 0, func(c *conn, a [][]byte) { c.intReply(ts.Command{Kind: ts.KindHStrLen, Key: a[1], Args: a[2:]}) }),
		keyed("hkeys", 2, 0, func(c *conn, a [][]byte) { c.valuesReply(ts.Command{Kind: ts.KindHKeys, Key: a[1]}) }),
		keyed("hvals", 2, 0, func(c *conn, a [][]byte) { c.valuesReply(ts.Command{Kind: ts.KindHVals, Key: a[1]}) }),
		keyed("hscan", -3, 0, func(c *conn, a [][]byte) { c.collectionScan(a, ts.KindHScan, 2) }),
	)
}

func registerSets() {
	// store is SINTERSTORE and its kin: destination, then the sets.
	store := func(name string, kind ts.Kind) *cmdSpec {
		return &cmdSpec{name: name, arity: -3, flags: flagWrite, first: 1, last: -1, step: 1, run: func(c *conn, a [][]byte) {
			c.intReply(ts.Command{Kind: kind, Dest: a[1], Keys: a[2:]})
		}}
	}
	algebra := func(name string, kind ts.Kind) *cmdSpec {
		return &cmdSpec{name: name, arity: -2, first: 1, last: -1, step: 1, run: func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: kind, Keys: a[1:]}); ok {
				c.w.setHeader(len(r.Values))
				for _, v := range r.Values {
					c.w.bulk(v)
				}
			}
		}}
	}
	register(
		keyed("sadd", -3, flagWrite, func(c *conn, a [][]byte) { c.intReply(ts.Command{Kind: ts.KindSAdd, Key: a[1], Args: a[2:]}) }),
		keyed("srem", -3, flagWrite, func(c *conn, a [][]byte) { c.intReply(ts.Command{Kind: ts.KindSRem, Key: a[1], Args: a[2:]}) }),
		keyed("smembers", 2, 0, func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindSMembers, Key: a[1]}); ok {
				c.w.setHeader(len(r.Values))
				for _, v := range r.Values {
					c.w.bulk(v)
				}
			}
		}),
		keyed("sismember", 3, 0, func(c *conn, a [][]byte) { c.intReply(ts.Command{Kind: ts.KindSIsMember, Key: a[1], Args: a[2:]}) }),
		keyed("smismember", -3, 0, func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindSMIsMember, Key: a[1], Args: a[2:]}); ok {
				c.w.array(len(r.Ints))
				for _, n := range r.Ints {
					c.w.int(n)
				}
			}
		}),
		keyed("scard", 2, 0, func(c *conn, a [][]byte) { c.intReply(ts.Command{Kind: ts.KindSCard, Key: a[1]}) }),
		keyed("spop", -2, flagWrite, func(c *conn, a [][]byte) { popLike(c, a, ts.KindSPop, false) }),
		keyed("srandmember", -2, 0, func(c *conn, a [][]byte) { popLike(c, a, ts.KindSRandMember, true) }),
		keyed("sscan", -3, 0, func(c *conn, a [][]byte) { c.collectionScan(a, ts.KindSScan, 1) }),
		algebra("sinter", ts.KindSInter),
		algebra("sunion", ts.KindSUnion),
		algebra("sdiff", ts.KindSDiff),
		store("sinterstore", ts.KindSInterStore),
		store("sunionstore", ts.KindSUnionStore),
		store("sdiffstore", ts.KindSDiffStore),
		&cmdSpec{name: "smove", arity: 4, flags: flagWrite, first: 1, last: 2, step: 1, run: func(c *conn, a [][]byte) {
			c.intReply(ts.Command{Kind: ts.KindSMove, Key: a[1], Dest: a[2], Args: a[3:4]})
		}},
		&cmdSpec{name: "sintercard", arity: -3, run: interCard(ts.KindSInter), keys: numKeys(1, false)},
	)
}

// interCard is SINTERCARD and ZINTERCARD (kind KindSInter or KindZInter):
// numkeys key [key ...] [LIMIT limit], the size of the intersection,
// counted up to limit (0: no limit).
func interCard(kind ts.Kind) func(c *conn, a [][]byte) {
	return func(c *conn, a [][]byte) {
		// ZINTERCARD reads numkeys as ZINTER does, SINTERCARD as LMPOP.
		n, err := parseInt(a[1])
		switch {
		case kind == ts.KindZInter && err != nil:
			c.errorf("%s", err.Error())
			return
		case kind == ts.KindZInter && n <= 0:
			c.errorf("ERR at least 1 input key is needed for 'zintercard' command")
			return
		case kind == ts.KindZInter && n > int64(len(a)-2):
			c.syntaxErr()
			return
		case err != nil || n <= 0:
			c.errorf("ERR numkeys should be greater than 0")
			return
		case n > int64(len(a)-2):
			c.errorf("ERR Number of keys can't be greater than number of args")
			return
		}
		keys, rest := a[2:2+n], a[2+n:]
		var limit int64
		bad := ""
		for len(rest) > 0 && bad == "" {
			if !is(rest[0], "limit") || len(rest) < 2 {
				bad = "ERR syntax error"
				break
			}
			l, err := parseInt(rest[1])
			if err != nil || l < 0 {
				bad = "ERR LIMIT can't be negative"
				break
			}
			limit, rest = l, rest[2:]
		}
		if bad != "" {
			// ZINTERCARD reads its keys before its options, as ZINTER does.
			if kind != ts.KindZInter || c.sourcesTyped(keys) {
				c.errorf("%s", bad)
			}
			return
		}
		if r, ok := c.exec(ts.Command{Kind: kind, Keys: keys}); ok {
			card := int64(len(r.Values))
			if limit > 0 {
				card = min(card, limit)
			}
			c.w.int(card)
		}
	}
}

// positiveCount reads the count of SPOP, LPOP, RPOP, ZPOPMIN and ZPOPMAX,
// or writes Redis's error for anything but a non-negative integer (the
// same for a non-integer) and returns -1.
func positiveCount(c *conn, b []byte) int64 {
	n, err := parseInt(b)
	if err != nil || n < 0 {
		c.errorf("ERR value is out of range, must be positive")
		return -1
	}
	return n
}

// popLike is SPOP, SRANDMEMBER, LPOP and RPOP: one element, or with a count
// an array; negative counts only where allowNeg.
func popLike(c *conn, a [][]byte, kind ts.Kind, allowNeg bool) {
	if len(a) > 3 {
		if kind == ts.KindLPop || kind == ts.KindRPop {
			// Redis's list pops check their own arity.
			c.errorf("ERR wrong number of arguments for '%s' command", strings.ToLower(string(a[0])))
		} else {
			c.syntaxErr()
		}
		return
	}
	cmd := ts.Command{Kind: kind, Key: a[1]}
	if len(a) == 3 {
		var n int64
		if allowNeg {
			var ok bool
			if n, ok = c.randCountArg(a[2]); !ok {
				return
			}
		} else if n = positiveCount(c, a[2]); n < 0 {
			return
		}
		cmd.HasCount, cmd.Count = true, int(n)
	}
	r, ok := c.exec(cmd)
	switch {
	case !ok:
	case !cmd.HasCount:
		c.bulkOrNull(r)
	case kind == ts.KindLPop || kind == ts.KindRPop:
		if !r.Found {
			c.w.nullArray()
			return
		}
		c.w.values(r.Values)
	default:
		if kind == ts.KindSPop {
			c.w.setHeader(len(r.Values))
			for _, v := range r.Values {
				c.w.bulk(v)
			}
			return
		}
		c.w.values(r.Values)
	}
}
