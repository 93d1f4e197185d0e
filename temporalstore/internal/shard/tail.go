package shard

import (
	"errors"
	"fmt"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// A replicated log (storage.Replicated) holds records this shard did not
// append: on a follower all of them, on a leader an earlier leader's. They
// are committed, so the shard applies each one, in index order with its
// own, as soon as every record before it is applied: whoever holds the
// lock next applies it (applyReadyLocked), and a goroutine wakes when the
// log says records arrived, so a follower's state follows its leader's.

// startTail starts the goroutine that applies r's foreign records.
func (s *Shard) startTail(r storage.Replicated) {
	s.tailDone = make(chan struct{})
	go func() {
		for {
			select {
			case <-s.tailDone:
				return
			case <-r.Appended():
			}
			s.mu.Lock()
			if !s.closed {
				s.applyReadyLocked()
			}
			s.mu.Unlock()
		}
	}()
}

// applyForeignLocked applies the record at idx, the next one, when the log
// is replicated and the record is foreign, and reports whether it did.
func (s *Shard) applyForeignLocked(idx uint64) bool {
	r, ok := s.log.(storage.Replicated)
	if !ok || s.failed != nil || s.tx.Load() != nil || !r.Foreign(idx) {
		return false
	}
	rec, err := s.log.Read(idx)
	if err == nil {
		err = s.applyReadLocked(idx, rec)
	}
	if err == nil {
		return s.applied == idx
	}
	// A committed record this replica cannot read or decode: it stops
	// applying rather than diverge.
	s.failLocked(fmt.Errorf("shard: replicated record %d: %w", idx, err), idx)
	return false
}

// applyReadLocked applies rec, read from the log at idx. A record that
// panics is skipped as at replay; its error has no writer to go to.
func (s *Shard) applyReadLocked(idx uint64, rec []byte) error {
	ds, err := command.Decode(rec)
	if err != nil {
		return err
	}
	cmds := make([]command.Command, len(ds))
	for i := range ds {
		cmds[i] = ds[i].Command
	}
	_ = s.applyRecordLocked(idx, recordShare(len(rec), len(cmds)), cmds)
	return nil
}

// refused reports whether a log's append error left nothing appended by
// this call and the log usable: a replica that does not lead, or lost its
// leadership before the record committed.
func refused(err error) bool {
	return errors.Is(err, storage.ErrNotLeader) || errors.Is(err, storage.ErrUnknownOutcome)
}

// Progress returns the index of the last record the shard applied and of
// the last its log holds: on a replica, how far it is behind its log.
func (s *Shard) Progress() (applied, last uint64) {
	s.mu.RLock()
	applied = s.applied
	s.mu.RUnlock()
	return applied, s.log.LastIndex()
}
