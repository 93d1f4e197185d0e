package sharedlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/disk"
)

// storeTimeout bounds one store call of the loop.
const storeTimeout = 30 * time.Second

// loop is the log's one goroutine on the store: as the writer it batches
// the waiting appends into store appends; as a follower it applies what
// the writer appends and takes over once the log is silent.
func (l *Log) loop() {
	defer close(l.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-l.stop
		cancel()
	}()
	for {
		select {
		case <-l.stop:
			l.release()
			l.failWaiting(storage.ErrClosed)
			return
		default:
		}
		if l.Writing() {
			l.write(ctx)
			continue
		}
		l.failWaiting(nil)
		if l.isBehindFront() {
			select {
			case <-l.stop:
			case <-time.After(10 * l.opts.PollInterval):
			}
			continue
		}
		progressed, err := l.follow(ctx)
		if err != nil && ctx.Err() == nil {
			l.opts.Logger.Warn("sharedlog: following failed; retrying", "log", l.prefix, "err", err)
		}
		if progressed {
			continue
		}
		if !l.opts.ReadOnly && (l.released && l.preferred || time.Since(l.silentSince) > l.opts.LeaseTimeout || l.takeBack()) {
			l.takeOver(ctx)
			continue
		}
		select {
		case <-l.stop:
		case <-time.After(l.opts.PollInterval):
		}
	}
}

// takeBack says this member, preferred for the shard, should take it
// from the writer now: it has been up for handBackAfter leases (it is no
// passing visitor) and applied all the segment holds. Fencing a live
// writer is safe: its appends in flight fail with ErrNotLeader, unwritten,
// and its clients retry here.
func (l *Log) takeBack() bool {
	return l.handBack && l.size == l.off && time.Since(l.opened) > handBackAfter*l.opts.LeaseTimeout && l.Writer() != l.opts.Member
}

// handBackAfter is how many leases a preferred member waits after opening
// before it takes its shard back.
const handBackAfter = 2

// failWaiting answers every queued request of a log that is not (or no
// longer) the writer: err, or storage.ErrNotLeader when nil.
func (l *Log) failWaiting(err error) {
	for {
		select {
		case r := <-l.reqs:
			if err != nil {
				r.err = err
			} else {
				l.mu.Lock()
				r.err = l.notWriterLocked()
				l.mu.Unlock()
			}
			close(r.done)
		default:
			return
		}
	}
}

// write serves one batch of requests as the writer, or appends a lease
// frame after a quarter of the lease without one.
func (l *Log) write(ctx context.Context) {
	var batch []*request
	select {
	case r := <-l.reqs:
		batch = append(batch, r)
	case <-l.stop:
		return
	case <-time.After(l.opts.LeaseTimeout / 4):
		l.appendFrames(ctx, appendFrame(nil, kindLease, l.epochNow(), l.vl.LastIndex()+1, nil), nil)
		return
	}
	size := recordsSize(batch[0].recs)
gather:
	for size < l.opts.MaxBatchBytes {
		select {
		case r := <-l.reqs:
			batch = append(batch, r)
			size += recordsSize(r.recs)
		default:
			break gather
		}
	}
	epoch := l.epochNow()
	next := l.vl.LastIndex() + 1
	var buf []byte
	var appends []*request
	var barriers []*request
	var compactTo uint64
	for _, r := range batch {
		switch r.op {
		case opAppend:
			r.first = next
			buf = appendRecords(buf, epoch, next, r.recs)
			next += uint64(len(r.recs))
			appends = append(appends, r)
		case opBarrier:
			barriers = append(barriers, r)
		case opCompact:
			compactTo = max(compactTo, r.first)
			close(r.done)
		}
	}
	var err error
	if len(buf) > 0 {
		err = l.appendFrames(ctx, buf, appends)
	} else if len(barriers) > 0 {
		err = l.checkFence(ctx)
	}
	for _, r := range barriers {
		r.err = err
		close(r.done)
	}
	if compactTo > 0 && err == nil {
		go l.compact()
	}
}

func (l *Log) isBehindFront() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.behindFront
}

func (l *Log) epochNow() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch
}

