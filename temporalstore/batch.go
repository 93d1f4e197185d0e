package temporalstore

import (
	"context"
	"fmt"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// ExecuteBatch runs cmds in order, with the results Execute would give
// one by one: each command's response and error. Runs of two or more
// plain SETs (no NX/XX, GET or KEEPTTL) are written as one log record per
// shard they touch rather than one record each, so a client's pipeline of
// writes costs a few appends and fsyncs instead of one per write. Such a
// run is crash-atomic per shard; every other command runs alone, as by
// Execute, and sees the writes before it.
func (e *Engine) ExecuteBatch(ctx context.Context, cmds []Command) ([]Response, []error) {
	rs, errs := make([]Response, len(cmds)), make([]error, len(cmds))
	e.executeBatch(ctx, cmds, rs, errs)
	return rs, errs
}

// ExecuteBatchErrors is ExecuteBatch for a caller that needs the errors
// alone (a pipeline of SETs, answered +OK or an error): it appends them to
// errs and builds no responses.
func (e *Engine) ExecuteBatchErrors(ctx context.Context, cmds []Command, errs []error) []error {
	n := len(errs)
	errs = append(errs, make([]error, len(cmds))...)
	e.executeBatch(ctx, cmds, nil, errs[n:])
	return errs
}

// executeBatch is ExecuteBatch into rs (nil: responses dropped) and errs.
func (e *Engine) executeBatch(ctx context.Context, cmds []Command, rs []Response, errs []error) {
	for i := 0; i < len(cmds); {
		j := i
		for j < len(cmds) && plainSet(&cmds[j]) {
			j++
		}
		if j-i >= 2 {
			var run []Response
			if rs != nil {
				run = rs[i:j]
			}
			e.setRun(ctx, cmds[i:j], run, errs[i:j])
			if e.writes.hooked() {
				for k := i; k < j; k++ {
					if errs[k] == nil {
						e.wrote(ctx, nil, &cmds[k], Response{Applied: true})
					}
				}
			}
			i = j
			continue
		}
		r, err := e.Execute(ctx, cmds[i])
		if rs != nil {
			rs[i] = r
		}
		errs[i] = err
		i++
	}
}

// plainSet reports whether c is a SET that needs no read: a blind append.
func plainSet(c *Command) bool {
	return c.Kind == KindSet && c.Cond == Always && !c.ReturnOld && !c.KeepTTL
}

// setRun writes a run of plain SETs, grouped per table shard in order.
// The groups' commands share one allocation, sized by a first pass.
func (e *Engine) setRun(ctx context.Context, cmds []Command, rs []Response, errs []error) {
	if err := ctx.Err(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return
	}
	type group struct {
		s        *shard.Shard
		ttl      time.Duration // the table's default
		n, start int           // commands, and where they start in sets
		cmds     []command.Command
		idx      []int
	}
	var groups []group
	n := 0 // the commands accepted
	// of[i] is command i's group, -1 when it was refused.
	var ofBuf [256]int
	of := ofBuf[:0]
	if len(cmds) > len(ofBuf) {
		of = make([]int, 0, len(cmds))
	}
	for i := range cmds {
		c := &cmds[i]
		of = append(of, -1)
		switch {
		case len(c.Key) == 0:
			errs[i] = fmt.Errorf("%w: empty key", ErrInvalid)
			continue
		case c.TTL < 0:
			errs[i] = fmt.Errorf("%w: negative TTL", ErrInvalid)
			continue
		}
		t, sh, err := e.route(c)
		if err == nil {
			err = e.admit(t, sh, c)
		}
		if err != nil {
			errs[i] = err
			continue
		}
		s := t.shards[sh]
		g := 0
		for g < len(groups) && groups[g].s != s {
			g++
		}
		if g == len(groups) {
			groups = append(groups, group{s: s, ttl: t.opts.DefaultTTL})
		}
		groups[g].n++
		of[i] = g
		n++
	}
	sets := make([]command.Command, n)
	values := make([][]byte, n)
	idx := make([]int, n)
	at := 0
	for g := range groups {
		k := groups[g].n
		groups[g].start = at
		groups[g].cmds, groups[g].idx = sets[at:at:at+k], idx[at:at:at+k]
		at += k
	}
	now := e.opts.Now()
	for i, g := range of {
		if g < 0 {
			continue
		}
		c, grp := &cmds[i], &groups[g]
		ttl := c.TTL
		if ttl == 0 {
			ttl = grp.ttl
		}
		// The command's one argument is its slot of values.
		p := grp.start + len(grp.cmds)
		values[p] = c.Value
		set := command.Command{Op: shard.OpSet, Key: c.Key, Args: values[p : p+1 : p+1]}
		if ttl > 0 {
			set.Expiry = now.Add(ttl).UnixMilli()
		}
		grp.cmds = append(grp.cmds, set)
		grp.idx = append(grp.idx, i)
	}
	for _, g := range groups {
		err := engineErr(g.s.SetBatch(ctx, g.cmds))
		for _, i := range g.idx {
			errs[i] = err
			if rs != nil {
				rs[i] = Response{Applied: err == nil}
			}
		}
	}
}
