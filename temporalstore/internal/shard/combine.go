package shard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/keyindex"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
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
// keys that earlier mutations of the batch changed: a view of the batch
// shows those as they will be (pending) — a string as set or deleted, a
// collection as a copy with the earlier commands applied by fold, which
// shares applyOp with the apply — so the updates of a hot counter or a hot
// collection share one append too, and nobody else sees them before they
// are durable and applied. The copy is made only when a key repeats. A
// repeated key whose earlier mutation did something fold does not follow
// (wrote another key, renamed) or whose collection is over foldLimit is
// deferred: it goes back to the head of the queue, in order, and leads or
// joins the next batch, where it sees the first applied. Mutations of
// other keys queued behind it still join this batch (they were concurrent
// with it, so either order is theirs). A mutation that names no key
// (Mutate) runs in a batch of its own, and nothing queued after it passes
// it.

// mutation is one queued Mutate. Mutations are pooled: one is its
// caller's from combine's start to its return, and nobody else touches it
// after waking it.
type mutation struct {
	ctx context.Context
	key []byte // nil: any keys; runs alone
	fn  MutateFunc
	// also are the records of the handle's WithAlso.
	also []command.Command
	err  error
	// waits is set for a mutation queued behind a leader: it waits on
	// wake, and lead says why it was woken: to lead the next batch, or
	// because it has run. A mutation that led its own batch at once is
	// never woken.
	waits, lead bool
	wake        chan struct{} // buffered 1: a wake never blocks the waker
}

// combiner is a shard's queue of mutations.
type combiner struct {
	mu      sync.Mutex
	queue   []*mutation
	leading bool
	// spare is the array of the last batch taken, for the queue to grow
	// in once it is empty again.
	spare []*mutation
	// free pools mutations with their wake channels.
	free sync.Pool
	// scratch is the batch's working state, reused batch after batch
	// (runMutations runs under the shard's gate, one at a time).
	scratch batchScratch
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
	if err == nil && !s.held {
		s.spillIfOver(ctx)
	}
	return err
}

func (s *Shard) mutateKey(ctx context.Context, key []byte, fn MutateFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.held {
		return s.mutate(ctx, fn)
	}
	return s.combine(ctx, key, fn)
}