// appendFrames appends buf at the writer's end of the segment and, once
// the store has it, reqs' records to the value log, answering them. A
// conflict means another member fenced the log: this one steps down, and
// reqs were not appended. Any other failure may or may not have
// appended them.
func (l *Log) appendFrames(ctx context.Context, buf []byte, reqs []*request) error {
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	start := time.Now()
	err := l.store.AppendAt(sctx, segmentName(l.prefix, l.seg), l.off, buf)
	cancel()
	took := time.Since(start)
	if err != nil {
		if errors.Is(err, ErrConflict) {
			err = fmt.Errorf("%w: %w", storage.ErrNotLeader, err)
		} else {
			err = fmt.Errorf("%w: %w", storage.ErrUnknownOutcome, err)
		}
		l.stepDown(err)
		for _, r := range reqs {
			r.err = err
			close(r.done)
		}
		return err
	}
	l.off += int64(len(buf))
	l.size = l.off
	l.silentSince = time.Now()
	l.mu.Lock()
	l.appendedAt = start
	l.stats.StoreAppends++
	observe(&l.stats.StoreAppendTime, took)
	var recs [][]byte
	for _, r := range reqs {
		recs = append(recs, r.recs...)
	}
	if len(recs) > 0 {
		if first, err := l.vl.AppendBatch(context.Background(), recs); err != nil || first != reqs[0].first {
			if err == nil {
				err = fmt.Errorf("%w: value log at %d, shared log at %d", ErrCorrupt, first, reqs[0].first)
			}
			// The value log can take no more: this member stops serving
			// the shard rather than diverge. The records are in the
			// shared log; the next writer serves them.
			l.failed = fmt.Errorf("sharedlog: value log: %w", disk.WALError(err))
			l.writing = false
			l.mu.Unlock()
			l.opts.Logger.Error("sharedlog: value log failed", "log", l.prefix, "err", err)
			for _, r := range reqs {
				r.err = l.failed
				close(r.done)
			}
			return err
		}
		for _, r := range reqs {
			l.owned.Add(r.first, r.first+uint64(len(r.recs)))
		}
	}
	l.mu.Unlock()
	for _, r := range reqs {
		close(r.done)
	}
	if l.off >= l.opts.SegmentBytes {
		l.roll(ctx)
	}
	return nil
}

func observe(h *storage.Histogram, d time.Duration) {
	i := 0
	for i < storage.HistogramBuckets-1 && d > storage.BucketBound(i) {
		i++
	}
	h.Counts[i]++
	h.Sum += d
}

// checkFence confirms the writer still holds the log: its segment is as
// long as it made it.
func (l *Log) checkFence(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	size, err := l.store.Size(sctx, segmentName(l.prefix, l.seg))
	cancel()
	switch {
	case err != nil:
		return fmt.Errorf("%w: %w", storage.ErrUnknownOutcome, err)
	case size != l.off:
		err := fmt.Errorf("%w: the segment grew past this writer's end", storage.ErrNotLeader)
		l.stepDown(err)
		return err
	}
	return nil
}

// roll seals the segment and starts the next.
func (l *Log) roll(ctx context.Context) {
	epoch, next := l.epochNow(), l.vl.LastIndex()+1
	seal := appendFrame(nil, kindSeal, epoch, next, nil)
	if err := l.store.AppendAt(ctx, segmentName(l.prefix, l.seg), l.off, seal); err != nil {
		l.stepDown(err)
		return
	}
	l.mu.Lock()
	l.segs = append(l.segs, next)
	l.mu.Unlock()
	start := appendFrame(nil, kindFence, epoch, next, func(b []byte) []byte { return append(b, l.opts.Member...) })
	if err := l.store.AppendAt(ctx, segmentName(l.prefix, next), 0, start); err != nil {
		// A follower took the log between the seal and the new segment.
		l.seg, l.off, l.size = next, 0, 0
		l.stepDown(err)
		return
	}
	l.seg, l.off, l.size = next, int64(len(start)), int64(len(start))
	l.opts.Logger.Debug("sharedlog: new segment", "log", l.prefix, "first", next)
}

// stepDown makes this member a follower after err showed it is not (or
// may not be) the writer any more.
func (l *Log) stepDown(err error) {
	l.mu.Lock()
	was := l.writing
	l.writing = false
	l.mu.Unlock()
	l.silentSince = time.Now()
	if was {
		l.opts.Logger.Warn("sharedlog: no longer the writer", "log", l.prefix, "err", err)
	}
}

// release appends a release frame when this member writes the log, so a
// follower takes over at once.
func (l *Log) release() {
	if !l.Writing() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	f := appendFrame(nil, kindRelease, l.epochNow(), l.vl.LastIndex()+1, nil)
	if err := l.store.AppendAt(ctx, segmentName(l.prefix, l.seg), l.off, f); err == nil {
		l.off += int64(len(f))
	}
	l.mu.Lock()
	l.writing = false
	l.mu.Unlock()
}

