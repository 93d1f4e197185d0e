package shard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/api"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// A storage fault is a failed write or sync of the shard's log: a full
// disk, a device that fails. The log refuses appends after one, so the
// shard refuses writes (with an error matching api.ErrStorageFault, and
// api.ErrDiskFull for a full disk) and keeps serving reads: its state is
// the records it applied, all of which the log holds.
//
// A log that is a storage.Recoverer is brought back without a restart: a
// goroutine retries Recover, after recoverWait and then twice as long each
// time up to recoverMaxWait. Each try holds the append gate, so no write
// runs, waits for the writers of records before the failure to apply them,
// and asks the log to keep the records up to the last applied one. The
// records after it came from appends that failed: no writer was told they
// were written, and the log cuts them (durably) so that no restart replays
// them. Memory that held them by log index (recent records, the record
// cache) forgets them, since their indexes are given out again. Recover
// succeeds once the medium takes writes again; then writes resume.
//
// A log that lost records the shard had applied (an async table's records
// not yet synced when the sync failed) holds fewer than the shard applied:
// the state is then rebuilt from the log, as a restart would, and the loss
// logged. A failure of anything else (a record's apply, a rebuild) is not
// recovered: the shard refuses writes until a restart.

// Defaults of the recovery's waits.
const (
	defaultRecoverWait    = 100 * time.Millisecond
	defaultRecoverMaxWait = 2 * time.Second
)

// faultState is a shard's storage fault and its recovery (under mu).
type faultState struct {
	// recoverable says failed is a storage fault recovery may undo.
	recoverable bool
	// top is the highest index a failed append was given: memory may hold
	// records by index up to it.
	top uint64
	// running says the recovery goroutine runs; stop ends it, and done
	// is closed once it has ended.
	running bool
	stop    chan struct{}
	done    chan struct{}
	// since is when the fault came; recoveries counts those undone.
	since      time.Time
	recoveries uint64
}

// faultError is the error a shard refuses writes with after a storage
// fault. It matches api.ErrStorageFault, api.ErrDiskFull when the disk is
// full, and the log's own error.
type faultError struct {
	full  bool
	msg   string
	cause error
}

func (e *faultError) Error() string { return e.msg }

func (e *faultError) Unwrap() []error {
	if e.full {
		return []error{api.ErrDiskFull, api.ErrStorageFault, e.cause}
	}
	return []error{api.ErrStorageFault, e.cause}
}

// newFaultError names the shard and the fault's root cause (the system
// call's error, say, rather than every layer's words for it).
func (s *Shard) newFaultError(cause error) *faultError {
	full := errors.Is(cause, syscall.ENOSPC) || errors.Is(cause, syscall.EDQUOT)
	kind := api.ErrStorageFault
	if full {
		kind = api.ErrDiskFull
	}
	root := cause
	for u := errors.Unwrap(root); u != nil; u = errors.Unwrap(root) {
		root = u
	}
	until := "until its log can write again"
	if !s.recoverableLog() {
		until = "until restarted"
	}
	return &faultError{full: full, cause: cause, msg: fmt.Sprintf("%v: shard %s/%s/%d refuses writes %s (%v)",
		kind, s.opts.Namespace, s.opts.Table, s.opts.ShardIndex, until, root)}
}

// logFaultLocked records the log's failure err, met by an append the log
// gave indexes lost..top (0: none), as failLocked does, and starts the
// recovery if the log can recover. It returns the error the writer and
// the writes after it get.
func (s *Shard) logFaultLocked(err error, lost, top uint64) error {
	first := s.failed == nil
	if first {
		s.failed = s.newFaultError(err)
		s.faults.recoverable = true
		s.faults.since = time.Now()
		s.opts.Logger.Error("shard: storage fault; writes refused, reads go on", "err", err)
	}
	s.noteLostLocked(lost)
	s.faults.top = max(s.faults.top, top)
	if s.faults.recoverable {
		s.startRecoveryLocked()
	}
	return s.failed
}

// appendFailedLocked records the failure err of an append the log gave
// indexes lost..top (0: none): a storage fault when it is the log's own
// (fault), else a failure no recovery undoes. It returns the error the
// append's writers get.
func (s *Shard) appendFailedLocked(err error, fault bool, lost, top uint64) error {
	if fault {
		return s.logFaultLocked(err, lost, top)
	}
	err = fmt.Errorf("shard: append: %w", err)
	s.failLocked(err, lost)
	return err
}

// startRecoveryLocked starts the recovery goroutine, unless it runs or the
// log cannot recover (a replicated log is its group's to repair).
func (s *Shard) startRecoveryLocked() {
	if s.faults.running || s.closed {
		return
	}
	if !s.recoverableLog() {
		return
	}
	s.faults.running = true
	s.faults.stop, s.faults.done = make(chan struct{}), make(chan struct{})
	go s.recoverLoop(s.log.(storage.Recoverer), s.faults.stop, s.faults.done)
}

