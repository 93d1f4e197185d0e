package resp

import (
	"math"
	"strconv"
	"strings"
	"time"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// The original's control state verbs, with its arities and replies, and
// two of this server's own, QUOTATAKE and PACE. Family verbs come in the
// original's spellings: H or COUNTER, CPC or DISTINCT, FOL or SELECTION.
//
//	CONTROLSTATEINCR key ts amount, CONTROLSTATEINCROPT key ts amount
//	precision ttl, CONTROLSTATECHANGE key ts value [precision ttl],
//	HCHANGE, CONTROLSTATECOUNT key s e, CONTROLSTATEQUERY key s e agg,
//	CONTROLSTATEDETAIL key s e [count], CONTROLSTATE{H,COUNTER,CPC,
//	DISTINCT,FOL,SELECTION}SET key ts amount, {H,COUNTER,CPC,DISTINCT,FOL,
//	SELECTION}SETANDGET key ts amount s e agg, ...SETANDGETOPT key ts
//	amount s e agg precision ttl uuid, {H,...}QUERY key s e agg,
//	FOLSET|SELECTIONSET key value occur ttl FIRST|LAST, FOLQUERY|
//	SELECTIONQUERY key, CONTROLSTATEMANAGER key [op is_distinct [ts ... |
//	start end]], CONTROLSTATEDEBUG key s e
//	QUOTATAKE key limit window_ms [amount]    [taken 0|1, used, retry after ms]
//	PACE key limit window_ms [burst [cost]]   [allowed 0|1, retry after ms]
func registerControl() {
	families := map[string]string{"h": "h", "counter": "h", "cpc": "cpc", "distinct": "cpc", "fol": "fol", "selection": "fol"}
	register(
		keyed("controlstateincr", 4, flagWrite, func(c *conn, a [][]byte) {
			cmd := c.command(ts.Command{Kind: ts.KindCIncr, Key: a[1]})
			if c.controlWrite(cmd, a[2], a[3], nil, nil) {
				c.okReplyIn(cmd)
			}
		}),
		keyed("controlstateincropt", 6, flagWrite, func(c *conn, a [][]byte) {
			cmd := c.command(ts.Command{Kind: ts.KindCIncr, Key: a[1]})
			if c.controlWrite(cmd, a[2], a[3], a[4], a[5]) {
				c.okReplyIn(cmd)
			}
		}),
		keyed("controlstatecount", 4, 0, func(c *conn, a [][]byte) {
			if cmd, ok := c.window(ts.Command{Kind: ts.KindCCount, Key: a[1]}, a[2:4]); ok {
				c.intReply(cmd)
			}
		}),
		keyed("controlstatequery", 5, 0, func(c *conn, a [][]byte) {
			if cmd, ok := c.window(ts.Command{Kind: ts.KindCQuery, Key: a[1], Aggregator: ts.AggregatorName(a[4])}, a[2:4]); ok {
				c.intReply(cmd)
			}
		}),
		keyed("controlstatedetail", -4, 0, func(c *conn, a [][]byte) {
			if len(a) > 5 {
				c.syntaxErr()
				return
			}
			if cmd, ok := c.window(ts.Command{Kind: ts.KindCDetail, Key: a[1]}, a[2:]); ok {
				c.pointsReply(cmd)
			}
		}),
		keyed("quotatake", -4, flagWrite, func(c *conn, a [][]byte) {
			// QUOTATAKE key limit window_ms [amount]: [taken 0|1, sum in
			// the window, retry after ms].
			if len(a) > 5 {
				c.syntaxErr()
				return
			}
			limit, ok := c.timestamp(a[2], "limit")
			if !ok {
				return
			}
			window, ok := c.millis(a[3], "window_ms")
			if !ok {
				return
			}
			amount := int64(1)
			if len(a) == 5 {
				if amount, ok = c.timestamp(a[4], "amount"); !ok {
					return
				}
			}
			r, ok := c.exec(ts.Command{Kind: ts.KindCTake, Key: a[1], Limit: limit, Window: window, Delta: amount})
			if !ok {
				return
			}
			c.w.array(3)
			c.w.int(map[bool]int64{true: 1}[r.Applied])
			c.w.int(r.Int)
			c.w.int(r.RetryAfter.Milliseconds())
		}),
	)
	register(keyed("controlstatemanager", -2, 0, func(c *conn, a [][]byte) {
		// CONTROLSTATEMANAGER key [op is_distinct [ts ... | start end]]:
		// field, value pairs.
		cmd := ts.Command{Kind: ts.KindCManager, Key: a[1]}
		if len(a) == 3 {
			c.syntaxErr()
			return
		}
		if len(a) >= 4 {
			op, ok := c.timestamp(a[2], "op_type")
			if !ok {
				return
			}
			cmd.Count = int(min(op, 1<<30))
			if is(a[3], "1") || is(a[3], "true") {
				cmd.Family = "cpc"
			}
			rest := a[4:]
			if cmd.Count == ts.ManagerQuery {
				cmd.Args = rest
			} else if len(rest) == 2 {
				var ok bool
				if cmd, ok = c.window(cmd, rest); !ok {
					return
				}
			} else if len(rest) != 0 {
				c.syntaxErr()
				return
			}
		}
		c.valuesReply(cmd)
	}))
	register(keyed("controlstatedebug", 4, 0, func(c *conn, a [][]byte) {
		if cmd, ok := c.window(ts.Command{Kind: ts.KindCDebug, Key: a[1]}, a[2:4]); ok {
			c.valuesReply(cmd)
		}
	}))
	register(keyed("pace", -4, flagWrite, func(c *conn, a [][]byte) {
		// PACE key limit window_ms [burst [cost]]: [allowed 0|1, retry
		// after ms].
		if len(a) > 6 {
			c.syntaxErr()
			return
		}
		var n [4]int64
		names := []string{"limit", "window_ms", "burst", "cost"}
		for i, x := range a[2:] {
			v, ok := c.timestamp(x, names[i])
			if !ok {
				return
			}
			n[i] = v
		}
		if n[1] > math.MaxInt64/int64(time.Millisecond) {
			c.errorf("ERR window_ms is out of range")
			return
		}
		cmd := ts.Command{Kind: ts.KindCPace, Key: a[1], Limit: n[0], Window: time.Duration(n[1]) * time.Millisecond, Delta: n[3]}
		if len(a) >= 5 {
			cmd.Count, cmd.HasCount = int(min(n[2], 1<<31)), true
		}
		r, ok := c.exec(cmd)
		if !ok {
			return
		}
		c.w.array(2)
		c.w.int(map[bool]int64{true: 1}[r.Applied])
		c.w.int(r.RetryAfter.Milliseconds())
	}))
	for _, change := range []struct{ name, family string }{{"controlstatechange", ""}, {"hchange", "h"}} {
		register(keyed(change.name, -4, flagWrite, func(c *conn, a [][]byte) {
			if len(a) != 4 && len(a) != 6 {
				c.errorf("ERR wrong number of arguments for '%s' command", change.name)
				return
			}
			key := a[1]
			if change.family != "" {
				key = ts.FamilyKey(change.family, key)
			}
			var prec, ttl []byte
			if len(a) == 6 {
				prec, ttl = a[4], a[5]
			}
			cmd := c.command(ts.Command{Kind: ts.KindCChange, Key: key, Value: a[3]})
			if c.controlWrite(cmd, a[2], nil, prec, ttl) {
				c.okReplyIn(cmd)
			}
		}))
	}
	for name, family := range families {
		upper := strings.ToUpper(name)
		register(
			keyed("controlstate"+name+"set", 4, flagWrite, func(c *conn, a [][]byte) {
				cmd := c.command(ts.Command{Kind: ts.KindCSetAndGet, Family: family, Key: a[1]})
				if c.controlWrite(cmd, a[2], a[3], nil, nil) {
					c.okReplyIn(cmd)
				}
			}),
			keyed(name+"setandget", 7, flagWrite, func(c *conn, a [][]byte) {
				cmd := c.command(ts.Command{Kind: ts.KindCSetAndGet, Family: family, Key: a[1], Aggregator: ts.AggregatorName(a[6])})
				if c.controlWrite(cmd, a[2], a[3], nil, nil) && c.windowIn(cmd, a[4:6]) {
					c.intReplyIn(cmd)
				}
			}),
			keyed(name+"setandgetopt", 10, flagWrite, func(c *conn, a [][]byte) {
				// precision and ttl 0 mean none; an empty uuid no
				// idempotency.
				cmd := c.command(ts.Command{Kind: ts.KindCSetAndGet, Family: family, Key: a[1], Aggregator: ts.AggregatorName(a[6]), RequestID: string(a[9])})
				if c.controlWrite(cmd, a[2], a[3], a[7], a[8]) && c.windowIn(cmd, a[4:6]) {
					c.intReplyIn(cmd)
				}
			}),
			keyed(name+"query", -2, 0, func(c *conn, a [][]byte) {
				switch {
				case len(a) == 2 && family == "fol":
					if r, ok := c.exec(ts.Command{Kind: ts.KindCSelection, Key: a[1]}); ok {
						c.bulkOrNull(r)
					}
				case len(a) == 5:
					if cmd, ok := c.window(ts.Command{Kind: ts.KindCFamilyQuery, Family: family, Key: a[1], Aggregator: ts.AggregatorName(a[4])}, a[2:4]); ok {
						c.intReply(cmd)
					}
				default:
					c.errorf("ERR wrong number of arguments for '%sQUERY' command", upper)
				}
			}),
		)
		if family == "fol" {
			register(keyed(name+"set", 6, flagWrite, func(c *conn, a [][]byte) {
				// FOLSET key value occur_time_ms ttl_ms FIRST|LAST
				cmd := ts.Command{Kind: ts.KindCSelect, Key: a[1], Value: a[2]}
				var ok bool
				if cmd.At, ok = c.timestamp(a[3], "occur_time_ms"); !ok {
					return
				}
				ttl, ok := c.millis(a[4], "ttl_ms")
				if !ok {
					return
				}
				cmd.TTL = ttl
				switch {
				case is(a[5], "first"):
				case is(a[5], "last"):
					cmd.SelectLast = true
				default:
					c.errorf("ERR selection type must be FIRST or LAST")
					return
				}
				c.okReply(cmd)
			}))
		}
	}
}

// controlWrite parses a control write's timestamp and amount (when given)
// and its precision and ttl (when given; 0 means none) into cmd.
func (c *conn) controlWrite(cmd *ts.Command, at, amount, precision, ttl []byte) bool {
	var ok bool
	if cmd.At, ok = c.timestamp(at, "timestamp_ms"); !ok {
		return false
	}
	if amount != nil {
		n, err := strconv.ParseInt(string(amount), 10, 64)
		if err != nil {
			c.errorf("ERR amount must be an integer")
			return false
		}
		cmd.Delta = n
	}
	if precision != nil {
		if cmd.PrecisionMs, ok = c.timestamp(precision, "precision_ms"); !ok {
			return false
		}
	}
	if ttl != nil {
		d, ok := c.millis(ttl, "ttl_ms")
		if !ok {
			return false
		}
		cmd.TTL = d
	}
	return true
}

// okReply runs cmd and replies +OK.
func (c *conn) okReply(cmd ts.Command) { c.okReplyIn(c.command(cmd)) }

// okReplyIn is okReply for a command in place (see execIn).
func (c *conn) okReplyIn(cmd *ts.Command) {
	if _, ok := c.execIn(cmd); ok {
		c.w.ok()
	}
}