// takeOver fences the log in the next epoch at the end of what this
// member applied, cutting a torn tail first. Losing the race to another
// member is no error: it follows that one.
func (l *Log) takeOver(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	name := segmentName(l.prefix, l.seg)
	size, err := l.store.Size(sctx, name)
	if errors.Is(err, ErrNotExist) {
		size, err = 0, nil
	}
	if err != nil {
		l.opts.Logger.Warn("sharedlog: takeover: reading the segment's size failed", "log", l.prefix, "err", err)
		l.silentSince = time.Now()
		return
	}
	if size != l.off {
		if size < l.off || size != l.size {
			return // it moved since this member looked: follow it
		}
		// Bytes past the last whole frame, unchanged for a lease: the
		// torn tail of a writer that crashed mid-append.
		if err := l.store.Cut(sctx, name, l.off, size); err != nil {
			l.opts.Logger.Warn("sharedlog: takeover: cutting a torn tail failed", "log", l.prefix, "err", err)
			l.silentSince = time.Now()
			return
		}
		l.opts.Logger.Warn("sharedlog: cut a torn tail", "log", l.prefix, "segment", l.seg, "bytes", size-l.off)
		l.size = l.off
	}
	epoch := l.epochNow() + 1
	f := appendFrame(nil, kindFence, epoch, l.vl.LastIndex()+1, func(b []byte) []byte { return append(b, l.opts.Member...) })
	sent := time.Now() // the lease runs from before the fence landed
	if err := l.store.AppendAt(sctx, name, l.off, f); err != nil {
		l.silentSince = time.Now()
		if !errors.Is(err, ErrConflict) {
			l.opts.Logger.Warn("sharedlog: takeover failed", "log", l.prefix, "err", err)
		}
		return
	}
	l.off += int64(len(f))
	l.size = l.off
	l.released = false
	l.silentSince = time.Now()
	l.mu.Lock()
	l.writing, l.epoch, l.owner = true, epoch, l.opts.Member
	l.appendedAt = sent
	l.stats.Takeovers++
	l.mu.Unlock()
	l.opts.Logger.Info("sharedlog: took the log", "log", l.prefix, "epoch", epoch, "next_index", l.vl.LastIndex()+1)
}

// readChunk is the most a follower reads from the store at once.
const readChunk = 4 << 20

// follow applies the frames appended since this member last looked and
// reports whether it found any.
func (l *Log) follow(ctx context.Context) (bool, error) {
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	name := segmentName(l.prefix, l.seg)
	size, err := l.store.Size(sctx, name)
	if errors.Is(err, ErrNotExist) {
		if l.seg > 1 || l.off > 0 {
			// Reclaimed under this member, which is behind the front.
			if ok, err := l.frontMoved(sctx); ok || err != nil {
				return ok, err
			}
		}
		size, err = 0, nil
	}
	if err != nil {
		return false, err
	}
	if size != l.size {
		l.size = size
		l.silentSince = time.Now()
	}
	l.mu.Lock()
	l.stats.Behind = size - l.off
	l.mu.Unlock()
	if size <= l.off {
		return false, nil
	}
	buf := make([]byte, min(size-l.off, readChunk))
	n, err := l.store.ReadAt(sctx, name, l.off, buf)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	buf = buf[:n]
	progressed := false
	for len(buf) > 0 {
		f, k, ok, err := nextFrame(buf)
		if err != nil {
			// A torn tail: wait; takeOver cuts it once the lease passes.
			return progressed, nil
		}
		if !ok {
			break
		}
		if err := l.apply(f); err != nil {
			return progressed, err
		}
		progressed = true
		l.off += int64(k)
		buf = buf[k:]
		if f.kind == kindSeal {
			l.mu.Lock()
			l.segs = append(l.segs, f.index)
			l.mu.Unlock()
			l.seg, l.off, l.size = f.index, 0, 0
			l.silentSince = time.Now()
			return true, nil
		}
	}
	return progressed, nil
}

// apply takes one frame into this member's state.
func (l *Log) apply(f frame) error {
	switch f.kind {
	case kindFence:
		l.mu.Lock()
		l.epoch, l.owner = max(l.epoch, f.epoch), string(f.payload)
		l.mu.Unlock()
		l.released = false
	case kindRelease:
		l.released = true
	case kindRecords:
		recs, err := f.records()
		if err != nil {
			return err
		}
		next := l.vl.LastIndex() + 1
		end := f.index + uint64(len(recs))
		switch {
		case end <= next:
			return nil // in the value log already (a restart)
		case f.index > next:
			return fmt.Errorf("%w: %s: records from %d, value log ends at %d", ErrCorrupt, l.prefix, f.index, next-1)
		}
		recs = recs[next-f.index:]
		l.mu.Lock()
		defer l.mu.Unlock()
		if _, err := l.vl.AppendBatch(context.Background(), recs); err != nil {
			l.failed = fmt.Errorf("sharedlog: value log: %w", disk.WALError(err))
			return l.failed
		}
		select {
		case l.appended <- struct{}{}:
		default:
		}
	}
	return nil
}