// recoverableLog says the shard's log recovers by itself (a replicated
// log is its group's to repair).
func (s *Shard) recoverableLog() bool {
	_, ok := s.log.(storage.Recoverer)
	_, replicated := s.log.(storage.Replicated)
	return ok && !replicated
}

func (s *Shard) recoverLoop(r storage.Recoverer, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	wait := s.opts.RecoverWait
	for attempt := 1; ; attempt++ {
		t := time.NewTimer(wait)
		select {
		case <-stop:
			t.Stop()
			return
		case <-t.C:
		}
		done, err := s.tryRecover(r)
		if done {
			return
		}
		// The first failure and then about once a minute: a full disk
		// may last.
		if attempt == 1 || attempt%30 == 0 {
			s.opts.Logger.Warn("shard: storage still failing; writes still refused", "attempts", attempt, "err", err)
		}
		wait = min(2*wait, s.opts.RecoverMaxWait)
	}
}

// errSettling is a recovery put off while writers of records before the
// failure still apply them.
var errSettling = errors.New("shard: writers before the failure still applying")

// tryRecover is one try of the recovery; done reports that no other is
// needed (recovered, closed, or no longer recoverable).
func (s *Shard) tryRecover(r storage.Recoverer) (done bool, err error) {
	s.gate.Lock()
	defer s.gate.Unlock()
	s.mu.Lock()
	switch {
	case s.closed:
		s.faults.running = false
		s.mu.Unlock()
		return true, ErrClosed
	case !s.faults.recoverable || s.failed == nil:
		s.faults.running = false
		s.mu.Unlock()
		return true, s.failed
	case len(s.pending) > 0:
		s.mu.Unlock()
		return false, errSettling
	}
	// A log that came back short once (see below) is asked for no more.
	last := min(s.applied, s.log.LastIndex())
	s.mu.Unlock()

	// Reads go on while the log recovers; no write can start.
	if err := r.Recover(context.Background(), last); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.faults.running = false
		return true, ErrClosed
	}
	top := max(s.faults.top, s.applied)
	if got := s.log.LastIndex(); got < s.applied {
		s.opts.Logger.Error("shard: the log lost acknowledged records not yet synced when it failed; the state goes back to what it holds",
			"acknowledged", s.applied, "kept", got)
		if err := s.rollBackLocked(got); err != nil {
			return false, err
		}
	}
	s.forgetLocked(s.applied, top)
	s.opts.Logger.Info("shard: recovered from a storage fault; writes resume",
		"fault", s.failed.Error(), "last", s.applied, "refused_for", time.Since(s.faults.since).Round(time.Millisecond))
	s.failed, s.lost = nil, 0
	s.faults.recoverable, s.faults.running, s.faults.top = false, false, 0
	s.faults.recoveries++
	return true, nil
}

// rollBackLocked rebuilds the state from the log's records up to last, the
// log's end, and removes the checkpoints of records it no longer holds:
// new records get their indexes.
func (s *Shard) rollBackLocked(last uint64) error {
	imgs, err := listImages(s.dir)
	if err != nil {
		return err
	}
	for _, img := range imgs {
		if img.applied > last {
			if err := os.Remove(filepath.Join(s.dir, img.name)); err != nil {
				return err
			}
		}
	}
	if err := s.rebuildLocked(last); err != nil {
		return err
	}
	s.checkpointed = min(s.checkpointed, last)
	return nil
}

// forgetLocked drops what memory holds by log index for the records after
// last up to top: their indexes are given to new records.
func (s *Shard) forgetLocked(last, top uint64) {
	for idx := last + 1; idx <= top; idx++ {
		if s.recent != nil {
			s.recent.mu.Lock()
			s.recent.dropLocked(idx)
			s.recent.mu.Unlock()
		}
		if s.opts.Cache != nil {
			s.opts.Cache.Delete(s.opts.CacheID, idx)
		}
		delete(s.sparse, idx)
		delete(s.recordRefs, idx)
	}
	if s.lastPointed > last {
		s.lastPointed, s.lastRefs = 0, 0
	}
}

// stopRecoveryLocked ends the recovery goroutine, if it runs, and waits
// for it with the lock let go (Close, the shard marked closed already): a
// try in progress must not touch the files after Close.
func (s *Shard) stopRecoveryLocked() {
	if !s.faults.running {
		return
	}
	done := s.faults.done
	close(s.faults.stop)
	s.faults.running = false
	s.mu.Unlock()
	<-done
	s.mu.Lock()
}

// StorageFault returns the storage fault the shard refuses writes with,
// or nil when it takes them (or refuses them for another failure).
func (s *Shard) StorageFault() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if errors.Is(s.failed, api.ErrStorageFault) {
		return s.failed
	}
	return nil
}

// Recoveries counts the storage faults the shard recovered from since open.
func (s *Shard) Recoveries() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.faults.recoveries
}
