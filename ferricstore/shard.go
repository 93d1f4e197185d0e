package ferricstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
)

// shard is one shard's streams, log and writer. Writes queue to the
// writer, which resolves and applies each in turn and logs a batch with
// one append (one fsync); readers take the read lock, which the writer
// holds until the batch is durable, so they see durable state only.
type shard struct {
	id    int
	store *Store
	log   *wal.Log
	// logDir is the log's directory.
	logDir string
	// backupMu keeps a backup's hold and a snapshot apart; while
	// backupHolds is above zero no snapshot is written, so no segment or
	// snapshot file goes (backup.go).
	backupMu    sync.Mutex
	backupHolds atomic.Int32
	// snapDir holds the shard's snapshot; snapIndex is the log index the
	// last one was taken at.
	snapDir   string
	snapIndex uint64
	// sinceSnap is the bytes logged since the last snapshot and snapSize
	// that snapshot's size: a snapshot waits until the log has grown by
	// its size, so that writing them costs at most what logging does,
	// however large the state.
	sinceSnap, snapSize int

	mu      sync.RWMutex
	streams map[string]*stream.Stream
	// flows is the shard's flow table; flowWaiters the blocked claims, in
	// the order they blocked (flows.go); flowStats its counters.
	flows       *flow.Table
	flowWaiters []*claimWaiter
	flowStats   flowCounters
	// failed, once set (an append failed), refuses every call: what was
	// applied may not be in the log.
	failed error
	// changed is closed, and replaced, once a batch of changes is
	// durable, to wake blocked readers.
	changed chan struct{}
	stats   struct{ writes, batches, deliveries, snapshots atomic.Uint64 }

	// waiters are the blocked XREADGROUP > calls by stream key, in the
	// order they blocked (waiters.go); under mu.
	waiters map[string][]*GroupWaiter

	qmu     sync.Mutex
	queue   []*request
	wake    chan struct{}
	closing bool
	stopped chan struct{}
}

// request is one write waiting for the writer.
type request struct {
	ctx context.Context
	// resolve checks the write against the state (read-only) and returns
	// the op to apply and log, or a result (and no op, code 0) when there
	// is nothing to change.
	resolve func(st map[string]*stream.Stream) (op, any, error)
	// flow, instead of resolve, is a flow command; flowRes its result.
	// waiter, instead of both, registers a blocked claim.
	flow    flow.Command
	flowRes flow.Result
	waiter  *claimWaiter
	res     any
	err     error
	done    chan struct{}
}

