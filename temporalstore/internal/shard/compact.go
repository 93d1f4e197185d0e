package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/keyindex"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// relocateBatch bounds how many values Compact reads at a time, and one
// compaction record moves (it also stays within half the log's record
// limit), so a round holds the shard's append gate for one bounded write
// at a time.
const relocateBatch = 256

// ReclaimStats is what ReclaimLog or Compact did.
type ReclaimStats struct {
	// Segments is the number of log segments dropped.
	Segments int
	// Bytes is the written bytes of those segments.
	Bytes int64
	// Moved is the number of live values rewritten at the log's head
	// (Compact only), and MovedBytes their records' bytes.
	Moved      int
	MovedBytes int64
}

// ReclaimLog drops the log segments that nothing needs any more: those
// below the lowest record a string points at, once a checkpoint covers
// the collections' ops in them. It moves no data, so it is cheap; Compact
// does the rest.
func (s *Shard) ReclaimLog(ctx context.Context) (st ReclaimStats, err error) {
	defer s.maintSafely("reclaim log", &err)
	var low uint64
	closed := false
	s.rlocked(func() {
		if closed = s.closed; !closed {
			low = s.lowestStringLocked()
		}
	})
	if closed {
		return ReclaimStats{}, ErrClosed
	}
	return s.dropBefore(ctx, low, ReclaimStats{})
}

// dropBefore drops the whole segments below index cut, after a checkpoint.
func (s *Shard) dropBefore(ctx context.Context, cut uint64, st ReclaimStats) (ReclaimStats, error) {
	s.reclaimMu.Lock()
	defer s.reclaimMu.Unlock()
	if s.backupHolds.Load() > 0 {
		// A backup is copying the segments: they go at a later round.
		return ReclaimStats{}, nil
	}
	segs := s.log.Segments()
	n := 0
	for n+1 < len(segs) && segs[n+1].First <= cut {
		st.Bytes += segs[n].Bytes
		n++
	}
	if n == 0 {
		st.Bytes = 0
		return st, nil
	}
	// No string points below cut, so none below segs[n].First, which the
	// log is about to start at (or, with records to replay, a little
	// before).
	applied, err := s.checkpoint(ctx, segs[n].First)
	if err != nil {
		return st, err
	}
	// The checkpoint covers the collections up to applied; records after
	// it stay for replay.
	cut = min(segs[n].First, applied+1)
	if err := s.log.TruncateFront(ctx, cut); err != nil {
		return st, fmt.Errorf("shard: reclaim log: %w", err)
	}
	st.Segments = len(segs) - len(s.log.Segments())
	return st, nil
}

// Compact reclaims the oldest segments of the log, at most maxSegments of
// them (and never the one being written): it rewrites the live values they
// hold at the log's head (an expired one is deleted instead), writes a
// checkpoint, and drops them. Each rewrite is an ordinary logged write of
// the same value and expiry, so a crash at any point loses nothing.
func (s *Shard) Compact(ctx context.Context, maxSegments int) (st ReclaimStats, err error) {
	defer s.maintSafely("compact", &err)
	segs := s.log.Segments()
	if len(segs) < 2 || maxSegments < 1 || s.backupHolds.Load() > 0 {
		return st, nil
	}
	cut := segs[min(maxSegments, len(segs)-1)].First
	// The entries are copied under the lock, compactScanChunk at a time,
	// and their records, which never change, are read after it, a batch at
	// a time: a writer or reader is held up by the moves, never by a disk
	// read or a whole scan of the index.
	old, err := s.stringsBelow(cut)
	if err != nil {
		return st, err
	}
	if err := s.relocateEntries(ctx, old, &st); err != nil {
		return st, err
	}
	// Should a string still be certainly below cut (a bucket of the counts
	// wholly under it), the log is dropped only below that.
	var low uint64
	var ok bool
	s.rlocked(func() {
		if low, ok = s.strs.lowest(); !ok {
			low = s.scanLowestStringLocked()
		}
	})
	if low < cut && (!ok || cut-low >= addrBucket) {
		cut = low
	}
	return s.dropBefore(ctx, cut, st)
}

