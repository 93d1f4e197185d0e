package matrixcache

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// writeback is the asynchronous SSD writer of Options.WriteBack: a bounded
// queue of SSD writes and deletes, at most one queued job per key (a later
// write of a queued key replaces it in place), drained in batches by one
// goroutine.
//
// Ordering: a job stays in pending until its commit has completed, so a
// read that misses DRAM finds the newest value in pending before it could
// read an older copy from the SSD tier. Single-key writes reach the SSD in
// queue order because one goroutine commits them; writes made directly (the
// queue is full, or a range delete) happen only when no job of the same key
// is pending, or after taking commitMu so that an in-flight batch has landed
// first.
type writeback struct {
	ssd      persistentTier
	limit    int
	maxBatch int

	mu       sync.Mutex
	pending  map[blockfmt.Key]*wbJob
	queue    []*wbJob
	inflight int
	closing  bool

	commitMu sync.Mutex
	wake     chan struct{}
	done     chan struct{}
	ctx      context.Context

	enqueued, coalesced, drained, backpressure, failures, maxDepth atomic.Int64
	latency                                                        latencyHist
}

type wbJob struct {
	block blockfmt.Block
	del   bool
	taken bool
}

func newWriteback(ctx context.Context, ssd persistentTier, limit, maxBatch int) *writeback {
	w := &writeback{
		ssd: ssd, limit: limit, maxBatch: maxBatch,
		pending: make(map[blockfmt.Key]*wbJob),
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		ctx:     context.WithoutCancel(ctx),
	}
	go w.run()
	return w
}

// enqueue queues a write (or, with del, a delete) of b.Key and reports
// whether it did; false means the queue is full (or closing) and no job of
// the key is pending, so the caller may write directly.
func (w *writeback) enqueue(b blockfmt.Block, del bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.pending[b.Key]
	if j != nil && !j.taken {
		j.block, j.del = b, del
		w.coalesced.Add(1)
		return true
	}
	if w.closing || (j == nil && len(w.queue) >= w.limit) {
		// With a job of the key in flight the queue takes it past its
		// limit (by at most one batch), so that the in-flight write cannot
		// land after a direct one.
		if j == nil {
			w.backpressure.Add(1)
			return false
		}
	}
	nj := &wbJob{block: b, del: del}
	w.pending[b.Key] = nj
	w.queue = append(w.queue, nj)
	w.enqueued.Add(1)
	if d := int64(len(w.queue)); d > w.maxDepth.Load() {
		w.maxDepth.Store(d)
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return true
}

// lookup returns the pending job of key: its block, and whether it is a delete.
func (w *writeback) lookup(key blockfmt.Key) (blockfmt.Block, bool, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.pending[key]
	if j == nil {
		return blockfmt.Block{}, false, false
	}
	return j.block, j.del, true
}

// forget drops the queued jobs matching fn, and waits for an in-flight batch
// to land; it returns with commitMu held, so the caller's direct SSD
// operation follows every write of the matching keys. It reports how many
// queued jobs it dropped that were writes.
func (w *writeback) forget(fn func(blockfmt.Key) bool) int {
	w.mu.Lock()
	n := 0
	q := w.queue[:0]
	for _, j := range w.queue {
		if fn(j.block.Key) {
			if w.pending[j.block.Key] == j {
				delete(w.pending, j.block.Key)
			}
			if !j.del {
				n++
			}
			continue
		}
		q = append(q, j)
	}
	clear(w.queue[len(q):])
	w.queue = q
	w.mu.Unlock()
	w.commitMu.Lock()
	return n
}

func (w *writeback) depth() (jobs int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue) + w.inflight
}

// flush waits until every job queued before it has committed.
func (w *writeback) flush(ctx context.Context) error {
	t := time.NewTicker(200 * time.Microsecond)
	defer t.Stop()
	for w.depth() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.done:
			return nil
		case <-t.C:
		}
	}
	return nil
}

// close stops accepting jobs, drains the queue and stops the goroutine.
func (w *writeback) close() {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.done
}

func (w *writeback) run() {
	defer close(w.done)
	for {
		w.mu.Lock()
		empty, closing := len(w.queue) == 0, w.closing
		w.mu.Unlock()
		if empty {
			if closing {
				return
			}
			<-w.wake
			continue
		}
		w.drainOnce()
	}
}

func (w *writeback) drainOnce() {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	w.mu.Lock()
	n := min(len(w.queue), w.maxBatch)
	batch := make([]*wbJob, n)
	copy(batch, w.queue[:n])
	rest := copy(w.queue, w.queue[n:])
	clear(w.queue[rest:])
	w.queue = w.queue[:rest]
	var puts []blockfmt.Block
	var dels []blockfmt.Key
	for _, j := range batch {
		j.taken = true
		if j.del {
			dels = append(dels, j.block.Key)
		} else {
			puts = append(puts, j.block)
		}
	}
	w.inflight = n
	w.mu.Unlock()
	start := time.Now()

	if len(puts) > 0 {
		if err := w.ssd.PutBatch(w.ctx, puts); err != nil {
			w.repair(puts)
		}
	}
	for _, k := range dels {
		if _, err := w.ssd.Delete(w.ctx, k); err != nil {
			w.failures.Add(1)
		}
	}

	// Recorded before inflight drops to zero, so a flush that returns has
	// every counter of the batch in place.
	w.latency.since(start)
	w.mu.Lock()
	for _, j := range batch {
		if w.pending[j.block.Key] == j {
			delete(w.pending, j.block.Key)
		}
	}
	w.inflight = 0
	w.drained.Add(int64(n))
	w.mu.Unlock()
}

// repair handles a batch that did not fully commit (write budget, or a block
// the SSD tier cannot store): every block the SSD does not now hold is
// written alone, and if that fails its older SSD copy is deleted, so the SSD
// never serves a value older than the one the cache accepted.
func (w *writeback) repair(puts []blockfmt.Block) {
	for _, b := range puts {
		got, ok, err := w.ssd.Get(b.Key)
		if err == nil && ok && got.ExpiresAt == b.ExpiresAt && bytes.Equal(got.Value, b.Value) {
			continue
		}
		if err := w.ssd.Put(w.ctx, b); err == nil {
			continue
		}
		w.failures.Add(1)
		_, _ = w.ssd.Delete(w.ctx, b.Key)
	}
}

func matchPrefix(shard uint64, prefix string) func(blockfmt.Key) bool {
	return func(k blockfmt.Key) bool { return k.Shard == shard && strings.HasPrefix(k.Record, prefix) }
}
