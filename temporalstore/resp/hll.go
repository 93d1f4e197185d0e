package resp

import (
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
	)
}