func openShard(st *Store, i int) (*shard, error) {
	policy := wal.SyncAlways
	if st.opts.Async {
		policy = wal.SyncInterval
	}
	logDir := filepath.Join(st.opts.Dir, fmt.Sprintf("shard-%03d", i))
	l, err := wal.Open(logDir, wal.Options{
		Sync: policy, SyncInterval: st.opts.SyncInterval, Logger: st.opts.Logger,
		// S2 rather than zstd: a batch of flows or entries is mostly IDs and
		// payloads, which zstd squeezes little better at several times the CPU.
		Compression: wal.CompressionFast,
	})
	if err != nil {
		return nil, err
	}
	snapDir := filepath.Join(st.opts.Dir, "snapshots", fmt.Sprintf("shard-%03d", i))
	if err := os.MkdirAll(snapDir, 0o755); err != nil {
		l.Close()
		return nil, err
	}
	s := &shard{id: i, store: st, log: l, logDir: logDir, snapDir: snapDir, streams: map[string]*stream.Stream{}, flows: flow.NewTable(),
		changed: make(chan struct{}), wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	if err := s.replay(); err != nil {
		l.Close()
		return nil, err
	}
	go s.write()
	return s, nil
}

// replay loads the newest snapshot and applies the log's records after
// it in order.
func (s *shard) replay() error {
	state, index, err := loadSnapshot(s.snapDir, func(name string, err error) {
		s.store.opts.Logger.Warn("ferricstore: snapshot skipped", "file", name, "err", err)
	})
	if err != nil {
		return err
	}
	s.streams, s.flows, s.snapIndex = state.streams, state.flows, index
	if last := s.log.LastIndex(); index > last {
		// The snapshot outlived the log's unsynced tail (an async shard
		// after a machine crash): the log goes on after the snapshot.
		if err := s.log.Reset(context.Background(), index+1); err != nil {
			return err
		}
		return nil
	}
	if first := s.log.FirstIndex(); first > index+1 {
		return fmt.Errorf("ferricstore: shard %d: the log starts at %d, after the snapshot's %d: records are missing", s.id, first, index)
	}
	it := s.log.Iterator(index + 1)
	defer it.Close()
	for it.Next() {
		rec := bytes.Clone(it.Value())
		var err error
		if len(rec) > 0 && rec[0] == flowRecordTag {
			var now int64
			var c flow.Command
			if now, c, err = flow.DecodeRecord(rec[1:]); err == nil {
				_, err = s.flows.Apply(now, c)
			}
		} else {
			var o op
			if o, err = decodeOp(rec); err == nil {
				_, err = apply(s.streams, &o)
			}
		}
		if err != nil {
			return fmt.Errorf("ferricstore: shard %d, record %d: %w", s.id, it.Index(), err)
		}
	}
	return it.Err()
}

// do queues a write and waits for its result.
func (s *shard) do(ctx context.Context, resolve func(st map[string]*stream.Stream) (op, any, error)) (any, error) {
	r, err := s.submit(ctx, resolve)
	if err != nil {
		return nil, err
	}
	return r.wait()
}

// submit queues a write; wait returns its result. Writes submitted
// together, before any wait, share a batch and its fsync.
func (s *shard) submit(ctx context.Context, resolve func(st map[string]*stream.Stream) (op, any, error)) (*request, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &request{ctx: ctx, resolve: resolve, done: make(chan struct{})}
	if err := s.enqueue(r); err != nil {
		return nil, err
	}
	return r, nil
}

// wait waits for the write's result. The write is the writer's once
// queued: it completes even if its context ends, as a logged record is
// applied whatever the caller does.
func (r *request) wait() (any, error) {
	<-r.done
	return r.res, r.err
}

// write is the shard's writer goroutine.
func (s *shard) write() {
	defer close(s.stopped)
	var recs [][]byte
	var buf []byte
	var timer *time.Timer
	for {
		s.qmu.Lock()
		batch := s.queue
		s.queue = nil
		closing := s.closing
		s.qmu.Unlock()
		if len(batch) == 0 {
			if closing {
				return
			}
			// Nothing queued: wait for a request, or for the next time
			// the flows have something to do (an expiry, a schedule, a
			// blocked claim's flow coming due).
			at, ok := s.flowTimer()
			if !ok {
				<-s.wake
				continue
			}
			// Waits are capped so that a clock that jumps (or a test's
			// clock that is moved) is seen soon.
			wait := min(time.Duration(at-s.store.opts.Now().UnixMilli())*time.Millisecond, maxFlowWait)
			if wait > 0 {
				if timer == nil {
					timer = time.NewTimer(wait)
				} else {
					timer.Reset(wait)
				}
				select {
				case <-s.wake:
					timer.Stop()
					continue
				case <-timer.C:
				}
			}
		}
		recs, buf = recs[:0], buf[:0]
		var logged []*request
		var served []*GroupWaiter
		var claimed []*claimWaiter
		now := s.store.opts.Now().UnixMilli()
		flowsChanged := false
		logFlow := func(c flow.Command) {
			start := len(buf)
			buf = append(buf, flowRecordTag)
			buf = flow.AppendRecord(buf, now, c)
			recs = append(recs, buf[start:len(buf):len(buf)])
		}
		s.mu.Lock()
		if s.failed == nil {
			if tick := s.tickDue(now); tick != nil {
				if res, err := s.flows.Apply(now, tick); err == nil && res.Changed {
					logFlow(tick)
					s.flowStats.count(tick, res)
					flowsChanged = true
				}
			}
		}
		for _, r := range batch {
			if s.failed != nil {
				r.err = s.failed
				continue
			}
			if err := r.ctx.Err(); err != nil && r.waiter == nil {
				r.err = err
				continue
			}
			if r.waiter != nil {
				s.flowWaiters = append(s.flowWaiters, r.waiter)
				flowsChanged = true
				continue
			}
			if r.flow != nil {
				r.flowRes, r.err = s.flows.Apply(now, r.flow)
				if r.err == nil && r.flowRes.Changed {
					logFlow(r.flow)
					logged = append(logged, r)
					s.flowStats.count(r.flow, r.flowRes)
					flowsChanged = true
				}
				continue
			}
			o, res, err := r.resolve(s.streams)
			if err != nil || o.code == 0 {
				r.res, r.err = res, err
				continue
			}
			r.res, r.err = apply(s.streams, &o)
			if r.err != nil {
				// A resolve that does not fit its own apply is a bug;
				// the shard's state may be half changed.
				s.failed = fmt.Errorf("%w: %v", ErrFailed, r.err)
				continue
			}
			if o.code == opReadNew || o.code == opReadHistory || o.code == opClaim || o.code == opAutoClaim {
				s.stats.deliveries.Add(delivered(r.res))
			}
			start := len(buf)
			buf = o.encode(buf)
			recs = append(recs, buf[start:len(buf):len(buf)])
			logged = append(logged, r)
			if o.code == opAdd && len(s.waiters) > 0 {
				served = append(served, s.serveWaitersLocked(o.key, func(o *op, res any) error {
					s.stats.deliveries.Add(delivered(res))
					start := len(buf)
					buf = o.encode(buf)
					recs = append(recs, buf[start:len(buf):len(buf)])
					return nil
				})...)
			}
		}
		if s.failed == nil && len(s.flowWaiters) > 0 && (flowsChanged || len(batch) == 0) {
			claimed = s.serveClaimsLocked(now, logFlow)
		}
		if len(recs) > 0 {
			s.sinceSnap += len(buf)
			s.stats.writes.Add(uint64(len(recs)))
			s.stats.batches.Add(1)
			if _, err := s.log.AppendBatch(context.Background(), recs); err != nil {
				s.failed = fmt.Errorf("%w: %v", ErrFailed, err)
				for _, r := range logged {
					r.res, r.err, r.flowRes = nil, s.failed, flow.Result{}
				}
				for _, w := range served {
					w.entries, w.err = nil, s.failed
				}
				for _, w := range claimed {
					w.records, w.err = nil, s.failed
				}
			}
			close(s.changed)
			s.changed = make(chan struct{})
		}
		snapAt := s.log.LastIndex()
		due := s.failed == nil && snapAt-s.snapIndex >= uint64(s.store.opts.SnapshotEvery) && s.sinceSnap >= s.snapSize
		s.mu.Unlock()
		for _, r := range batch {
			close(r.done)
		}
		for _, w := range served {
			close(w.done)
		}
		for _, w := range claimed {
			close(w.ready)
		}
		if due {
			// Only this goroutine changes the state, so it reads it
			// without the lock, while readers go on.
			s.backupMu.Lock()
			if s.backupHolds.Load() == 0 {
				snap := encodeSnapshot(state{streams: s.streams, flows: s.flows}, snapAt)
				s.snapshot(snap, snapAt)
				s.sinceSnap, s.snapSize = 0, len(snap)
			}
			s.backupMu.Unlock()
		}
	}
}

// snapshot writes a snapshot taken at index and lets the log before it
// go. A failure is logged: the log still holds everything.
func (s *shard) snapshot(data []byte, index uint64) {
	if err := writeSnapshot(s.snapDir, index, data); err != nil {
		s.store.opts.Logger.Error("ferricstore: snapshot failed", "shard", s.id, "err", err)
		return
	}
	s.snapIndex = index
	s.stats.snapshots.Add(1)
	if err := s.log.TruncateFront(context.Background(), index+1); err != nil {
		s.store.opts.Logger.Error("ferricstore: log truncation failed", "shard", s.id, "err", err)
	}
}

// read runs fn under the read lock.
func (s *shard) read(fn func(st map[string]*stream.Stream) error) error {
	if s.store.closed.Load() {
		return ErrClosed
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.failed != nil {
		return s.failed
	}
	return fn(s.streams)
}

// changes returns a channel closed at the shard's next durable change.
func (s *shard) changes() <-chan struct{} {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.changed
}

// close stops the writer once the queue is drained, and closes the log.
func (s *shard) close() error {
	s.qmu.Lock()
	s.closing = true
	s.qmu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-s.stopped
	return s.log.Close()
}

// Errors of the store.
var (
	// ErrClosed: the store is closed.
	ErrClosed = errors.New("ferricstore: closed")
	// ErrFailed: a shard's log failed; it refuses every call from then on.
	ErrFailed = errors.New("ferricstore: shard failed")
)