// combine runs fn through the shard's combiner and returns its result.
func (s *Shard) combine(ctx context.Context, key []byte, fn MutateFunc) error {
	c := &s.comb
	m, ok := c.free.Get().(*mutation)
	if !ok {
		m = &mutation{wake: make(chan struct{}, 1)}
	}
	m.ctx, m.key, m.fn, m.also = ctx, key, fn, s.also
	defer func() {
		*m = mutation{wake: m.wake}
		c.free.Put(m)
	}()
	c.mu.Lock()
	if cap(c.queue) == 0 {
		c.queue, c.spare = c.spare, nil
	}
	c.queue = append(c.queue, m)
	if c.leading {
		m.waits = true
		c.mu.Unlock()
		<-m.wake
		if !m.lead {
			return m.err
		}
		// Handed the lead: m is first in the queue, and stays so, since
		// only a leader takes from it.
		c.mu.Lock()
		m.waits, m.lead = false, false
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
	// The batch's array is the next empty queue's: batch's capacity ends
	// where the queue that was left behind begins.
	clear(batch)
	c.spare = batch[:0]
	if len(c.queue) > 0 {
		// The next batch has formed meanwhile: its first member leads it.
		next := c.queue[0]
		next.lead = true
		next.wake <- struct{}{}
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

// foldLimit bounds the collections a batch copies (Object.CloneBytes) to
// show a repeated key its earlier mutations' effect: a bigger one is
// deferred instead. Deferring costs a durable shard's repeated key an
// fsync, far more than copying a megabyte; an async shard's, a write, so
// it copies small collections only.
func (s *Shard) foldLimit() int64 {
	if s.opts.Durable {
		return 1 << 20
	}
	return 64 << 10
}

// batchKey is what a batch knows of one key its mutations named: the
// commands of the mutations so far, until a second one needs the key's
// state; then that state as those commands leave it (pending), or blocked
// when it cannot be followed.
type batchKey struct {
	cmds    []command.Command
	folded  bool
	blocked bool
}

// foldable reports whether cmds only change key (no other key, nothing
// fold cannot follow).
func foldable(key []byte, cmds []command.Command) bool {
	for i := range cmds {
		switch c := &cmds[i]; {
		case !bytes.Equal(c.Key, key), c.Op == OpRename, c.Op == OpImage, c.Op == OpSet && len(c.Args) != 1:
			return false
		}
	}
	return true
}

// pendingOf returns key's state as the applied state (the shard's, read
// lock held) left by cmds, foldable ones of key: what the batch's next
// mutation of key must see. A collection is copied first; one over
// foldLimit, or one that cannot be copied, yields false.
func (s *Shard) pendingOf(key []byte, cmds []command.Command) (Item, bool) {
	it, err := s.lookupLocked(key, cmds[0].Time)
	if err != nil {
		return Item{}, false
	}
	it.spilled = keyindex.Entry{} // the copy below is the batch's, never made resident
	if it.Obj != nil {
		if it.Obj.CloneBytes() > s.foldLimit() {
			return Item{}, false
		}
		if it.Obj, err = it.Obj.Clone(); err != nil {
			return Item{}, false
		}
	}
	for i := range cmds {
		if !fold(&it, key, &cmds[i]) {
			return Item{}, false
		}
	}
	return it, true
}

// fold applies c, a command of key, to it, key's pending state, as
// applyLocked will apply it to the shard; it.Obj is the batch's own copy,
// changed in place. False: c is one fold does not follow.
func fold(it *Item, key []byte, c *command.Command) bool {
	switch c.Op {
	case OpSet:
		// Clipped, so a later function appending to the value it reads
		// cannot write into this command's argument.
		v := c.Args[0]
		*it = Item{Exists: true, Value: v[:len(v):len(v)], Expiry: expiryTime(c.Expiry)}
		return true
	case OpDelete:
		*it = Item{}
		return true
	case OpRename, OpImage:
		return false
	}
	// A collection op or an expiry, as applyObjectLocked and objectAt
	// take them: an expired key gives way first.
	if it.Exists && !it.Expiry.IsZero() && it.Expiry.UnixMilli() <= c.Time {
		*it = Item{}
	}
	if c.Op == OpExpireAt {
		if it.Obj != nil { // strings and absent keys are left alone
			it.Obj.Expiry, it.Expiry = c.Expiry, expiryTime(c.Expiry)
		}
		return true
	}
	k := opKind(c.Op)
	switch {
	case it.Exists && (it.Obj == nil || it.Obj.Kind != k):
		return true // a string or another kind: apply does nothing
	case !it.Exists:
		if !creates(c.Op) || k == 0 {
			return true
		}
		*it = Item{Exists: true, Obj: object.New(k, key)}
	}
	applyOp(it.Obj, c)
	if it.Obj.Len() == 0 {
		*it = Item{}
	}
	return true
}

// runMutations runs a batch under the append gate, as the file comment
// describes, and wakes every waiting mutation it ran; it returns, in
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
			if m.waits {
				m.wake <- struct{}{}
			}
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
	sc := &s.comb.scratch
	defer sc.reset()
	// A panic outside the functions (evalSafely contains theirs) and the
	// applies (which skip their record) is answered here, so that the
	// combiner, whose leader this goroutine is, goes on: before the append
	// nothing was written and every undecided mutation fails with it;
	// after, the records not yet applied are in the log, so the shard fails
	// as on a failed append, and replay applies them. It runs before the
	// scratch is reset and after the lock is let go.
	var appended bool
	var first uint64
	applied := 0
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		perr := s.contained(r)
		if appended {
			s.locked(func() { s.failLocked(perr, first+uint64(applied)) })
			for _, st := range sc.stages[applied:] {
				st.m.err = perr
			}
			return
		}
		d := deferred
		for _, m := range batch {
			if len(d) > 0 && d[0] == m {
				d = d[1:]
			} else if m.err == nil {
				m.err = perr
			}
		}
	}()
	limit := s.log.MaxRecordSize()
	// The functions read under the read lock, so readers proceed; nothing
	// applies while the gate is held.
	s.rlocked(func() { deferred = s.decideLocked(batch, limit, sc) })
	stages, recs := sc.stages, sc.recs
	if len(recs) == 0 {
		return deferred
	}
	// Written whatever the callers' contexts say now: a record the log
	// took is applied on replay, so it is applied now too.
	var err error
	first, err = s.log.AppendBatch(context.Background(), recs)
	appended = err == nil
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && first != s.applied+1 {
		s.applyReadyLocked() // a replicated log's foreign records before it
	}
	logFault := err != nil && !errors.Is(err, storage.ErrClosed)
	if err == nil && first != s.applied+1 {
		err = fmt.Errorf("shard: the log put a batch at record %d, after %d", first, s.applied)
		first = s.applied + 1 // the record nothing will apply
	}
	if err != nil && refused(err) {
		for _, st := range stages {
			st.m.err = err
		}
		return deferred
	}
	if err != nil {
		// As for a plain write (appendApply): records the log may hold
		// are not applied, and nothing after them waits for them.
		var top uint64 // the last index the log gave, if it gave any
		if first != 0 {
			top = first + uint64(len(recs)) - 1
		}
		err = s.appendFailedLocked(err, logFault, first, top)
		for _, st := range stages {
			st.m.err = err
		}
		return deferred
	}
	var poisoned map[string]bool // keys whose record in this batch was skipped
	for i, st := range stages {
		idx := first + uint64(i)
		if st.m.key != nil && poisoned[keyView(st.m.key)] {
			// It was decided over the skipped write's effect (the
			// batch's view folds a key's writes): it is skipped too.
			st.m.err = fmt.Errorf("%w: an earlier write to its key in the same batch failed", ErrInternal)
			if err := s.skipLocked(idx); err != nil {
				s.failLocked(err, idx)
				st.m.err = err
			}
			s.applied = idx
			applied = i + 1
			continue
		}
		if setsKeys(st.cmds) {
			s.keepWrittenLocked(idx, bytes.Clone(recs[i]), len(st.cmds))
		}
		if err := s.applyRecordLocked(idx, recordShare(len(recs[i]), len(st.cmds)), st.cmds); err != nil {
			st.m.err = err
			if st.m.key != nil {
				if poisoned == nil {
					poisoned = map[string]bool{}
				}
				poisoned[keyView(st.m.key)] = true
			}
		}
		applied = i + 1
	}
	if s.waiting > 0 {
		s.turn.Broadcast()
	}
	return deferred
}

// decideLocked runs the batch's functions in turn, under the read lock,
// staging the records of those that write (sc.stages, sc.recs), and
// returns the mutations left for the next batch.
func (s *Shard) decideLocked(batch []*mutation, limit int, sc *batchScratch) (deferred []*mutation) {
	for i, m := range batch {
		mk := keyView(m.key)
		bk, seen := sc.keys[mk]
		if seen && !bk.folded && !bk.blocked {
			// A repeated key: it sees the batch's earlier mutations.
			it, ok := s.pendingOf(m.key, bk.cmds)
			bk.folded, bk.blocked, bk.cmds = ok, !ok, nil
			sc.keys[mk] = bk
			if ok {
				sc.pending[mk] = it
			}
		}
		if seen && bk.blocked {
			deferred = append(deferred, m)
			continue
		}
		if m.err = m.ctx.Err(); m.err != nil {
			continue
		}
		if s.combineFault != nil {
			s.combineFault(m.key)
		}
		// One view serves the batch's functions in turn (a function must
		// not keep it).
		sc.view = View{s: s, now: s.opts.Now().UnixMilli(), pending: sc.pending}
		cmds, err := s.evalSafely(m.fn, &sc.view)
		if err != nil || len(cmds) == 0 {
			m.err = err
			continue
		}
		cmds = append(cmds, m.also...)
		if m.err = stamp(cmds, sc.view.now); m.err != nil {
			continue
		}
		// The batch's records share one buffer, which the next batch
		// reuses: the log copies them, and a record kept past the batch
		// (keepWrittenLocked) is cloned.
		start := len(sc.recBuf)
		sc.recBuf = appendRecord(sc.recBuf, cmds)
		rec := sc.recBuf[start:len(sc.recBuf):len(sc.recBuf)]
		if len(rec) > limit {
			sc.recBuf = sc.recBuf[:start]
			m.err = fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(rec), limit)
			continue
		}
		sc.stages = append(sc.stages, staged{m, cmds})
		sc.recs = append(sc.recs, rec)
		if m.key == nil || i == len(batch)-1 {
			// No later mutation of the batch reads what this one left.
			continue
		}
		if sc.keys == nil {
			sc.keys, sc.pending = map[string]batchKey{}, map[string]Item{}
		}
		switch {
		case !foldable(m.key, cmds):
			sc.keys[mk] = batchKey{blocked: true}
		case !seen:
			sc.keys[mk] = batchKey{cmds: cmds}
		default: // folded: the pending state moves on
			it := sc.pending[mk]
			for i := range cmds {
				if !fold(&it, m.key, &cmds[i]) {
					bk.blocked = true
					sc.keys[mk] = bk
					break
				}
			}
			sc.pending[mk] = it
		}
	}
	return deferred
}

