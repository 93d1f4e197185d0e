package shard

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// A record whose apply panics (a bug in applying a command the log already
// holds) must end up applied whole or not at all, and the state must be
// the one a restart's replay rebuilds. The apply may have changed part of
// the state before it panicked, so the shard skips the record for good:
// its index goes in the skipped file (written and fsynced before the
// writer hears of the error), and the state is rebuilt from the newest
// image and the log up to the record before it, skipped records left
// out. Every later load leaves the same records out. A record that panics
// during a load at Open is skipped the same way (its writer was never
// answered, or it met the same bug when written).

// skippedFile lists the skipped records' indexes, one a line.
const skippedFile = "skipped-records"

// replayPanic is a replay ended by a record whose apply panicked.
type replayPanic struct {
	index uint64
	value any
}

func (p *replayPanic) Error() string {
	return fmt.Sprintf("shard: record %d panicked when applied: %v", p.index, p.value)
}

func readSkipped(dir string) (map[uint64]struct{}, error) {
	out := map[uint64]struct{}{}
	b, err := os.ReadFile(filepath.Join(dir, skippedFile))
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("shard: skipped records: %w", err)
	}
	for _, line := range bytes.Fields(b) {
		n, err := strconv.ParseUint(string(line), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("shard: skipped records: %q is not a record index", line)
		}
		out[n] = struct{}{}
	}
	return out, nil
}

func writeSkipped(dir string, skipped map[uint64]struct{}) error {
	var b []byte
	for _, n := range slices.Sorted(maps.Keys(skipped)) {
		b = strconv.AppendUint(b, n, 10)
		b = append(b, '\n')
	}
	if err := writeFileSync(filepath.Join(dir, skippedFile), b); err != nil {
		return fmt.Errorf("shard: skipped records: %w", err)
	}
	return nil
}

// Skipped returns the indexes of the records the shard skips, lowest
// first.
func (s *Shard) Skipped() []uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Sorted(maps.Keys(s.skipped))
}

// skipLocked adds the record at idx to the skipped ones, durably.
func (s *Shard) skipLocked(idx uint64) error {
	s.skipped[idx] = struct{}{}
	return writeSkipped(s.dir, s.skipped)
}

// applyPanickedLocked handles the record at idx panicking while applied:
// it is skipped and the state rebuilt without it. The error returned is
// the record's writer's. Should either step fail, the shard fails (it
// refuses further writes) rather than serve a state no replay gives.
func (s *Shard) applyPanickedLocked(idx uint64, r any) error {
	err := fmt.Errorf("shard: applying record %d: %w", idx, s.contained(r))
	// In an Exclusive the record, and those before it, are not in the log
	// yet: the rebuild below reads them there.
	if ferr := s.commitTxLocked(true); ferr != nil {
		return err
	}
	if ferr := s.skipLocked(idx); ferr != nil {
		s.failLocked(ferr, idx+1)
		return err
	}
	if ferr := s.rebuildLocked(idx); ferr != nil {
		s.failLocked(fmt.Errorf("shard: rebuilding after record %d panicked: %w", idx, ferr), idx+1)
		return err
	}
	return err
}

// rebuildLocked replaces the shard's state with a load up to the record
// at idx (skipped, or the last before a refused group), so that it is
// exactly what a restart would replay.
func (s *Shard) rebuildLocked(idx uint64) error {
	fresh := newShard(s.opts, s.dir, s.log, s.skipped)
	fresh.recent = nil
	// idx 0: nothing before (load would take 0 as "the whole log").
	if err := fresh.loadUpTo(idx); err != nil {
		fresh.objDelta(-fresh.spill.bytes)
		return err
	}
	s.objDelta(-s.spill.bytes) // fresh counted its own collections
	s.index, s.strs, s.objs, s.free = fresh.index, fresh.strs, fresh.objs, fresh.free
	s.liveBytes = fresh.liveBytes
	s.spill.bytes, s.spill.spilled = fresh.spill.bytes, fresh.spill.spilled
	s.recordRefs, s.lastPointed, s.lastRefs = fresh.recordRefs, fresh.lastPointed, fresh.lastRefs
	s.sweepCursor = 0
	s.applied = idx
	return nil
}

// loadUpTo is load up to the record at idx, and nothing for 0.
func (s *Shard) loadUpTo(idx uint64) error {
	if idx == 0 {
		return nil
	}
	return s.load(idx)
}
