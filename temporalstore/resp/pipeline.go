package resp

import (
	"time"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// A pipelineRun gathers a pipeline's consecutive commands of one kind,
// already buffered, and runs them together. Replies are the same, in the
// same order; a command it does not accept ends the run and runs after it.
type pipelineRun interface {
	// accepts reports whether args belong in the run.
	accepts(c *conn, args [][]byte) bool
	add(args [][]byte)
	full() bool
	// run executes the gathered commands, writes their replies and
	// empties the run.
	run(c *conn)
}

// runFor returns the run args start, or nil for a command run alone.
func (c *conn) runFor(args [][]byte, st *serveState) pipelineRun {
	switch {
	case c.reply != replyOn, c.push.subscriptions > 0:
		return nil
	case c.s.opts.Engine == nil:
	case c.plainSet(args):
		return &st.sets
	case c.plainGet(args):
		return &st.gets
	}
	if spec := c.manySpec(args); spec != nil {
		st.many.spec = spec
		return &st.many
	}
	return nil
}

// manyRun gathers a pipeline's consecutive calls of an added verb with a
// RunMany (Command.RunMany), run together.
type manyRun struct {
	spec *cmdSpec
	// arena holds the calls' arguments, copied (the reader reuses its
	// buffers); ends[i] is where argument i ends in it, counts[j] how
	// many arguments call j has.
	arena  []byte
	ends   []int
	counts []int
}

// manySpec is the spec of args' verb when it has a RunMany and this
// connection may run the call now, outside a transaction: nil otherwise.
func (c *conn) manySpec(args [][]byte) *cmdSpec {
	// Compared by name, not looked up: every request comes this way,
	// and dispatch looks it up again.
	var spec *cmdSpec
	for _, s := range c.s.cmds.many {
		if len(args[0]) == len(s.name) && is(args[0], s.name) {
			spec = s
			break
		}
	}
	switch {
	case spec == nil || c.tx != nil || c.s.opts.Cluster != nil:
		return nil
	case spec.arity > 0 && len(args) != spec.arity, spec.arity < 0 && len(args) < -spec.arity:
		return nil
	case spec.flags&flagWrite != 0 && c.access != accessWrite, c.access == accessNone, c.tenant != "":
		return nil
	}
	return spec
}

func (r *manyRun) accepts(c *conn, args [][]byte) bool { return c.manySpec(args) == r.spec }
func (r *manyRun) full() bool                          { return len(r.counts) >= maxSetRun }

func (r *manyRun) add(args [][]byte) {
	for _, a := range args {
		r.arena = append(r.arena, a...)
		r.ends = append(r.ends, len(r.arena))
	}
	r.counts = append(r.counts, len(args))
}

// calls are the gathered calls' arguments, slices of the arena.
func (r *manyRun) calls() [][][]byte {
	out := make([][][]byte, 0, len(r.counts))
	from, at := 0, 0
	for _, n := range r.counts {
		call := make([][]byte, n)
		for i := range n {
			end := r.ends[at]
			call[i] = r.arena[from:end:end]
			from, at = end, at+1
		}
		out = append(out, call)
	}
	return out
}

// run serves the gathered calls and writes their replies.
func (r *manyRun) run(c *conn) {
	calls := r.calls()
	before, start := c.errReplies, c.s.clock()
	c.noteCall(r.spec)
	r.spec.runMany(c, calls)
	failed := c.errReplies - before
	c.errReplies = before
	c.countRun(r.spec, len(calls), c.s.clock()-start, failed, func(i int) [][]byte { return calls[i] })
	c.last.Store(&r.spec.name)
	r.arena, r.ends, r.counts = r.arena[:0], r.ends[:0], r.counts[:0]
}

// gather adds args, then the buffered commands r accepts after it, to r
// and runs them. It returns the command that ended the run (or the error
// reading it), which the caller handles next; ended is false when the
// run ended with the buffer or at its bound.
func (c *conn) gather(r pipelineRun, args [][]byte) (next [][]byte, ended bool, err error) {
	r.add(args)
	for !r.full() && c.r.br.Buffered() > 0 {
		next, err = c.r.next()
		if err != nil || !r.accepts(c, next) {
			ended = true
			break
		}
		r.add(next)
	}
	r.run(c)
	if !ended {
		return nil, false, nil
	}
	return next, true, err
}

// maxSetRun bounds the SETs one pipelined run gathers, and so the replies
// and copied arguments it holds.
const maxSetRun = 256

// setRun gathers a pipeline's consecutive plain SETs (SET key value, with
// no option) so that the engine writes them as one record per shard
// (Engine.ExecuteBatchErrors) instead of one append each. Replies are the same,
// in the same order; a command that is not a plain SET ends the run and
// runs after it, so it sees every write before it.
type setRun struct {
	// arena holds the keys and values, copied (the reader reuses its
	// buffers); ends[i] is where SET i's key and value end in it.
	arena []byte
	ends  [][2]int
	cmds  []ts.Command
	errs  []error
}

// plainSet reports whether args are a SET with no option that this
// connection may run now, outside a transaction, with a value a run
// takes.
func (c *conn) plainSet(args [][]byte) bool {
	return len(args) == 3 && is(args[0], "set") && len(args[2]) <= maxRunValue && c.tx == nil && c.access == accessWrite && len(args[1]) > 0 && c.dbReady && c.local(args[1], true)
}

// maxRunValue bounds the values a run of SETs takes: a larger one is SET
// alone, in a record of its own, which the log may keep in a file of its
// own (a large value's reads then read no neighbour's, nor its neighbours'
// reads it), and is not copied into the run's arena.
const maxRunValue = 512 << 10

func (r *setRun) accepts(c *conn, args [][]byte) bool { return c.plainSet(args) }
func (r *setRun) full() bool                          { return len(r.ends) >= maxSetRun }

func (r *setRun) add(args [][]byte) {
	r.arena = append(r.arena, args[1]...)
	k := len(r.arena)
	r.arena = append(r.arena, args[2]...)
	r.ends = append(r.ends, [2]int{k, len(r.arena)})
}

// run executes the gathered SETs and writes their replies.
func (r *setRun) run(c *conn) {
	// The commands are kept from run to run with only their key and
	// value changing: a Command is 784 bytes, which writing afresh for
	// every SET cost more than the rest of the run's handling.
	for len(r.cmds) < len(r.ends) {
		r.cmds = append(r.cmds, ts.Command{Kind: ts.KindSet})
	}
	from := 0
	for i, e := range r.ends {
		r.cmds[i].Key, r.cmds[i].Value = r.arena[from:e[0]:e[0]], r.arena[e[0]:e[1]:e[1]]
		// The database selected may have changed since the last run.
		r.cmds[i].Namespace, r.cmds[i].Table, r.cmds[i].Tenant = c.namespace, c.table, c.tenant
		from = e[1]
	}
	start := c.s.clock()
	r.errs = c.s.opts.Engine.ExecuteBatchErrors(c.ctx, r.cmds[:len(r.ends)], r.errs[:0])
	failed := 0
	for _, err := range r.errs {
		if err != nil {
			c.engineError(err)
			failed++
		} else {
			c.w.ok()
		}
	}
	c.countRun(setSpec, len(r.errs), c.s.clock()-start, failed, func(i int) [][]byte {
		from := 0
		if i > 0 {
			from = r.ends[i-1][1]
		}
		e := r.ends[i]
		return [][]byte{[]byte("set"), r.arena[from:e[0]], r.arena[e[0]:e[1]]}
	})
	c.last.Store(&lastSet)
	clear(r.errs) // keeps no error alive
	r.arena, r.ends = r.arena[:0], r.ends[:0]
}

// getRun gathers pipelined GETs, run together by Engine.AppendGets so that
// their lookups' cache misses overlap.
type getRun struct {
	// arena holds the keys, copied (the reader reuses its buffers);
	// ends[i] is where GET i's key ends in it.
	arena []byte
	ends  []int
	keys  [][]byte
	reads []ts.GetRead
	vals  []byte
}

// maxGetRun bounds the GETs one run gathers.
const maxGetRun = 64

// plainGet reports whether args are a GET this connection may run now,
// outside a transaction.
func (c *conn) plainGet(args [][]byte) bool {
	return len(args) == 2 && is(args[0], "get") && c.tx == nil && c.access != accessNone && len(args[1]) > 0 && c.local(args[1], false)
}

func (r *getRun) accepts(c *conn, args [][]byte) bool { return c.plainGet(args) }
func (r *getRun) full() bool                          { return len(r.ends) >= maxGetRun }

func (r *getRun) add(args [][]byte) {
	r.arena = append(r.arena, args[1]...)
	r.ends = append(r.ends, len(r.arena))
}

// run executes the gathered GETs and writes their replies.
func (r *getRun) run(c *conn) {
	r.keys = r.keys[:0]
	start := 0
	for _, e := range r.ends {
		r.keys = append(r.keys, r.arena[start:e:e])
		start = e
	}
	if cap(r.reads) < len(r.keys) {
		r.reads = make([]ts.GetRead, len(r.keys))
	}
	reads := r.reads[:len(r.keys)]
	began := c.s.clock()
	r.vals = c.s.opts.Engine.AppendGets(c.ctx, c.tenant, c.namespace, c.table, r.keys, r.vals[:0], reads)
	failed := 0
	for _, g := range reads {
		switch {
		case g.Err != nil:
			c.engineError(g.Err)
			failed++
		case !g.Found:
			c.w.null()
		default:
			c.w.bulk(r.vals[g.Start:g.End])
		}
	}
	c.countRun(getSpec, len(reads), c.s.clock()-began, failed, func(i int) [][]byte {
		return [][]byte{[]byte("get"), r.keys[i]}
	})
	c.last.Store(&lastGet)
	clear(reads) // keeps no error alive
	if cap(r.vals) > maxScratch {
		r.vals = nil
	}
	r.arena, r.ends = r.arena[:0], r.ends[:0]
}

// countRun counts a pipelined run of n calls of spec (see observe); its
// error replies were counted, so the next command starts from none.
func (c *conn) countRun(spec *cmdSpec, n int, took time.Duration, failed int, args func(i int) [][]byte) {
	c.s.stats.commands.Add(int64(n))
	c.observe(spec, n, took, failed, args)
	c.errReplies = 0
}

// The names the pipelined runs record as the last command.
var lastSet, lastGet = "set", "get"
