package shard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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
	r.Attach(replicaImages{s})
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

// replicaImages is the shard as its replicated log sends and installs it
// (storage.ShardImages).
type replicaImages struct{ s *Shard }

// CaptureImage checkpoints the shard and returns the image written.
func (r replicaImages) CaptureImage(ctx context.Context) ([]byte, error) {
	applied, err := r.s.Checkpoint(ctx)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(imagePath(r.s.dir, applied))
}

// InstallImage replaces the shard's images with image, has reset replace
// the log's records, and reloads the shard from them, all with the shard
// held: nothing reads or applies meanwhile.
func (r replicaImages) InstallImage(image []byte, reset func() error) error {
	s := r.s
	st, err := decodeImage(image, s.opts.Stamp)
	if err != nil {
		return fmt.Errorf("shard: image sent: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if len(s.pending) != 0 || s.tx.Load() != nil {
		return fmt.Errorf("%w: writes in flight on a replica being replaced", ErrInternal)
	}
	if err := reset(); err != nil {
		err = fmt.Errorf("shard: replacing the log: %w", err)
		s.failLocked(err, 0)
		return err
	}
	imgs, err := listImages(s.dir)
	if err == nil {
		for _, old := range imgs {
			_ = os.Remove(filepath.Join(s.dir, old.name))
		}
		err = writeFileSync(imagePath(s.dir, st.applied), image)
	}
	if err == nil {
		err = s.rebuildLocked(s.log.LastIndex())
	}
	if err != nil {
		err = fmt.Errorf("shard: installing an image: %w", err)
		s.failLocked(err, 0)
		return err
	}
	s.checkpointed = st.applied
	s.turn.Broadcast()
	return nil
}
