package resp

import (
	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"math"
)

func registerLists() {
	indexes := func(c *conn, a [][]byte, cmd ts.Command) (ts.Command, bool) {
		s, ok := c.intArg(a[2])
		if !ok {
			return cmd, false
		}
		e, ok := c.intArg(a[3])
		cmd.Start, cmd.End = s, e
		return cmd, ok
	}
	register(
		keyed("lpush", -3, flagWrite, func(c *conn, a [][]byte) { c.intReply(ts.Command{Kind: ts.KindLPush, Key: a[1], Args: a[2:]}) }),
		keyed("lpushx", -3, flagWrite, func(c *conn, a [][]byte) {
			c.intReply(ts.Command{Kind: ts.KindLPush, Key: a[1], Args: a[2:], Cond: ts.IfPresent})
		}),
		keyed("rpushx", -3, flagWrite, func(c *conn, a [][]byte) {
			c.intReply(ts.Command{Kind: ts.KindRPush, Key: a[1], Args: a[2:], Cond: ts.IfPresent})
		}),
		keyed("rpush", -3, flagWrite, func(c *conn, a [][]byte) { c.intReply(ts.Command{Kind: ts.KindRPush, Key: a[1], Args: a[2:]}) }),
		keyed("lpop", -2, flagWrite, func(c *conn, a [][]byte) { popLike(c, a, ts.KindLPop, false) }),
		keyed("rpop", -2, flagWrite, func(c *conn, a [][]byte) { popLike(c, a, ts.KindRPop, false) }),
		keyed("lrange", 4, 0, func(c *conn, a [][]byte) {
			if cmd, ok := indexes(c, a, ts.Command{Kind: ts.KindLRange, Key: a[1]}); ok {
				c.valuesReply(cmd)
			}
		}),
		keyed("llen", 2, 0, func(c *conn, a [][]byte) { c.intReply(ts.Command{Kind: ts.KindLLen, Key: a[1]}) }),
		keyed("lindex", 3, 0, func(c *conn, a [][]byte) {
			i, err := parseInt(a[2])
			if err != nil {
				if c.listBeforeIndex(a[1], func() { c.w.null() }) {
					c.errorf("%s", err.Error())
				}
				return
			}
			if r, ok := c.exec(ts.Command{Kind: ts.KindLIndex, Key: a[1], Start: i}); ok {
				c.bulkOrNull(r)
			}
		}),
		keyed("lset", 4, flagWrite, func(c *conn, a [][]byte) {
			i, err := parseInt(a[2])
			if err != nil {
				if c.listBeforeIndex(a[1], func() { c.errorf("ERR no such key") }) {
					c.errorf("%s", err.Error())
				}
				return
			}
			if _, ok := c.exec(ts.Command{Kind: ts.KindLSet, Key: a[1], Start: i, Value: a[3]}); ok {
				c.w.ok()
			}
		}),
		keyed("ltrim", 4, flagWrite, func(c *conn, a [][]byte) {
			if cmd, ok := indexes(c, a, ts.Command{Kind: ts.KindLTrim, Key: a[1]}); ok {
				if _, ok := c.exec(cmd); ok {
					c.w.ok()
				}
			}
		}),
		keyed("lrem", 4, flagWrite, func(c *conn, a [][]byte) {
			if n, ok := c.intArg(a[2]); ok {
				c.intReply(ts.Command{Kind: ts.KindLRem, Key: a[1], Count: int(n), Value: a[3]})
			}
		}),
		keyed("linsert", 5, flagWrite, func(c *conn, a [][]byte) {
			var before bool
			switch {
			case is(a[2], "before"):
				before = true
			case is(a[2], "after"):
			default:
				c.syntaxErr()
				return
			}
			c.intReply(ts.Command{Kind: ts.KindLInsert, Key: a[1], Before: before, Args: a[3:4], Value: a[4]})
		}),
		keyed("lpos", -3, 0, cmdLPos),
		&cmdSpec{name: "lmove", arity: 5, flags: flagWrite, first: 1, last: 2, step: 1, run: func(c *conn, a [][]byte) {
			from, ok1 := side(a[3])
			to, ok2 := side(a[4])
			if !ok1 || !ok2 {
				c.syntaxErr()
				return
			}
			if r, ok := c.exec(ts.Command{Kind: ts.KindLMove, Key: a[1], Dest: a[2], FromLeft: from, ToLeft: to}); ok {
				c.bulkOrNull(r)
			}
		}},
		// RPOPLPUSH, deprecated in Redis 6.2 but still in wide use, is
		// LMOVE source destination RIGHT LEFT.
		&cmdSpec{name: "rpoplpush", arity: 3, flags: flagWrite, first: 1, last: 2, step: 1, run: func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindLMove, Key: a[1], Dest: a[2], ToLeft: true}); ok {
				c.bulkOrNull(r)
			}
		}},
	)
}

// listBeforeIndex looks key up as Redis does before it reads an index
// (LINDEX, LSET): a missing key gets missing's reply, another type
// WRONGTYPE; true when key holds a list, so the index's error is next.
func (c *conn) listBeforeIndex(key []byte, missing func()) bool {
	r, ok := c.exec(ts.Command{Kind: ts.KindType, Key: key})
	switch {
	case !ok:
		return false
	case string(r.Value) == "none":
		missing()
		return false
	case string(r.Value) != "list":
		c.errorf("WRONGTYPE Operation against a key holding the wrong kind of value")
		return false
	}
	return true
}

func cmdLPos(c *conn, a [][]byte) {
	cmd := ts.Command{Kind: ts.KindLPos, Key: a[1], Value: a[2]}
	for i := 3; i < len(a); i += 2 {
		if i+1 >= len(a) {
			c.syntaxErr()
			return
		}
		n, err := parseInt(a[i+1])
		if err != nil {
			// Redis reads COUNT and MAXLEN as 0 to 2^63-1, with one
			// error for a negative number and for anything else.
			switch {
			case is(a[i], "count"):
				c.errorf("ERR COUNT can't be negative")
			case is(a[i], "maxlen"):
				c.errorf("ERR MAXLEN can't be negative")
			case is(a[i], "rank"):
				c.errorf("%s", err.Error())
			default:
				c.syntaxErr()
			}
			return
		}
		switch {
		case is(a[i], "rank"):
			if n == 0 {
				c.errorf("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
				return
			}
			if n == math.MinInt64 {
				// Its negation, the rank from the end, does not exist.
				c.errorf("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
				return
			}
			cmd.Rank = n
		case is(a[i], "count"):
			if n < 0 {
				c.errorf("ERR COUNT can't be negative")
				return
			}
			cmd.HasCount, cmd.Count = true, int(n)
		case is(a[i], "maxlen"):
			if n < 0 {
				c.errorf("ERR MAXLEN can't be negative")
				return
			}
			cmd.MaxLen = n
		default:
			c.syntaxErr()
			return
		}
	}
	r, ok := c.exec(cmd)
	switch {
	case !ok:
	case cmd.HasCount:
		c.w.array(len(r.Ints))
		for _, n := range r.Ints {
			c.w.int(n)
		}
	case !r.Found:
		c.w.null()
	default:
		c.w.int(r.Int)
	}
}
