package resp

import (
	"math"
	"strconv"
	"strings"
	"time"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// The original's feature series verbs, with its arities and replies, and
// FAGGS. A window's points are an array of [timestamp, value] pairs, the
// timestamp an integer, oldest first:
//
//	FAPPEND key ts value [MAXAGE ms]     +OK (MAXAGE drops points older
//	                                     than now - ms)
//	FAPPENDPOLICY key ts value policy    :1 when anything changed
//	                                     (UPSERT, FIRST|NX, UPDATE|XX, BLOCK)
//	FQUERY key start end [count]         [[ts, value], ...]
//	FQUERYFILTER key s e count field op val
//	FQUERYFILTERSTR key s e count "field op val" ...
//	FREPLACE key s e ts value            +OK
//	FDEL key                             +OK
//	FAGG key s e agg [count]             integer (sum, avg, min, max,
//	                                     first, last, count), or a float
//	                                     (sumf, avgf, minf, maxf, pNN,
//	                                     decay:H) or top:K's pairs
//	FAGGS key s e agg [agg ...]          one reply per aggregator
func registerFeatures() {
	register(
		keyed("fappend", -4, flagWrite, func(c *conn, a [][]byte) {
			// FAPPEND key ts value [MAXAGE ms]: MAXAGE drops the key's
			// points older than now − ms.
			if len(a) != 4 && (len(a) != 6 || !is(a[4], "maxage")) {
				c.syntaxErr()
				return
			}
			p, ok := c.point(a[2], a[3])
			if !ok {
				return
			}
			cmd := c.command(ts.Command{Kind: ts.KindFAppend, Key: a[1], Points: c.onePoint(p)})
			if len(a) == 6 {
				age, ok := c.millis(a[5], "maxage")
				if !ok {
					return
				}
				cmd.MaxAge = age
			}
			c.okReplyIn(cmd)
		}),
		keyed("fappendpolicy", 5, flagWrite, func(c *conn, a [][]byte) {
			p, ok := c.point(a[2], a[3])
			if !ok {
				return
			}
			policy, ok := ts.ParseWritePolicy(string(a[4]))
			if !ok {
				c.errorf("ERR unknown write policy '%s' (UPSERT, FIRST|NX|INSERT_IF_ABSENT, UPDATE|XX|REPLACE_EXISTING, BLOCK)", a[4])
				return
			}
			c.intReplyIn(c.command(ts.Command{Kind: ts.KindFAppend, Key: a[1], Points: c.onePoint(p), Policy: policy}))
		}),
		keyed("fquery", -4, 0, func(c *conn, a [][]byte) {
			if len(a) > 5 {
				c.syntaxErr()
				return
			}
			if cmd := c.command(ts.Command{Kind: ts.KindFQuery, Key: a[1]}); c.windowIn(cmd, a[2:]) {
				c.pointsReplyIn(cmd)
			}
		}),
		keyed("fqueryfilter", 8, 0, func(c *conn, a [][]byte) {
			cmd, ok := c.window(ts.Command{Kind: ts.KindFQueryFiltered, Key: a[1]}, a[2:5])
			if !ok {
				return
			}
			f, ok := c.filter(string(a[5]), string(a[6]), string(a[7]))
			if ok {
				cmd.Filters = []ts.Filter{f}
				c.pointsReply(cmd)
			}
		}),
		keyed("fqueryfilterstr", -6, 0, func(c *conn, a [][]byte) {
			cmd, ok := c.window(ts.Command{Kind: ts.KindFQueryFiltered, Key: a[1]}, a[2:5])
			if !ok {
				return
			}
			for _, s := range a[5:] {
				fs := strings.Fields(string(s))
				if len(fs) != 3 {
					c.errorf("ERR filter '%s' is not \"field op value\"", s)
					return
				}
				f, ok := c.filter(fs[0], fs[1], fs[2])
				if !ok {
					return
				}
				// A later filter of a field replaces the earlier one, as
				// in the original's string parser.
				replaced := false
				for i := range cmd.Filters {
					if cmd.Filters[i].Field == f.Field {
						cmd.Filters[i], replaced = f, true
					}
				}
				if !replaced {
					cmd.Filters = append(cmd.Filters, f)
				}
			}
			c.pointsReply(cmd)
		}),
		keyed("freplace", 6, flagWrite, func(c *conn, a [][]byte) {
			cmd, ok := c.window(ts.Command{Kind: ts.KindFReplace, Key: a[1]}, a[2:4])
			if !ok {
				return
			}
			p, ok := c.point(a[4], a[5])
			if !ok {
				return
			}
			cmd.Points = []ts.Point{p}
			if _, ok := c.exec(cmd); ok {
				c.w.ok()
			}
		}),
		keyed("fdel", 2, flagWrite, func(c *conn, a [][]byte) {
			if _, ok := c.exec(ts.Command{Kind: ts.KindFDelete, Key: a[1]}); ok {
				c.w.ok()
			}
		}),
		keyed("fagg", -5, 0, func(c *conn, a [][]byte) {
			if len(a) > 6 {
				c.syntaxErr()
				return
			}
			args := append([][]byte{a[2], a[3]}, a[5:]...) // start, end, count?
			cmd, ok := c.window(ts.Command{Kind: ts.KindFAgg, Key: a[1], Aggregator: string(a[4])}, args)
			if !ok {
				return
			}
			if ts.IsPlainAggregator(cmd.Aggregator) {
				c.intReply(cmd)
				return
			}
			if r, ok := c.exec(cmd); ok {
				c.aggReply(r.Aggregates[0])
			}
		}),
		keyed("faggs", -5, 0, func(c *conn, a [][]byte) {
			// FAGGS key start end agg [agg ...]: one reply per aggregator.
			cmd, ok := c.window(ts.Command{Kind: ts.KindFAgg, Key: a[1]}, a[2:4])
			if !ok {
				return
			}
			for _, x := range a[4:] {
				cmd.Aggregators = append(cmd.Aggregators, string(x))
			}
			r, ok := c.exec(cmd)
			if !ok {
				return
			}
			c.w.array(len(r.Aggregates))
			for _, ag := range r.Aggregates {
				c.aggReply(ag)
			}
		}),
	)
}

// timestamp parses a timestamp in Unix ms.
func (c *conn) timestamp(b []byte, name string) (int64, bool) {
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || n < 0 {
		c.errorf("ERR %s must be an unsigned integer", name)
		return 0, false
	}
	return n, true
}

// millis reads a duration in milliseconds (timestamp's rules), refusing
// one no time.Duration holds (292 years), which would wrap around.
func (c *conn) millis(b []byte, name string) (time.Duration, bool) {
	n, ok := c.timestamp(b, name)
	if !ok {
		return 0, false
	}
	if n > math.MaxInt64/int64(time.Millisecond) {
		c.errorf("ERR %s is out of range", name)
		return 0, false
	}
	return time.Duration(n) * time.Millisecond, true
}

func (c *conn) point(tsArg, value []byte) (ts.Point, bool) {
	n, ok := c.timestamp(tsArg, "timestamp_ms")
	return ts.Point{TS: n, Value: value}, ok
}

// window parses start, end and an optional count into cmd.
func (c *conn) window(cmd ts.Command, a [][]byte) (ts.Command, bool) {
	ok := c.windowIn(&cmd, a)
	return cmd, ok
}

// windowIn is window for a command in place.
func (c *conn) windowIn(cmd *ts.Command, a [][]byte) bool {
	var ok bool
	if cmd.Start, ok = c.timestamp(a[0], "start_ms"); !ok {
		return false
	}
	if cmd.End, ok = c.timestamp(a[1], "end_ms"); !ok {
		return false
	}
	if len(a) > 2 {
		n, ok := c.timestamp(a[2], "count")
		if !ok {
			return false
		}
		cmd.Count, cmd.HasCount = int(min(n, 1<<31)), true
	}
	return true
}

func (c *conn) filter(field, op, value string) (ts.Filter, bool) {
	o, ok := ts.ParseFilterOp(op)
	if !ok {
		c.errorf("ERR unknown filter operator '%s'", op)
		return ts.Filter{}, false
	}
	v, err := strconv.ParseUint(value, 10, 64)
	if err != nil {
		c.errorf("ERR filter value must be an unsigned integer")
		return ts.Filter{}, false
	}
	return ts.Filter{Field: strings.ToLower(field), Op: o, Value: v}, true
}

// pointsReply runs cmd and writes its points as [timestamp, value] pairs.
// A window read puts them in the connection's buffer, which they leave
// when written.
func (c *conn) pointsReply(cmd ts.Command) { c.pointsReplyIn(c.command(cmd)) }

// pointsReplyIn is pointsReply for a command in place (see execIn).
func (c *conn) pointsReplyIn(cmd *ts.Command) {
	cmd.Into = &c.points
	if r, ok := c.execIn(cmd); ok {
		c.w.array(len(r.Points))
		for _, p := range r.Points {
			c.w.pair(p.TS, p.Value)
		}
	}
	c.points.Shrink(maxScratch)
}

// aggReply writes one aggregate: an integer, a float as a bulk string, or
// top:K's [value, count] pairs.
func (c *conn) aggReply(a ts.Aggregate) {
	switch {
	case a.Top != nil:
		c.w.array(len(a.Top))
		for _, tv := range a.Top {
			c.w.array(2)
			c.w.bulk(tv.Value)
			c.w.int(tv.Count)
		}
	case a.IsFloat:
		c.w.bulk(strconv.AppendFloat(nil, a.Float, 'f', -1, 64))
	default:
		c.w.int(a.Int)
	}
}
