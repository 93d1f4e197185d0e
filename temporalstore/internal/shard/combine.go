package shard

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
)

// Read-modify-writes of one key each (MutateKey) are combined: they queue,
// and one of them, the leader, takes the append gate for a batch of queued
// mutations, runs their functions against the applied state, appends all
// their records in one batch (one write, one fsync), and then applies them
// in order and acknowledges them: the write path of every other write —
// log, then apply, then acknowledge — with the group commit that plain
// writes get. While a batch is being made durable the
// next queue forms, so under load batches grow with the number of writers.
//
// Each function reads the state as applied before the batch, except for
// string keys that earlier mutations of the batch set or deleted: a view
// of the batch shows those as they will be (pending), so a hot counter's
// increments share one append too, and nobody else sees them before they
// are durable and applied. A repeated key whose earlier mutation did
// anything else (a collection op, another key) is deferred: it goes back
// to the head of the queue, in order, and leads or joins the next batch,
// where it sees the first applied. Mutations of other keys queued behind
// it still join this batch (they were concurrent with it, so either order
// is theirs). A mutation that names no key (Mutate) runs in a batch of
// its own, and nothing queued after it passes it.

// mutation is one queued Mutate.
type mutation struct {
	ctx context.Context
	key []byte // nil: any keys; runs alone
	fn  MutateFunc
	err error
	// done is closed when the mutation has run; lead when it is to lead
	// the next batch instead.
	done, lead chan struct{}
}

// combiner is a shard's queue of mutations.
type combiner struct {
	mu      sync.Mutex
	queue   []*mutation
	leading bool
}

// maxCombine bounds a batch.
const maxCombine = 512

// MutateKey is Mutate for a function that reads and writes key alone: it
// is combined with concurrent ones on other keys into one log append (see
// combine.go).
func (s *Shard) MutateKey(ctx context.Context, key []byte, fn MutateFunc) error {
	if len(key) == 0 {
		return ErrEmptyKey
	}
	err := s.mutateKey(ctx, key, fn)
	if err == nil && !s.inTx(ctx) {
		s.spillIfOver(ctx)
	}
	return err
}

func (s *Shard) mutateKey(ctx context.Context, key []byte, fn MutateFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.inTx(ctx) {
		return s.mutate(ctx, fn)
	}
	return s.combine(ctx, key, fn)
}

// combine runs fn through the shard's combiner and returns its result.
func (s *Shard) combine(ctx context.Context, key []byte, fn MutateFunc) error {
	m := &mutation{ctx: ctx, key: key, fn: fn, done: make(chan struct{}), lead: make(chan struct{})}
	c := &s.comb
	c.mu.Lock()
	c.queue = append(c.queue, m)
	if c.leading {
		c.mu.Unlock()
		select {
		case <-m.done:
			return m.err
		case <-m.lead:
			// Handed the lead: m is first in the queue, and stays so,
			// since only a leader takes from it.
		}
		c.mu.Lock()
	}
	c.leading = true
	batch, rest := takeBatch(c.queue)
	c.queue = rest
	c.mu.Unlock()

	deferred := s.runMutations(batch)

	c.mu.Lock()
	if len(deferred) > 0 {
		c.queue = append(deferred, c.queue...)
	}
	if len(c.queue) > 0 {
		// The next batch has formed meanwhile: its first member leads it.
		close(c.queue[0].lead)
	} else {
		c.leading = false
	}
	c.mu.Unlock()
	return m.err
}

// takeBatch splits a queue into the batch its first mutation leads and
// what stays queued, in order: an unkeyed mutation alone; keyed ones up to
// the next unkeyed one, which nothing may pass, and at most maxCombine.
func takeBatch(queue []*mutation) (batch, rest []*mutation) {
	if queue[0].key == nil {
		return queue[:1:1], queue[1:]
	}
	n := 1
	for n < len(queue) && n < maxCombine && queue[n].key != nil {
		n++
	}
	return queue[:n:n], queue[n:]
}

