package resp

import (
	"math"
	"math/rand/v2"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

func registerRandom() {
	register(
		&cmdSpec{name: "copy", arity: -3, flags: flagWrite, first: 1, last: 2, step: 1, run: cmdCopy},
		keyed("hrandfield", -2, 0, func(c *conn, a [][]byte) { randomRead(c, a, ts.KindHRandField, "withvalues") }),
		keyed("zrandmember", -2, 0, func(c *conn, a [][]byte) { randomRead(c, a, ts.KindZRandMember, "withscores") }),
		&cmdSpec{name: "randomkey", arity: 1, flags: flagNoTx, run: cmdRandomKey},
	)
}

// cmdCopy is COPY source destination [DB db] [REPLACE]. To another
// database it copies as MOVE moves (copyToDB), keeping the source.
func cmdCopy(c *conn, a [][]byte) {
	cmd := ts.Command{Kind: ts.KindCopy, Key: a[1], Dest: a[2]}
	db := int(c.db.Load())
	for i := 3; i < len(a); i++ {
		switch {
		case is(a[i], "replace"):
			cmd.Replace = true
		case is(a[i], "db") && i+1 < len(a):
			n, ok := c.intArg(a[i+1])
			if !ok {
				return
			}
			db = int(max(min(n, MaxDatabases), -1))
			i++
		default:
			c.syntaxErr()
			return
		}
	}
	if db < 0 || db >= c.s.opts.Databases {
		c.errorf("ERR DB index is out of range")
		return
	}
	if db != int(c.db.Load()) {
		c.copyToDB(cmd.Key, cmd.Dest, db, cmd.Replace, false)
		return
	}
	c.intReply(cmd)
}

// randCountArg reads the count of SRANDMEMBER, HRANDFIELD and
// ZRANDMEMBER: an integer from -(2^63-1) to 2^63-1, as Redis takes it.
func (c *conn) randCountArg(b []byte) (int64, bool) {
	n, ok := c.intArg(b)
	if ok && n == math.MinInt64 {
		c.errorf("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return 0, false
	}
	return n, ok
}

// randomRead is HRANDFIELD and ZRANDMEMBER: key [count [with]], where with
// is WITHVALUES or WITHSCORES.
func randomRead(c *conn, a [][]byte, kind ts.Kind, with string) {
	cmd := ts.Command{Kind: kind, Key: a[1]}
	if len(a) >= 3 {
		n, ok := c.randCountArg(a[2])
		if !ok {
			return
		}
		switch {
		case len(a) > 4 || len(a) == 4 && !is(a[3], with):
			c.syntaxErr()
			return
		case len(a) == 4 && (n < -math.MaxInt64/2 || n > math.MaxInt64/2):
			// Twice the count (fields and values) must fit.
			c.errorf("ERR value is out of range")
			return
		}
		cmd.HasCount, cmd.Count, cmd.WithValues = true, int(n), len(a) == 4
	}
	r, ok := c.exec(cmd)
	switch {
	case !ok:
	case !cmd.HasCount:
		c.bulkOrNull(r)
	case !cmd.WithValues:
		c.w.values(r.Values)
	case kind == ts.KindZRandMember:
		c.scoredReply(r, true)
	case c.w.resp3:
		c.w.array(len(r.Values) / 2)
		for i := 0; i+1 < len(r.Values); i += 2 {
			c.w.array(2)
			c.w.bulk(r.Values[i])
			c.w.bulk(r.Values[i+1])
		}
	default:
		c.w.values(r.Values)
	}
}

// cmdRandomKey is RANDOMKEY: a key of the first page of a scan that has
// any, picked at random; nil when there are none.
func cmdRandomKey(c *conn, _ [][]byte) {
	var cur uint64
	for {
		r, ok := c.exec(ts.Command{Kind: ts.KindScan, Cursor: cur, Count: 64})
		if !ok {
			return
		}
		if len(r.Keys) > 0 {
			c.w.bulk(r.Keys[rand.IntN(len(r.Keys))])
			return
		}
		if cur = r.Cursor; cur == 0 {
			c.w.null()
			return
		}
	}
}
