package resp

import (
	"errors"
	"strings"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// registerHLL serves the HyperLogLog commands. PFCOUNT is not a write, as
// in Redis, though it may store the cardinality it computed in the value.
func registerHLL() {
	register(
		keyed("pfadd", -2, flagWrite, func(c *conn, a [][]byte) {
			c.intReply(ts.Command{Kind: ts.KindPFAdd, Key: a[1], Args: a[2:]})
		}),
		&cmdSpec{name: "pfcount", arity: -2, first: 1, last: -1, step: 1, run: func(c *conn, a [][]byte) {
			c.intReply(ts.Command{Kind: ts.KindPFCount, Keys: a[1:]})
		}},
		&cmdSpec{name: "pfmerge", arity: -2, flags: flagWrite, first: 1, last: -1, step: 1, run: func(c *conn, a [][]byte) {
			if _, ok := c.exec(ts.Command{Kind: ts.KindPFMerge, Dest: a[1], Keys: a[2:]}); ok {
				c.w.ok()
			}
		}},
		&cmdSpec{name: "pfdebug", arity: 3, flags: flagWrite, first: 2, last: 2, step: 1, run: cmdPFDebug},
		&cmdSpec{name: "pfselftest", arity: 1, run: func(c *conn, _ [][]byte) {
			if err := ts.HyperLogLogSelfTest(); err != nil {
				c.errorf("%s", err.Error())
				return
			}
			c.w.ok()
		}},
	)
}

// cmdPFDebug is PFDEBUG GETREG|TODENSE|ENCODING|DECODE key.
func cmdPFDebug(c *conn, a [][]byte) {
	cmd := c.command(ts.Command{Kind: ts.KindPFDebug, Key: a[2], Aggregator: string(a[1])})
	cmd.Namespace, cmd.Table, cmd.Tenant = c.namespace, c.table, c.tenant
	r, err := c.engine().ExecuteInPlace(c.ctx, cmd)
	switch {
	case errors.Is(err, ts.ErrNoSuchKey):
		c.errorf("ERR The specified key does not exist")
		return
	case err != nil:
		c.engineError(err)
		return
	}
	switch strings.ToLower(string(a[1])) {
	case "getreg":
		c.w.array(len(r.Ints))
		for _, v := range r.Ints {
			c.w.int(v)
		}
	case "todense":
		c.w.int(r.Int)
	default:
		c.w.simple(string(r.Value))
	}
}