// stringEffect returns the state key is left in by cmds when they only set
// or delete key as a string; false when they do anything else.
func stringEffect(key []byte, cmds []command.Command) (Item, bool) {
	var it Item
	for i := range cmds {
		c := &cmds[i]
		if !bytes.Equal(c.Key, key) {
			return Item{}, false
		}
		switch {
		case c.Op == OpSet && len(c.Args) == 1:
			// Clipped, so a later function appending to the value it
			// reads cannot write into this command's argument.
			v := c.Args[0]
			it = Item{Exists: true, Value: v[:len(v):len(v)]}
			if c.Expiry != 0 {
				it.Expiry = time.UnixMilli(c.Expiry)
			}
		case c.Op == OpDelete:
			it = Item{}
		default:
			return Item{}, false
		}
	}
	return it, true
}

// runMutations runs a batch under the append gate, as the file comment
// describes, and closes the done of every mutation it ran; it returns, in
// order, those it deferred to the next batch.
func (s *Shard) runMutations(batch []*mutation) (deferred []*mutation) {
	defer func() {
		// deferred is a subsequence of batch, in its order.
		d := deferred
		for _, m := range batch {
			if len(d) > 0 && d[0] == m {
				d = d[1:]
				continue
			}
			close(m.done)
		}
	}()
	s.gate.Lock()
	defer s.gate.Unlock()
	if err := s.settleLocked(); err != nil {
		for _, m := range batch {
			m.err = err
		}
		return nil
	}
	type staged struct {
		m    *mutation
		cmds []command.Command
	}
	var stages []staged
	var recs [][]byte
	limit := s.log.MaxRecordSize()
	// The functions read under the read lock, so readers proceed; nothing
	// applies while the gate is held.
	var (
		blocked map[string]bool // keys whose later mutations are deferred
		pending map[string]Item
	)
	s.mu.RLock()
	for _, m := range batch {
		k := string(m.key)
		if blocked[k] {
			deferred = append(deferred, m)
			continue
		}
		if m.err = m.ctx.Err(); m.err != nil {
			continue
		}
		v := &View{s: s, now: s.opts.Now().UnixMilli(), pending: pending}
		cmds, err := m.fn(v)
		if err != nil || len(cmds) == 0 {
			m.err = err
			continue
		}
		cmds = withAlso(m.ctx, cmds)
		if m.err = stamp(cmds, v.now); m.err != nil {
			continue
		}
		rec := encodeRecord(cmds)
		if len(rec) > limit {
			m.err = fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(rec), limit)
			continue
		}
		stages = append(stages, staged{m, cmds})
		recs = append(recs, rec)
		if m.key == nil {
			continue
		}
		if blocked == nil {
			blocked, pending = map[string]bool{}, map[string]Item{}
		}
		if it, ok := stringEffect(m.key, cmds); ok {
			pending[k] = it
		} else {
			blocked[k] = true
		}
	}
	s.mu.RUnlock()
	if len(recs) == 0 {
		return deferred
	}
	// Written whatever the callers' contexts say now: a record the log
	// took is applied on replay, so it is applied now too.
	first, err := s.log.AppendBatch(context.Background(), recs)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && first != s.applied+1 {
		err = fmt.Errorf("shard: the log put a batch at record %d, after %d", first, s.applied)
		first = s.applied + 1 // the record nothing will apply
	}
	if err != nil {
		// As for a plain write (appendApply): records the log may hold
		// are not applied, and nothing after them waits for them.
		err = fmt.Errorf("shard: append: %w", err)
		s.failLocked(err, first)
		for _, st := range stages {
			st.m.err = err
		}
		return deferred
	}
	for i, st := range stages {
		s.applyRecordLocked(first+uint64(i), recordShare(len(recs[i]), len(st.cmds)), st.cmds)
	}
	if s.waiting > 0 {
		s.turn.Broadcast()
	}
	return deferred
}

type alsoKey struct{}

// WithAlso returns a context under which every record a write of this
// shard makes also carries cmds (blind writes, typically a ledger entry),
// so they land atomically with it. Writes that make no record carry
// nothing.
func WithAlso(ctx context.Context, cmds ...command.Command) context.Context {
	return context.WithValue(ctx, alsoKey{}, cmds)
}

// withAlso appends ctx's WithAlso commands to cmds.
func withAlso(ctx context.Context, cmds []command.Command) []command.Command {
	also, _ := ctx.Value(alsoKey{}).([]command.Command)
	if len(also) == 0 {
		return cmds
	}
	return append(cmds, also...)
}
