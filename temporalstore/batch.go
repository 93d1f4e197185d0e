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
	for i := 0; i < len(cmds); {
		j := i
		for j < len(cmds) && plainSet(&cmds[j]) {
			j++
		}
		if j-i >= 2 {
			e.setRun(ctx, cmds[i:j], rs[i:j], errs[i:j])
			i = j
			continue
		}
		rs[i], errs[i] = e.Execute(ctx, cmds[i])
		i++
	}
	return rs, errs
}

// plainSet reports whether c is a SET that needs no read: a blind append.
func plainSet(c *Command) bool {
	return c.Kind == KindSet && c.Cond == Always && !c.ReturnOld && !c.KeepTTL
}

// setRun writes a run of plain SETs, grouped per table shard in order.
func (e *Engine) setRun(ctx context.Context, cmds []Command, rs []Response, errs []error) {
	if err := ctx.Err(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return
	}
	type group struct {
		s    *shard.Shard
		idx  []int
		cmds []command.Command
	}
	var groups []*group
	byShard := map[*shard.Shard]*group{}
	now := e.opts.Now()
	for i := range cmds {
		c := &cmds[i]
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
		ttl := c.TTL
		if ttl == 0 {
			ttl = t.opts.DefaultTTL
		}
		var exp time.Time
		if ttl > 0 {
			exp = now.Add(ttl)
		}
		s := t.shards[sh]
		g := byShard[s]
		if g == nil {
			g = &group{s: s}
			byShard[s] = g
			groups = append(groups, g)
		}
		g.idx = append(g.idx, i)
		g.cmds = append(g.cmds, shard.StringSet(c.Key, c.Value, exp))
	}
	for _, g := range groups {
		err := engineErr(g.s.SetBatch(ctx, g.cmds))
		for _, i := range g.idx {
			rs[i], errs[i] = Response{Applied: err == nil}, err
		}
	}
}
