package ferricstore

import (
	"context"
	"sync/atomic"

	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

// GroupWaiter is a blocked XREADGROUP ... > (Streams.WaitGroup): when
// entries come to one of its streams, the shard's writer hands them to
// the waiters of that stream's group in the order they blocked, in the
// batch that added them, as Redis serves blocked clients. Done is closed
// once it was served and that is durable.
type GroupWaiter struct {
	keys            []string
	group, consumer string
	count           int
	noAck           bool
	shards          []*shard
	// claimed is set by the writer that serves it or by Cancel, whichever
	// comes first.
	claimed atomic.Bool
	key     string
	entries []stream.Entry
	err     error
	done    chan struct{}
}

// WaitGroup registers a blocked XREADGROUP GROUP group consumer COUNT
// count STREAMS keys... > . It returns nil when one of the streams
// already has entries for the group (read them now); else the waiter,
// which the caller waits on (Done, with Streams.Changes for the stream
// or group going away) and must Cancel when it gives up.
func (x *Streams) WaitGroup(ctx context.Context, keys []string, group, consumer string, count int, noAck bool) (*GroupWaiter, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &GroupWaiter{keys: keys, group: group, consumer: consumer, count: count, noAck: noAck, done: make(chan struct{})}
	for _, k := range keys {
		sh := x.st.shardOf(k)
		ready, err := sh.addWaiter(k, w)
		if err != nil || ready {
			w.Cancel()
			return nil, err
		}
		w.shards = append(w.shards, sh)
	}
	return w, nil
}

// Done is closed once the waiter was served and the delivery is durable.
func (w *GroupWaiter) Done() <-chan struct{} { return w.done }

// Result is what the waiter was served, after Done: the stream's key and
// entries, or the error that failed the delivery's log write.
func (w *GroupWaiter) Result() (string, []stream.Entry, error) { return w.key, w.entries, w.err }

// Cancel withdraws the waiter; false when it was served first (wait on
// Done for its entries, which are the consumer's pending ones).
func (w *GroupWaiter) Cancel() bool {
	mine := w.claimed.CompareAndSwap(false, true)
	for _, sh := range w.shards {
		sh.removeWaiter(w)
	}
	return mine
}

// addWaiter queues w on key, unless the stream has entries for w's group
// now (ready). Under the lock no batch is half applied, so an entry added
// after this is served to w.
func (s *shard) addWaiter(key string, w *GroupWaiter) (ready bool, err error) {
	if s.store.closed.Load() {
		return false, ErrClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return false, s.failed
	}
	if st := s.streams[key]; st != nil {
		if g := st.Group(w.group); g != nil && len(st.After(g.LastID, 1)) > 0 {
			return true, nil
		}
	}
	if s.waiters == nil {
		s.waiters = map[string][]*GroupWaiter{}
	}
	s.waiters[key] = append(s.waiters[key], w)
	return false, nil
}

// removeWaiter drops w from the shard's queues.
func (s *shard) removeWaiter(w *GroupWaiter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range w.keys {
		s.dropWaiterLocked(k, w)
	}
}

func (s *shard) dropWaiterLocked(key string, w *GroupWaiter) {
	q := s.waiters[key]
	for i, x := range q {
		if x == w {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(s.waiters, key)
	} else {
		s.waiters[key] = q
	}
}

// serveWaitersLocked hands key's new entries to its waiters, first come
// first served, each delivery an op of the batch (logged with it), and
// returns the waiters served. The writer calls it after applying an XADD
// to key, holding the lock.
func (s *shard) serveWaitersLocked(key string, logOp func(o *op, res any) error) []*GroupWaiter {
	q := s.waiters[key]
	if len(q) == 0 {
		return nil
	}
	st := s.streams[key]
	var served []*GroupWaiter
	for _, w := range q {
		g := st.Group(w.group)
		if g == nil || len(st.After(g.LastID, 1)) == 0 || !w.claimed.CompareAndSwap(false, true) {
			continue
		}
		o := op{code: opReadNew, key: key, group: w.group, consumer: w.consumer, a: int64(w.count), now: s.store.now()}
		if w.noAck {
			o.flags |= flagNoAck
		}
		res, err := apply(s.streams, &o)
		if err == nil {
			err = logOp(&o, res)
		}
		w.key, w.err = key, err
		if err == nil {
			w.entries = res.([]stream.Entry)
		}
		served = append(served, w)
	}
	for _, w := range served {
		for _, k := range w.keys {
			s.dropWaiterLocked(k, w)
		}
	}
	return served
}
