package sharedlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage/internal/valuelog"
)

// attachWait bounds how long a snapshot install waits for the shard to
// attach (it loads meanwhile).
const attachWait = 30 * time.Second

func (l *Log) frontName() string    { return l.prefix + "/front" }
func (l *Log) snapshotName() string { return l.prefix + "/snapshot" }

// readFront returns the first index of the oldest segment (1 before any
// reclaim).
func (l *Log) readFront(ctx context.Context) (uint64, error) {
	b, err := l.store.Get(ctx, l.frontName())
	if errors.Is(err, ErrNotExist) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	return decodeFront(b)
}

// locate places the cursor at the front segment; follow skips the records
// the value log holds. A value log behind the front installs the
// snapshot first, once the shard attaches.
func (l *Log) locate(ctx context.Context) error {
	front, err := l.readFront(ctx)
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
		go l.installSnapshot(front)
	}
}

// frontMoved handles a segment reclaimed under a follower: it moves to
// the front, installing the snapshot when its value log is behind it.
func (l *Log) frontMoved(ctx context.Context) (bool, error) {
	front, err := l.readFront(ctx)
	if err != nil || front <= l.seg {
		return false, err
	}
	l.moveTo(front)
	return true, nil
}

// installSnapshot replaces the shard's state and value log with the
// store's snapshot, which reaches at least front.
func (l *Log) installSnapshot(front uint64) {
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
	err := l.installSnapshotOnce(front)
	if err != nil {
		l.mu.Lock()
		if l.failed == nil {
			l.failed = fmt.Errorf("sharedlog: %s: installing the snapshot: %w", l.prefix, err)
		}
		l.mu.Unlock()
		l.opts.Logger.Error("sharedlog: installing the snapshot failed", "log", l.prefix, "err", err)
	}
}

func (l *Log) installSnapshotOnce(front uint64) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	b, err := l.store.Get(ctx, l.snapshotName())
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
	if err := valuelog.WriteState(&b, snapMagic, img, l.vl, first, l.vl.LastIndex()); err != nil {
		l.opts.Logger.Warn("sharedlog: snapshot: reading the value log failed", "log", l.prefix, "err", err)
		return
	}
	newFront := segs[k]
	err = l.store.Put(ctx, l.snapshotName(), b.Bytes())
	if err == nil {
		var cur uint64
		if cur, err = l.readFront(ctx); err == nil && cur < newFront {
			err = l.store.Put(ctx, l.frontName(), encodeFront(newFront))
		}
	}
	if err != nil {
		l.opts.Logger.Warn("sharedlog: snapshot: writing it failed", "log", l.prefix, "err", err)
		return
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
