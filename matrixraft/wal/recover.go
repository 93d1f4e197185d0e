package wal

import (
	"context"
	"fmt"
)

// Recover takes a log that failed (a write or an fdatasync returned an
// error, so it refuses appends) back into service without closing it. last
// is the last record the caller acknowledged; the log keeps the records up
// to it and drops the rest:
//
//   - Every record after last is cut, as TruncateBack cuts: their appends
//     failed, so no caller was told they were written, and none may turn
//     up later (after a restart, say) as a record nobody applied.
//   - The records after the last successful fdatasync, up to last, are read
//     back from the files and checked, as Open checks them: after a failed
//     write-back the kernel may have dropped their pages. The first that
//     does not check out is cut with every record after it (and the rest
//     of its AppendGroup group, which is all or nothing). Those that check
//     out are written again and fdatasynced: after a failed fdatasync the
//     kernel may have marked their pages clean without writing them, and a
//     second fdatasync would report success for data not on the device.
//
// It returns the index of the last record kept, after which appends
// resume: last, unless records not yet fdatasynced (under SyncInterval or
// SyncNever) were lost. The cut is durable when it returns. On an error
// (the device still fails) the log still refuses appends, and Recover may
// be called again. Reads go on meanwhile. On a healthy log, Recover of
// LastIndex() writes and syncs what is queued and changes nothing else.
// The caller appends nothing while Recover runs: appends queued then fail.
func (l *Log) Recover(ctx context.Context, last uint64) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.awaitFlushLocked()
	if l.closed {
		return 0, ErrClosed
	}
	if l.err == nil && len(l.pend) > 0 {
		l.leadLocked(l.opts.Sync != SyncNever)
		l.awaitFlushLocked()
	}
	l.dropPendingLocked()
	l.flushing = true // the files are the recovery's alone
	defer l.releaseLocked()
	if top := l.last.Load(); last > top {
		return 0, fmt.Errorf("%w: Recover(%d) past the last record written, %d", ErrInvalidIndex, last, top)
	}
	if first := l.first.Load(); last+1 < first {
		return 0, fmt.Errorf("%w: Recover(%d) before the first index %d", ErrInvalidIndex, last, first)
	}
	kept, err := l.rewriteUnsynced(last)
	if err == nil && l.err == nil && kept == l.next-1 {
		return kept, nil // healthy, and nothing to cut
	}
	if err == nil {
		err = l.cutAfter(kept)
	}
	if err != nil {
		err = fmt.Errorf("wal: recover: %w", err)
		if l.err == nil {
			l.err = err
		}
		l.opts.Logger.Error("wal: recovery failed", "err", err)
		return 0, err
	}
	if l.err != nil {
		l.opts.Logger.Info("wal: recovered after a failure", "last", kept, "failure", l.err.Error())
	}
	l.err = nil
	return kept, nil
}

// dropPendingLocked fails the records queued and not yet written (only a
// failed log has any once no flush runs): their batch ends with the log's
// error, and their indexes are given out again after the cut.
func (l *Log) dropPendingLocked() {
	if len(l.pend) == 0 {
		return
	}
	b := l.cur
	l.cur = newBatch()
	for _, c := range l.pend {
		c.buf, c.offs = c.buf[:0], c.offs[:0]
		l.free = append(l.free, c)
	}
	clear(l.pend)
	l.pend = l.pend[:0]
	err := l.err
	if err == nil {
		err = ErrClosed // not reached: a healthy log wrote them above
	}
	b.finishLocked(err)
}

// rewriteUnsynced checks the records after the last successful sync up to
// last, writes those that check out again and syncs them, and returns the
// last record kept. The caller holds the flusher's role.
func (l *Log) rewriteUnsynced(last uint64) (uint64, error) {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	from := max(l.synced+1, l.first.Load())
	kept := last
	for _, s := range l.segs {
		n := uint64(len(s.offsets))
		a, b := max(from, s.first), min(last, s.first+n-1)
		if n == 0 || a > b || kept < b {
			continue
		}
		start, end := int64(s.offsets[a-s.first]), s.recordEnd(int(b-s.first))
		buf := make([]byte, end-start)
		if _, err := s.f.ReadAt(buf, start); err != nil {
			return 0, fmt.Errorf("read %s: %w", s.name, err)
		}
		good := len(buf)
		for i := a; i <= b; i++ {
			off := int64(s.offsets[i-s.first]) - start
			frame := buf[off : s.recordEnd(int(i-s.first))-start]
			if _, _, _, err := decodeFrame(frame, len(frame)); err != nil {
				l.opts.Logger.Warn("wal: record not synced lost after a failure", "segment", s.name, "index", i, "reason", err.Error())
				kept, good = i-1, int(off)
				break
			}
		}
		if good > 0 && l.opts.Sync != SyncNever {
			if err := writeAt(s.f, buf[:good], start, false); err != nil {
				return 0, fmt.Errorf("rewrite %s: %w", s.name, err)
			}
			if err := l.syncSegment(s, true); err != nil {
				return 0, err
			}
		}
	}
	if kept == last {
		return kept, nil
	}
	// A group is all or nothing: a cut inside one takes its start too.
	for kept >= l.first.Load() {
		s, pos, err := l.locateLocked(kept)
		if err != nil {
			return 0, err
		}
		var hdr [frameHeaderSize]byte
		if _, err := s.f.ReadAt(hdr[:], int64(s.offsets[pos])); err != nil {
			return 0, fmt.Errorf("read %s: %w", s.name, err)
		}
		if hdr[8]&typeGroupMore == 0 {
			break
		}
		kept--
	}
	return kept, nil
}

// cutAfter drops every record after index, durably, and points appends
// just after it (TruncateBack, and Recover); it also clears what a failed
// write left past the last record written. The caller holds the flusher's
// role.
func (l *Log) cutAfter(index uint64) error {
	l.segMu.Lock()
	defer l.segMu.Unlock()
	k := len(l.segs) - 1
	for k > 0 && l.segs[k].first > index+1 {
		k--
	}
	// Newest first, so an interruption leaves a prefix of the log.
	tail := l.segs[k+1:]
	for i := len(tail) - 1; i >= 0; i-- {
		if err := l.dropSegments(tail[i:i+1], ""); err != nil {
			l.segs = l.segs[:k+1+i]
			return err
		}
	}
	clear(tail)
	l.segs = l.segs[:k+1]
	s := l.segs[k]
	pos := int(index + 1 - s.first)
	off := s.end
	if pos < len(s.offsets) {
		off = int64(s.offsets[pos])
	}
	// The file is cut even when no record goes: a write that failed part
	// way may have left bytes past the end.
	if err := cutFile(s.f, off, l.opts.SegmentSize, !l.opts.NoPreallocate); err != nil {
		return fmt.Errorf("truncate segment %s: %w", s.name, err)
	}
	s.offsets, s.end = s.offsets[:pos], off
	l.resetTailLocked(s, index)
	return nil
}
