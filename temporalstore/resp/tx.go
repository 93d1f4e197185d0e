package resp

import (
	"bytes"
	"errors"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// txState is a connection's MULTI: the queued commands, whether queuing
// failed (EXEC then aborts), and the watched keys' versions.
type txState struct {
	queued []queued
	failed bool
}

type queued struct {
	spec *cmdSpec
	args [][]byte
}

func (t *txState) queue(spec *cmdSpec, args [][]byte) {
	// The reader reuses its buffers: keep a copy.
	cp := make([][]byte, len(args))
	for i, a := range args {
		cp[i] = append([]byte(nil), a...)
	}
	t.queued = append(t.queued, queued{spec, cp})
}

// txFail marks the open transaction as failed: a command was refused while
// queuing, so EXEC will abort (EXECABORT), as in Redis.
func (c *conn) txFail() {
	if c.tx != nil {
		c.tx.failed = true
	}
}

// watched is a WATCHed key, with the table of the database it was
// watched in (which SWAPDB may give other data since).
type watched struct {
	// w is the engine's watch (the key, its table), which notes any write
	// to the key, even one undone since; ver the key's version at WATCH.
	w   temporalstore.Watch
	ver uint64
}

// changed reports whether the watched key changed since WATCH: its
// version differs, or a write touched it. Inside EXEC's Atomic, ctx is
// Atomic's.
func (c *conn) changed(ex executor, w watched) (bool, error) {
	v, err := ex.KeyVersion(c.ctx, c.namespace, w.w.Table(), w.w.Key())
	if err != nil || v != w.ver {
		return true, err
	}
	return ex.Touched(c.ctx, w.w)
}

// unwatch ends the connection's watches.
func (c *conn) unwatch() {
	c.release(c.watch)
	c.watch = nil
}

// release ends the engine's watches of ws.
func (c *conn) release(ws []watched) {
	for _, w := range ws {
		c.s.opts.Engine.Unwatch(w.w)
	}
}

// watchTouched is the version of a watched key its own connection
// changed: no key has it, so EXEC fails.
const watchTouched = ^uint64(0)

// runWatched runs a write of a connection that watches keys, and marks
// the watched keys it touched without writing a record, which the
// engine's watch cannot note: an LTRIM that keeps every element, and a SET
// with an expiry in the past of an absent key. Redis counts both.
func (c *conn) runWatched(spec *cmdSpec, args [][]byte) {
	c.runTimed(spec, args)
	ltrim := spec.name == "ltrim"
	if c.lastFailed || !ltrim && !setOfAbsent(spec, args) {
		return
	}
	for _, k := range spec.keysOf(args) {
		for i := range c.watch {
			if !bytes.Equal(c.watch[i].w.Key(), k) {
				continue
			}
			v, err := c.engine().KeyVersion(c.ctx, c.namespace, c.table, k)
			// An LTRIM of a list still there; a SET that left no key.
			if err == nil && (ltrim && v != 0 || !ltrim && v == 0) {
				c.watch[i].ver = watchTouched
			}
		}
	}
}

// setOfAbsent reports whether a SET ran on a key absent before and after
// it: one with an expiry in the past, which Redis writes (touching the
// key) and which leaves no version here. An XX SET of an absent key does
// nothing.
func setOfAbsent(spec *cmdSpec, args [][]byte) bool {
	if spec.name != "set" {
		return false
	}
	for i := 3; i < len(args); i++ {
		switch {
		case is(args[i], "ex"), is(args[i], "px"), is(args[i], "exat"), is(args[i], "pxat"):
			i++ // the value
		case is(args[i], "xx"):
			return false
		}
	}
	return true
}

func registerTx() {
	register(
		&cmdSpec{name: "multi", arity: 1, flags: flagTxControl, run: func(c *conn, _ [][]byte) {
			if c.tx != nil {
				c.errorf("ERR MULTI calls can not be nested")
				return
			}
			c.tx = &txState{}
			c.w.ok()
		}},
		&cmdSpec{name: "discard", arity: 1, flags: flagTxControl, run: func(c *conn, _ [][]byte) {
			if c.tx == nil {
				c.errorf("ERR DISCARD without MULTI")
				return
			}
			c.tx = nil
			c.unwatch()
			c.w.ok()
		}},
		&cmdSpec{name: "watch", arity: -2, flags: flagTxControl, first: 1, last: -1, step: 1, run: func(c *conn, a [][]byte) {
			if c.tx != nil {
				c.errorf("ERR WATCH inside MULTI is not allowed")
				return
			}
			for _, k := range a[1:] {
				v, err := c.engine().KeyVersion(c.ctx, c.namespace, c.table, k)
				if err != nil {
					c.engineError(err)
					return
				}
				w, err := c.s.opts.Engine.WatchKey(c.ctx, c.namespace, c.table, k)
				if err != nil {
					c.engineError(err)
					return
				}
				c.watch = append(c.watch, watched{w, v})
			}
			c.w.ok()
		}},
		// UNWATCH is queued inside MULTI, as in Redis (EXEC unwatches
		// anyway).
		&cmdSpec{name: "unwatch", arity: 1, run: func(c *conn, _ [][]byte) {
			c.unwatch()
			c.w.ok()
		}},
		&cmdSpec{name: "exec", arity: 1, flags: flagTxControl, run: cmdExec},
	)
}

var errWatchFailed = errors.New("watched key changed")

func cmdExec(c *conn, _ [][]byte) {
	tx, watch := c.tx, c.watch
	// The queued commands run unwatched (runWatched is for the watcher's
	// writes before EXEC); the watches end with it.
	c.tx, c.watch = nil, nil
	defer c.release(watch)
	switch {
	case tx == nil:
		c.errorf("ERR EXEC without MULTI")
		return
	case tx.failed:
		c.errorf("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	for _, q := range tx.queued {
		// A write creates the database first, so that the transaction
		// holds its table rather than the stand-in of a database not
		// written yet.
		if q.spec.flags&flagWrite != 0 && !c.ensureDB() {
			return
		}
	}
	if crossesDatabases(c, tx, watch) || c.s.opts.Engine == nil {
		// Without an engine there are no watches, and nothing of the
		// engine's to isolate.
		execAcross(c, tx, watch)
		return
	}
	// Every key, watched ones included, must be in one key group (so on
	// one shard).
	var first []byte
	group := -1
	check := func(k []byte) bool {
		i, err := c.s.opts.Engine.KeyGroup(c.namespace, c.table, k)
		if err != nil {
			c.engineError(err)
			return false
		}
		if group >= 0 && i != group {
			c.errorf("CROSSSLOT Keys in request don't hash to the same shard (give them a common {hash tag})")
			return false
		}
		group, first = i, k
		return true
	}
	for _, w := range watch {
		if !check(w.w.Key()) {
			return
		}
	}
	for _, q := range tx.queued {
		for _, k := range q.spec.keysOf(q.args) {
			if !check(k) {
				return
			}
		}
	}
	if first == nil {
		// No keys at all (PING, ECHO ...): nothing to isolate.
		c.w.array(len(tx.queued))
		c.inExec = true
		for _, q := range tx.queued {
			c.runTimed(q.spec, q.args)
		}
		c.inExec = false
		return
	}
	err := c.engine().Atomic(c.ctx, c.namespace, c.table, first, func(atx *temporalstore.Tx) error {
		for _, w := range watch {
			changed, err := c.changed(atx, w)
			if err != nil {
				return err
			}
			if changed {
				return errWatchFailed
			}
		}
		// The commands run in the transaction, so the engine does not
		// take the shard's locks again.
		outer := c.atomic
		c.atomic, c.inExec = atx, true
		defer func() { c.atomic, c.inExec = outer, false }()
		c.w.array(len(tx.queued))
		for _, q := range tx.queued {
			c.runTimed(q.spec, q.args)
		}
		return nil
	})
	switch {
	case errors.Is(err, errWatchFailed):
		c.w.nullArray()
	case err != nil:
		c.engineError(err)
	}
}

// crossesDatabases reports whether a transaction reaches beyond the
// selected database: a key watched in another, or a command that
// addresses another (SELECT, MOVE, SWAPDB, COPY ... DB).
func crossesDatabases(c *conn, tx *txState, watch []watched) bool {
	for _, w := range watch {
		if w.w.Table() != c.table {
			return true
		}
	}
	for _, q := range tx.queued {
		switch q.spec.name {
		case "select", "move", "swapdb":
			return true
		case "copy":
			for _, a := range q.args[3:] {
				if is(a, "db") {
					return true
				}
			}
		}
	}
	return false
}

// execAcross runs a transaction that reaches other databases: the
// watched keys are checked, then the commands run in order, each
// isolated on its own but not together. Holding one shard of each table
// they touch, in an order fixed beforehand, is what isolating them would
// take; a SELECT in the queue decides the tables only as it runs.
func execAcross(c *conn, tx *txState, watch []watched) {
	for _, w := range watch {
		changed, err := c.changed(c.engine(), w)
		if err != nil {
			c.engineError(err)
			return
		}
		if changed {
			c.w.nullArray()
			return
		}
	}
	c.w.array(len(tx.queued))
	c.inExec = true
	defer func() { c.inExec = false }()
	for _, q := range tx.queued {
		c.runTimed(q.spec, q.args)
	}
}
