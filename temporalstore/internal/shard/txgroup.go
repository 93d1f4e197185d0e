package shard

import (
	"context"
	"errors"
	"fmt"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// An Exclusive's writes are one crash-atomic group in the log. Each write
// is applied when made, so the rest of the transaction reads it, under
// the index its record will have (the shard holds the append gate and has
// settled every earlier record, so nothing else takes an index in
// between); its record is kept here, not appended. When the Exclusive
// ends, the records go to the log in one AppendGroup, which a crash keeps
// whole or drops whole. No reader sees the applied writes before then:
// the Exclusive holds the shard's lock throughout.
//
// A transaction whose records pass the log's MaxGroupSize is appended in
// as many groups as that takes, each crash-atomic on its own.

// txGroup is an Exclusive's applied records not yet in the log.
type txGroup struct {
	first uint64   // index of recs[0]
	recs  [][]byte // records, in index order
	bytes int64    // their frames' bytes at most
}

// frameOverhead bounds the log's envelope of a record (wal's frame header).
const frameOverhead = 16

// beginTxLocked starts collecting an Exclusive's records.
func (s *Shard) beginTxLocked() {
	s.tx.Store(&txGroup{first: s.log.LastIndex() + 1})
}

// txRecord returns the record at addr if it is an unappended record of the
// running Exclusive.
func (s *Shard) txRecord(addr uint64) ([]byte, bool) {
	t := s.tx.Load()
	if t == nil || addr < t.first || addr-t.first >= uint64(len(t.recs)) {
		return nil, false
	}
	return t.recs[addr-t.first], true
}

// applyInTxLocked applies cmds, encoded as rec, as the next record of the
// running Exclusive and keeps rec for its group.
func (s *Shard) applyInTxLocked(cmds []command.Command, rec []byte) error {
	if limit := s.log.MaxRecordSize(); len(rec) > limit {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(rec), limit)
	}
	t := s.tx.Load()
	if t.bytes+int64(len(rec))+frameOverhead > s.log.MaxGroupSize() && len(t.recs) > 0 {
		if err := s.commitTxLocked(true); err != nil {
			return err
		}
		t = s.tx.Load()
	}
	idx := t.first + uint64(len(t.recs))
	t.recs = append(t.recs, rec)
	t.bytes += int64(len(rec)) + frameOverhead
	if setsKeys(cmds) {
		s.keepWrittenLocked(idx, rec, len(cmds))
	}
	return s.applyRecordLocked(idx, recordShare(len(rec), len(cmds)), cmds)
}

// commitTxLocked appends the running Exclusive's records as one group
// and, with more, starts a new one. A failed append fails the shard and
// takes the group's writes back out of the state: they were applied
// ahead of the log, which does not hold them.
func (s *Shard) commitTxLocked(more bool) error {
	t := s.tx.Load()
	if t == nil {
		return nil
	}
	defer func() {
		if more && s.failed == nil {
			s.beginTxLocked()
		} else {
			s.tx.Store(nil)
		}
	}()
	if len(t.recs) == 0 {
		return nil
	}
	var first uint64
	var err error
	if s.groupFault != nil {
		err = s.groupFault()
	} else {
		first, err = s.log.AppendGroup(context.Background(), t.recs)
	}
	logFault := err != nil && !errors.Is(err, storage.ErrClosed)
	if err == nil && first != t.first {
		if _, ok := s.log.(storage.Replicated); ok {
			// A replicated log took a foreign record first: the group's
			// writes are taken back and applied again after it.
			return s.reapplyTxLocked(t, first)
		}
		err = fmt.Errorf("the log gave index %d to the records applied as %d", first, t.first)
	}
	if err == nil {
		return nil
	}
	if refused(err) {
		// Nothing of the group is in the log (or, after an unknown
		// outcome, it comes back as a foreign record): its writes are
		// taken back, and the shard goes on.
		s.tx.Store(nil)
		if rerr := s.rebuildLocked(t.first - 1); rerr != nil {
			err = fmt.Errorf("%w (and taking its writes back: %w)", err, rerr)
			s.failLocked(err, t.first)
		}
		return err
	}
	err = s.appendFailedLocked(err, logFault, t.first, t.first+uint64(len(t.recs))-1)
	s.tx.Store(nil) // the rebuild reads the log alone
	if rerr := s.rebuildLocked(t.first - 1); rerr != nil {
		s.faults.recoverable = false // the state holds writes the log does not
		return fmt.Errorf("%w (and taking its writes back: %w)", err, rerr)
	}
	return err
}

// reapplyTxLocked takes back the group t, applied ahead of the log, which
// put it at first instead, and applies what the log holds up to its end.
func (s *Shard) reapplyTxLocked(t *txGroup, first uint64) error {
	s.tx.Store(nil)
	if err := s.rebuildLocked(t.first - 1); err != nil {
		err = fmt.Errorf("shard: taking back a group the log moved: %w", err)
		s.failLocked(err, t.first)
		return err
	}
	end := first + uint64(len(t.recs)) - 1
	for s.applied < end {
		idx := s.applied + 1
		rec, err := s.log.Read(idx)
		if err == nil {
			err = s.applyReadLocked(idx, rec)
		}
		if err != nil {
			err = fmt.Errorf("shard: record %d: %w", idx, err)
			s.failLocked(err, idx)
			return err
		}
	}
	return nil
}