// keyView is key's bytes as a string without a copy, for the batch's maps:
// a mutation's key is its caller's and unchanged until the caller returns,
// which is after the batch (reset empties the maps before anyone is woken).
func keyView(key []byte) string { return unsafe.String(unsafe.SliceData(key), len(key)) }

// staged is a mutation of a batch whose function made commands.
type staged struct {
	m    *mutation
	cmds []command.Command
}

// batchScratch is what runMutations works with, kept for the next batch
// with what it held dropped.
type batchScratch struct {
	stages  []staged
	recs    [][]byte
	keys    map[string]batchKey // the batch's keys that later mutations read
	pending map[string]Item     // their state as the batch leaves it
	view    View
	// recBuf holds the batch's records back to back.
	recBuf []byte
}

// maxKeptRecBuf bounds the record buffer a shard keeps between batches.
const maxKeptRecBuf = 1 << 20

func (sc *batchScratch) reset() {
	clear(sc.stages)
	clear(sc.recs)
	sc.stages, sc.recs = sc.stages[:0], sc.recs[:0]
	if cap(sc.recBuf) > maxKeptRecBuf {
		sc.recBuf = nil // a batch of big records does not pin its buffer
	}
	sc.recBuf = sc.recBuf[:0]
	clear(sc.keys)
	clear(sc.pending)
	sc.view = View{}
}

// WithAlso returns a handle of the shard through which every record a
// write makes also carries cmds (blind writes, typically a ledger entry),
// so they land atomically with it. Writes that make no record carry
// nothing.
func (s *Shard) WithAlso(cmds ...command.Command) *Shard {
	return &Shard{shardState: s.shardState, held: s.held, also: cmds}
}