// relocateEntries rewrites at the log's head the values the entries point
// at, relocateBatch at a time; an entry replaced or deleted meanwhile is
// skipped (View.relocate).
func (s *Shard) relocateEntries(ctx context.Context, old []keyindex.Entry, st *ReclaimStats) error {
	for len(old) > 0 {
		batch := old[:min(relocateBatch, len(old))]
		old = old[len(batch):]
		moves, err := s.readMoves(batch)
		if err != nil {
			return err
		}
		if err := s.relocateMoves(ctx, moves, relocateBatch, st); err != nil {
			return err
		}
	}
	return nil
}

// relocateRecordBytes bounds the moved values one relocation record
// carries (a value over it goes alone): small values then stay in records
// the log holds itself, below a large-record threshold (storage/largelog's
// 1 MiB), where packing them into one big record would send every read of
// one through the whole record's file.
const relocateRecordBytes = 512 << 10

// relocateMoves rewrites moves at the log's head, at most perRecord a
// record (View.relocate).
func (s *Shard) relocateMoves(ctx context.Context, moves []move, perRecord int, st *ReclaimStats) error {
	if len(moves) == 0 {
		return nil
	}
	if s.beforeRelocate != nil {
		s.beforeRelocate()
	}
	for len(moves) > 0 {
		part := moves[:min(perRecord, movesPerRecord(moves, min(s.log.MaxRecordSize()/2, relocateRecordBytes)))]
		moves = moves[len(part):]
		err := s.Mutate(ctx, func(v *View) ([]command.Command, error) {
			return v.relocate(part, st)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// moveOf is the move of c, the command index entry e points at: for a
// string its value and expiry too (a spilled collection's image is read
// again when it moves, View.relocate).
func moveOf(c *command.Command, e keyindex.Entry) move {
	m := move{key: clone(c.Key), entry: e, size: len(c.Key) + 32}
	for _, a := range c.Args {
		m.size += len(a) + 8
	}
	if !isSpilled(e) {
		m.value, m.expiry = clone(c.Args[0]), c.Expiry
	}
	return m
}

// RelocateSparse rewrites at the log's head the live values of up to limit
// of the records queued as sparse (queueSparseLocked) whose live share is
// at most 1/sparseLiveShare, so that reads find them together in a few
// new records instead of one mostly dead record each; once no key points
// at a sparse record it leaves the record cache. Each rewrite is an
// ordinary logged write of the same value and expiry, as Compact's, so a
// crash at any point loses nothing. A record whose segment was dropped
// meanwhile has nothing left to move.
func (s *Shard) RelocateSparse(ctx context.Context, limit int) (st ReclaimStats, err error) {
	defer s.maintSafely("relocate", &err)
	var addrs []uint64
	closed := false
	s.locked(func() {
		if closed = s.closed; closed {
			return
		}
		addrs = make([]uint64, 0, min(limit, len(s.sparse)))
		for addr := range s.sparse {
			if len(addrs) == limit {
				break
			}
			addrs = append(addrs, addr)
			delete(s.sparse, addr)
		}
	})
	if closed {
		return st, ErrClosed
	}
	// The moves are made from the record in hand: a read of each live
	// value's record again, as Compact does, would double the reads.
	var moves []move
	for _, addr := range addrs {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		rec, _, _, err := s.readRecord(addr)
		if errors.Is(err, storage.ErrCompacted) {
			continue
		}
		if err != nil {
			return st, fmt.Errorf("shard: relocate: %w", err)
		}
		cmds, err := command.Decode(rec)
		if err != nil {
			return st, fmt.Errorf("shard: relocate: record %d: %w", addr, err)
		}
		n := len(moves)
		s.rlocked(func() {
			for i := range cmds {
				if cmds[i].Op != OpSet {
					continue
				}
				// The entry that points at this command, found by its
				// place, which no other entry shares: no record is read.
				at := func(e keyindex.Entry) bool {
					return e.Addr == addr && !isObject(e) && !isSpilled(e) && (loc(e) == command.Loc{Offset: cmds[i].Offset} || loc(e) == command.Loc{Pos: i})
				}
				if e, ok := s.index.Get(hashKey(cmds[i].Key), at); ok {
					moves = append(moves, moveOf(&cmds[i].Command, e))
				}
			}
		})
		if (len(moves)-n)*sparseLiveShare > len(cmds) {
			// Not sparse (its count is a hint): queued again when
			// another of its entries goes.
			moves = moves[:n]
		}
		if len(moves) >= relocateBatch {
			if err := s.relocateMoves(ctx, moves, sparseRecordMoves, &st); err != nil {
				return st, err
			}
			moves = moves[:0]
		}
	}
	return st, s.relocateMoves(ctx, moves, sparseRecordMoves, &st)
}

// sparseRecordMoves bounds the values a record of RelocateSparse carries:
// a pipeline's size, since the record cache holds a record whole, and one
// of relocateBatch values would be a large entry to admit for any one of
// them read.
const sparseRecordMoves = 2 * sparseMinCommands

// compactScanChunk is how many index entries Compact looks at per hold
// of the shard's lock.
const compactScanChunk = 4096

// stringsBelow returns the string entries that point below log index cut.
// It scans the index a chunk at a time, letting writers in between: an
// entry present throughout is seen (keyindex.Scan's promise), and one
// written meanwhile points at the log's head, above cut. The counts spare
// the scan when no string is below cut.
func (s *Shard) stringsBelow(cut uint64) ([]keyindex.Entry, error) {
	var old []keyindex.Entry
	for cursor := uint64(0); ; {
		closed, none := false, false
		s.rlocked(func() {
			if closed = s.closed; closed {
				return
			}
			if low, ok := s.strs.lowest(); cursor == 0 && ok && low >= cut {
				none = true
				return
			}
			cursor = s.index.Scan(cursor, compactScanChunk, func(e keyindex.Entry) {
				if s.maintFault != nil {
					s.maintFault("compact")
				}
				if !isObject(e) && e.Addr < cut {
					old = append(old, e)
				}
			})
		})
		switch {
		case closed:
			return nil, ErrClosed
		case none:
			return nil, nil
		case cursor == 0:
			return old, nil
		}
	}
}

// move is a value Compact read from an old segment outside the shard's
// lock: its key, the index entry that pointed at it, and for a string its
// value and expiry.
type move struct {
	key    []byte
	entry  keyindex.Entry
	value  []byte
	expiry int64
	// size is the bytes the move's command takes, about.
	size int
}

// movesPerRecord is how many of moves, from the first, one record takes
// within limit bytes; at least one (a value alone fits: it was written as
// a record of its own).
func movesPerRecord(moves []move, limit int) int {
	n, size := 1, moves[0].size
	for n < len(moves) && size+moves[n].size <= limit {
		size += moves[n].size
		n++
	}
	return n
}

// readMoves reads the commands the entries point at.
func (s *Shard) readMoves(entries []keyindex.Entry) ([]move, error) {
	moves := make([]move, 0, len(entries))
	for _, e := range entries {
		c, err := s.commandAt(e)
		if err != nil {
			return nil, err
		}
		moves = append(moves, moveOf(&c.Command, e))
	}
	return moves, nil
}

// relocate returns the commands that rewrite the moves at the log's head.
// A key whose index entry is no longer the one read was rewritten or
// deleted since, and has nothing left to move. The entry is found by its
// address, which no other key's entry shares, so confirming it reads no
// record: the shard's lock is held here.
func (v *View) relocate(moves []move, st *ReclaimStats) ([]command.Command, error) {
	var cmds []command.Command
	for i := range moves {
		m := &moves[i]
		if _, ok := v.s.index.Get(hashKey(m.key), func(e keyindex.Entry) bool { return e == m.entry }); !ok {
			continue
		}
		switch {
		case isSpilled(m.entry):
			// A spilled collection: its image moves, version kept.
			it, err := v.Get(m.key)
			if err != nil {
				return nil, err
			}
			if !it.Exists {
				cmds = append(cmds, command.Command{Op: OpDelete, Key: m.key})
				continue
			}
			img := object.Append(nil, it.Obj)
			cmds = append(cmds, imageCommand(it.Obj, img))
			st.MovedBytes += int64(len(m.key) + len(img))
		case m.expiry != 0 && m.expiry <= v.now:
			cmds = append(cmds, command.Command{Op: OpDelete, Key: m.key})
			continue
		default:
			cmds = append(cmds, StringSet(m.key, m.value, expiryTime(m.expiry)))
			st.MovedBytes += int64(len(m.key) + len(m.value))
		}
		st.Moved++
	}
	return cmds, nil
}

// entry returns key's index entry.
func (v *View) entry(key []byte) (keyindex.Entry, bool) {
	return v.s.index.Get(hashKey(key), v.s.matcher(key))
}

// Stats is a shard's state, for the surfaces to export.
type Stats struct {
	// Keys is the number of index entries (expired ones until swept) and
	// Collections how many of them are collections: Spilled of those are
	// in the log, the rest resident, taking CollectionBytes of memory.
	Keys, Collections, Spilled int
	CollectionBytes            int64
	// Spills counts collections spilled since open; Loads those made
	// resident again by a write and Promotions by a read.
	Spills, Loads, Promotions uint64
	// IndexBytes is the resident index's memory.
	IndexBytes int
	// RecentBytes and RecentRecords are the newest string records held
	// in memory (Options.RecentBytes).
	RecentBytes   int64
	RecentRecords int
	// LiveBytes is the log bytes the strings point at.
	LiveBytes int64
	// LogBytes is the space the log's segment files take on disk, in whole
	// blocks as the file system allocated them (preallocation included).
	LogBytes int64
	// LogSegments is the number of segment files.
	LogSegments int
	// SpaceAmp is LogBytes over LiveBytes (0 when nothing is live).
	SpaceAmp float64
	// LogWrittenBytes is how far the segment files are written (their
	// preallocated tails not counted), and GarbageBytes what of that is
	// not live: what compaction could give back.
	LogWrittenBytes, GarbageBytes int64
	// LogRecords, LogFsyncs and LogWritten are the log's counters since
	// open: records appended, fsyncs, and bytes written to segments.
	LogRecords, LogFsyncs, LogWritten uint64
	// LogFsyncLatency is the log's fdatasync latencies since open.
	LogFsyncLatency storage.Histogram
	// Applied is the index of the last applied record.
	Applied uint64
	// PayloadBytes is the key and argument bytes of the commands written
	// since open; WriteAmp is LogWritten over it (0 before any write).
	PayloadBytes int64
	WriteAmp     float64
}

// Stats returns the shard's statistics.
func (s *Shard) Stats() Stats {
	var st Stats
	s.rlocked(func() {
		st = Stats{
			Keys:         s.index.Len(),
			IndexBytes:   s.index.Bytes(),
			LiveBytes:    s.liveBytes,
			Applied:      s.applied,
			PayloadBytes: s.payload,
		}
		st.Spilled, st.CollectionBytes = s.spill.spilled, s.spill.bytes
		st.Collections = len(s.objs) - len(s.free) + st.Spilled
	})
	st.Spills, st.Loads, st.Promotions = s.spill.spills.Load(), s.spill.loads.Load(), s.spill.promotions.Load()
	if s.recent != nil {
		st.RecentBytes, st.RecentRecords = s.recent.size()
	}
	ls := s.log.Stats()
	st.LogRecords, st.LogFsyncs, st.LogWritten, st.LogSegments = ls.Records, ls.Fsyncs, ls.Bytes, ls.Segments
	st.LogFsyncLatency = ls.FsyncLatency
	st.LogBytes = ls.DiskBytes
	if st.LiveBytes > 0 {
		st.SpaceAmp = float64(st.LogBytes) / float64(st.LiveBytes)
	}
	for _, seg := range s.log.Segments() {
		st.LogWrittenBytes += seg.Bytes
	}
	st.GarbageBytes = max(st.LogWrittenBytes-st.LiveBytes, 0)
	if st.PayloadBytes > 0 {
		st.WriteAmp = float64(st.LogWritten) / float64(st.PayloadBytes)
	}
	return st
}

// ReclaimMemory gives back memory deletes left behind: the index's table
// is shrunk when mostly empty, and the collections' slot table is cut
// after its last live slot. It returns the bytes freed (index slots and
// object slots).
func (s *Shard) ReclaimMemory() (freed int) {
	// A panic is counted and the round goes on; freed is what was freed
	// before it.
	defer s.maintSafely("reclaim memory", new(error))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0
	}
	freed = s.index.Shrink()
	n := len(s.objs)
	for n > 0 && s.objs[n-1] == nil {
		n--
	}
	if n < len(s.objs) {
		freed += (len(s.objs) - n) * 8
		s.objs = slices.Clip(s.objs[:n])
		free := s.free[:0]
		for _, i := range s.free {
			if int(i) < n {
				free = append(free, i)
			}
		}
		s.free = free
	}
	return freed
}

// SinceCheckpoint reports how many records have been applied since the last
// checkpoint this shard wrote or opened from.
func (s *Shard) SinceCheckpoint() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.applied - s.checkpointed
}
