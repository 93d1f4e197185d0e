package sharedlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage/internal/valuelog"
)

// attachWait bounds how long a snapshot install waits for the shard to
// attach (it loads meanwhile).
const attachWait = 30 * time.Second

func (l *Log) frontName() string { return l.prefix + "/front" }

// readFront returns the first index of the oldest segment (1 before any
// reclaim) and the last index of the snapshot covering what is before it,
// and the front blob's size.
func (l *Log) readFront(ctx context.Context) (first, snapLast uint64, size int64, err error) {
	size, err = l.store.Size(ctx, l.frontName())
	if errors.Is(err, ErrNotExist) {
		return 1, 0, 0, nil
	}
	if err != nil {
		return 0, 0, 0, err
	}
	// The last whole record; one torn by a crash is passed over.
	for end := size - size%frontRecord; end > 0; end -= frontRecord {
		b := make([]byte, frontRecord)
		if _, err := l.store.ReadAt(ctx, l.frontName(), end-frontRecord, b); err != nil && !errors.Is(err, io.EOF) {
			return 0, 0, size, err
		}
		if first, snapLast, err = decodeFront(b); err == nil {
			return first, snapLast, size, nil
		}
	}
	return 1, 0, size, nil
}

// advanceFront moves the front to first, covered by the snapshot ending
// at snapLast, unless it is there or past it already.
func (l *Log) advanceFront(ctx context.Context, first, snapLast uint64) error {
	for range 16 {
		cur, _, size, err := l.readFront(ctx)
		if err != nil {
			return err
		}
		if cur >= first {
			return nil
		}
		if rem := size % frontRecord; rem != 0 {
			// A torn record: cut it, or append after it out of step.
			if err := l.store.Cut(ctx, l.frontName(), size-rem, size); err != nil && !errors.Is(err, ErrConflict) {
				return err
			}
			continue
		}
		err = l.store.AppendAt(ctx, l.frontName(), size, encodeFront(first, snapLast))
		if !errors.Is(err, ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("%w: the front blob kept changing", ErrConflict)
}

// locate places the cursor at the front segment; follow skips the records
// the value log holds. A value log behind the front installs the
// snapshot first, once the shard attaches.
func (l *Log) locate(ctx context.Context) error {
	front, _, _, err := l.readFront(ctx)
	if err != nil {
		return fmt.Errorf("sharedlog: %s: %w", l.prefix, err)
	}
	l.moveTo(front)
	return nil
}

// moveTo places the cursor at the start of the front segment, and starts
// installing the snapshot when the value log is behind it.
func (l *Log) moveTo(front uint64) {
	l.seg, l.off, l.size = front, 0, 0
	l.mu.Lock()
	l.segs = []uint64{front}
	behind := l.vl.LastIndex()+1 < front
	l.behindFront = l.behindFront || behind
	l.mu.Unlock()
	if behind {
		go l.installSnapshot()
	}
}

// frontMoved handles a segment reclaimed under a follower: it moves to
// the front, installing the snapshot when its value log is behind it.
func (l *Log) frontMoved(ctx context.Context) (bool, error) {
	front, _, _, err := l.readFront(ctx)
	if err != nil || front <= l.seg {
		return false, err
	}
	l.moveTo(front)
	return true, nil
}

// installSnapshot replaces the shard's state and value log with the
// snapshot the front blob names.
func (l *Log) installSnapshot() {
	defer func() {
		l.mu.Lock()
		l.installing = false
		l.mu.Unlock()
	}()
	l.mu.Lock()
	if l.installing {
		l.mu.Unlock()
		return
	}
	l.installing = true
	l.mu.Unlock()
	err := l.installSnapshotOnce()
	if err != nil {
		l.mu.Lock()
		if l.failed == nil {
			l.failed = fmt.Errorf("sharedlog: %s: installing the snapshot: %w", l.prefix, err)
		}
		l.mu.Unlock()
		l.opts.Logger.Error("sharedlog: installing the snapshot failed", "log", l.prefix, "err", err)
	}
}

func (l *Log) installSnapshotOnce() error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	front, snapLast, _, err := l.readFront(ctx)
	var b []byte
	if err == nil {
		b, err = l.store.Get(ctx, snapshotName(l.prefix, snapLast))
	}
	cancel()
	if err != nil {
		return err
	}
	s, err := valuelog.DecodeState(b, snapMagic)
	if err != nil {
		return fmt.Errorf("%w: snapshot: %w", ErrCorrupt, err)
	}
	if s.Last()+1 < front {
		return fmt.Errorf("%w: the snapshot ends at %d, the oldest segment starts at %d", ErrCorrupt, s.Last(), front)
	}
	select {
	case <-l.attached:
	case <-l.stop:
		return nil
	case <-time.After(attachWait):
		return errors.New("no shard attached to install it into")
	}
	l.mu.Lock()
	images := l.images
	l.mu.Unlock()
	reset := func() error {
		if err := valuelog.Reset(l.vl, s); err != nil {
			return err
		}
		l.mu.Lock()
		l.owned.Reset()
		l.behindFront = false
		l.stats.Snapshots++
		l.mu.Unlock()
		return nil
	}
	if err := images.InstallImage(s.Image, reset); err != nil {
		return err
	}
	l.opts.Logger.Info("sharedlog: installed the shared snapshot", "log", l.prefix, "first", s.First, "last", s.Last())
	return nil
}

// compact, run by the writer after its value log's front moved, reclaims
// the shared segments wholly before that front: it writes a snapshot (a
// fresh checkpoint image and the value log from its front), moves the
// front object past them and deletes them. It runs beside the loop: the
// checkpoint may wait for appends.
func (l *Log) compact() {
	l.mu.Lock()
	if l.compacting || l.images == nil {
		l.mu.Unlock()
		return
	}
	l.compacting = true
	images := l.images
	segs := append([]uint64(nil), l.segs...)
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.compacting = false
		l.mu.Unlock()
	}()
	first := l.vl.FirstIndex()
	k := 0 // segs[:k] end before first
	for k+1 < len(segs) && segs[k+1] <= first {
		k++
	}
	if k == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	img, err := images.CaptureImage(ctx)
	if err != nil {
		l.opts.Logger.Warn("sharedlog: snapshot: checkpoint failed", "log", l.prefix, "err", err)
		return
	}
	var b bytes.Buffer
	last := l.vl.LastIndex()
	if err := valuelog.WriteState(&b, snapMagic, img, l.vl, first, last); err != nil {
		l.opts.Logger.Warn("sharedlog: snapshot: reading the value log failed", "log", l.prefix, "err", err)
		return
	}
	newFront := segs[k]
	_, oldSnap, _, err := l.readFront(ctx)
	if err == nil {
		err = l.store.Put(ctx, snapshotName(l.prefix, last), b.Bytes())
	}
	if err == nil {
		err = l.advanceFront(ctx, newFront, last)
	}
	if err != nil {
		l.opts.Logger.Warn("sharedlog: snapshot: writing it failed", "log", l.prefix, "err", err)
		return
	}
	if oldSnap != 0 && oldSnap != last {
		_ = l.store.Delete(ctx, snapshotName(l.prefix, oldSnap)) // the front no longer names it
	}
	for _, s := range segs[:k] {
		if err := l.store.Delete(ctx, segmentName(l.prefix, s)); err != nil {
			l.opts.Logger.Warn("sharedlog: deleting a reclaimed segment failed", "log", l.prefix, "segment", s, "err", err)
		}
	}
	l.mu.Lock()
	l.stats.Snapshots++
	if i := len(l.segs) - (len(segs) - k); i >= 0 && l.segs[i] == newFront {
		l.segs = l.segs[i:]
	}
	l.mu.Unlock()
	l.opts.Logger.Info("sharedlog: reclaimed shared segments", "log", l.prefix, "segments", k, "front", newFront, "snapshot_bytes", b.Len())
}
