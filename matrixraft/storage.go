package matrixraft

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
)

// StorageOptions configures a Storage.
type StorageOptions struct {
	// WAL configures the log under <dir>/log. The default is a durable log
	// (wal.SyncAlways) with the wal package's defaults.
	WAL wal.Options
	// Group is the raft group whose records this storage reads and writes.
	// Default: 1.
	Group uint64
	// MaxRecordBytes bounds the entries written in one log record; a longer
	// run is split over several records of one atomic batch. Default: 4 MiB.
	MaxRecordBytes int
}

func (o StorageOptions) withDefaults() StorageOptions {
	if o.Group == 0 {
		o.Group = 1
	}
	if o.MaxRecordBytes == 0 {
		o.MaxRecordBytes = 4 << 20
	}
	return o
}

// Validate reports whether the options (after defaults) are usable.
func (o StorageOptions) Validate() error {
	if o.MaxRecordBytes < 0 {
		return fmt.Errorf("%w: negative MaxRecordBytes", ErrInvalidOptions)
	}
	return nil
}

// span remembers the highest entry index written in one log record.
type span struct{ walIndex, lastEntry uint64 }

// Storage is raft's log storage made durable on a wal.Log: entries, the
// HardState and snapshots. It implements raft.Storage from an in-memory
// cache that Open rebuilds from the newest durable snapshot plus the log.
//
// Writes go through Save (one Ready), Flush and CreateSnapshot. Save and
// Flush are made by one goroutine at a time (the node's loop); one
// CreateSnapshot may run beside them (a node writes its snapshots in the
// background), and a snapshot installed by Save meanwhile wins over an
// older one being created. The raft.Storage methods are safe to call
// concurrently with all of them.
type Storage struct {
	opts    StorageOptions
	dir     string
	snapDir string
	log     *wal.Log
	mem     *raft.MemoryStorage

	// wmu orders this storage's log writes with the HardState each
	// carries: a record never holds an older HardState than one before it.
	wmu sync.Mutex

	mu        sync.Mutex // guards the fields below
	hs        hardState
	spans     []span
	snapIndex uint64 // newest durable snapshot
	snapTerm  uint64
	markerWAL uint64 // log index of that snapshot's record
	lastWAL   uint64 // log index of this group's newest record; 0 when none
	fsyncs    uint64
	hsDirty   bool // hs is newer than the last one written
	rehomes   uint64
	// snapReq, set while a node runs on a Host's group, takes the Host's
	// requests for a snapshot.
	snapReq chan<- struct{}

	// snapMu orders changes of mem's snapshot with snapData, its data:
	// mem holds its snapshot without the data because raft's
	// MemoryStorage copies its whole snapshot on every ApplySnapshot,
	// CreateSnapshot and Snapshot, tens of megabytes each time. The data
	// is shared read-only.
	snapMu   sync.Mutex
	snapData []byte

	host *Host // set when the log is shared by a Host's groups
}

var _ raft.Storage = (*Storage)(nil)

// OpenStorage opens (or creates) the storage in dir and recovers it: the
// newest snapshot whose record is in the log, then every entry after it,
// with conflicting suffixes truncated exactly as they were at run time.
func OpenStorage(dir string, opts StorageOptions) (*Storage, error) {
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &Storage{opts: opts, dir: dir, snapDir: filepath.Join(dir, "snap"), mem: raft.NewMemoryStorage()}
	if err := os.MkdirAll(s.snapDir, 0o755); err != nil {
		return nil, err
	}
	l, err := wal.Open(filepath.Join(dir, "log"), opts.WAL)
	if err != nil {
		return nil, err
	}
	s.log = l
	if err := s.recover(s.scanLog); err != nil {
		l.Close()
		return nil, err
	}
	return s, nil
}

// scanLog visits this group's records of the log in order.
func (s *Storage) scanLog(visit func(walIndex uint64, rec logRecord) error) error {
	it := s.log.Iterator(s.log.FirstIndex())
	defer it.Close()
	for it.Next() {
		rec, err := decodeRecord(it.Value())
		if err != nil {
			return fmt.Errorf("log record %d: %w", it.Index(), err)
		}
		if rec.group != s.opts.Group {
			continue
		}
		if err := visit(it.Index(), rec); err != nil {
			return err
		}
	}
	return it.Err()
}

// recover rebuilds the in-memory state from this group's records, which
// scan visits in log order.
func (s *Storage) recover(scan func(visit func(walIndex uint64, rec logRecord) error) error) error {
	var (
		ents     []*pb.Entry
		base     uint64 // entries at or below are covered by an installed snapshot
		snapIdx  uint64
		snapTerm uint64
		marker   uint64
	)
	err := scan(func(walIndex uint64, rec logRecord) error {
		s.lastWAL = walIndex
		if rec.hasHS {
			s.hs = rec.hs
		}
		switch rec.kind {
		case recSnapshot:
			if rec.installed {
				ents, base, s.spans = nil, rec.snapIndex, nil
			}
			if rec.snapIndex >= snapIdx {
				snapIdx, snapTerm, marker = rec.snapIndex, rec.snapTerm, walIndex
			}
		case recState:
			in := rec.entries
			for len(in) > 0 && in[0].GetIndex() <= base {
				in = in[1:]
			}
			if len(in) == 0 {
				return nil
			}
			first := in[0].GetIndex()
			if len(ents) > 0 {
				off := ents[0].GetIndex()
				switch {
				case first < off:
					ents = nil
				case first > ents[len(ents)-1].GetIndex()+1:
					return fmt.Errorf("%w: log record %d starts at entry %d after entry %d", ErrCorrupt, walIndex, first, ents[len(ents)-1].GetIndex())
				default:
					ents = ents[:first-off]
				}
			}
			ents = append(ents, in...)
			s.spans = append(s.spans, span{walIndex, in[len(in)-1].GetIndex()})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if snapIdx > 0 {
		snap, err := readSnapshotFile(s.snapDir, snapIdx, snapTerm)
		if err != nil {
			return err
		}
		if err := s.applyMemSnapshot(snap); err != nil {
			return err
		}
		s.snapIndex, s.snapTerm, s.markerWAL = snapIdx, snapTerm, marker
	}
	for len(ents) > 0 && ents[0].GetIndex() <= snapIdx {
		ents = ents[1:]
	}
	if len(ents) > 0 && ents[0].GetIndex() != snapIdx+1 {
		return fmt.Errorf("%w: log resumes at entry %d but the snapshot ends at %d", ErrCorrupt, ents[0].GetIndex(), snapIdx)
	}
	if err := s.mem.Append(ents); err != nil {
		return err
	}
	if last, _ := s.mem.LastIndex(); s.hs.commit > last {
		// A commit index is only a hint; never point past the durable log.
		s.hs.commit = last
	}
	if !s.hs.empty() {
		return s.mem.SetHardState(s.hs.proto())
	}
	return nil
}

// InitialState implements raft.Storage.
func (s *Storage) InitialState() (*pb.HardState, *pb.ConfState, error) {
	return s.mem.InitialState()
}

// Entries implements raft.Storage.
func (s *Storage) Entries(lo, hi, maxSize uint64) ([]*pb.Entry, error) {
	return s.mem.Entries(lo, hi, maxSize)
}

// Term implements raft.Storage.
func (s *Storage) Term(i uint64) (uint64, error) { return s.mem.Term(i) }

// LastIndex implements raft.Storage.
func (s *Storage) LastIndex() (uint64, error) { return s.mem.LastIndex() }

// FirstIndex implements raft.Storage.
func (s *Storage) FirstIndex() (uint64, error) { return s.mem.FirstIndex() }

// Snapshot implements raft.Storage. The snapshot's Data is shared with
// the storage and must not be modified.
func (s *Storage) Snapshot() (*pb.Snapshot, error) {
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	snap, err := s.mem.Snapshot()
	if err != nil {
		return nil, err
	}
	snap.Data = s.snapData
	return snap, nil
}

// applyMemSnapshot installs a received or recovered snapshot in mem,
// keeping its data here.
func (s *Storage) applyMemSnapshot(snap *pb.Snapshot) error {
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	if err := s.mem.ApplySnapshot(&pb.Snapshot{Metadata: snap.GetMetadata()}); err != nil {
		return err
	}
	s.snapData = snap.GetData()
	return nil
}

// HardState returns the last HardState saved.
func (s *Storage) HardState() *pb.HardState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hs.proto()
}

// SnapshotIndex returns the index of the newest durable snapshot.
func (s *Storage) SnapshotIndex() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapIndex
}

// Fsyncs returns how many log writes this storage has waited for.
func (s *Storage) Fsyncs() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fsyncs
}

// Rehomes returns how often a Host wrote this group's recovery state again
// at the head of its shared log, so that older records could be dropped.
func (s *Storage) Rehomes() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rehomes
}

// Save persists one Ready in the order raft requires: a snapshot's file
// first (fsynced and renamed into place), then in one log batch the
// snapshot's record, the entries and the HardState, fsynced; only then is
// the in-memory view updated, so raft never sees a state that is not
// durable. When mustSync is false and there are no entries and no snapshot,
// the HardState (a commit index change) is kept in memory and written with
// the next record.
func (s *Storage) Save(ctx context.Context, hs *pb.HardState, ents []*pb.Entry, snap *pb.Snapshot, mustSync bool) error {
	hasSnap := snap != nil && !raft.IsEmptySnap(snap)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	if hs != nil && !raft.IsEmptyHardState(hs) {
		s.hs = hsFrom(hs)
	}
	cur := s.hs
	s.mu.Unlock()
	if !hasSnap && len(ents) == 0 && !mustSync {
		if hs != nil && !raft.IsEmptyHardState(hs) {
			s.mu.Lock()
			s.hsDirty = true
			s.mu.Unlock()
			return s.mem.SetHardState(hs)
		}
		return nil
	}
	if hasSnap {
		if err := writeSnapshotFile(s.snapDir, snap); err != nil {
			return err
		}
	}
	recs, err := s.encodeSave(cur, ents, snap, hasSnap)
	if err != nil {
		return err
	}
	unlock := s.appending()
	first, err := s.log.AppendBatch(ctx, recs)
	if err != nil {
		unlock()
		return err
	}
	s.mu.Lock()
	s.fsyncs++
	s.hsDirty = s.hs != cur
	s.lastWAL = max(s.lastWAL, first+uint64(len(recs))-1)
	w := first
	if hasSnap {
		s.snapIndex, s.snapTerm, s.markerWAL = snap.GetMetadata().GetIndex(), snap.GetMetadata().GetTerm(), w
		s.spans = s.spans[:0]
		w++
	}
	for i := w; i < first+uint64(len(recs)); i++ {
		if len(ents) > 0 {
			s.spans = append(s.spans, span{i, ents[len(ents)-1].GetIndex()})
		}
	}
	s.mu.Unlock()
	unlock()
	if hasSnap {
		if err := s.applyMemSnapshot(snap); err != nil && !errors.Is(err, raft.ErrSnapOutOfDate) {
			return err
		}
	}
	if err := s.mem.Append(ents); err != nil {
		return err
	}
	if !cur.empty() {
		if err := s.mem.SetHardState(cur.proto()); err != nil {
			return err
		}
	}
	if hasSnap {
		return s.compactLog(ctx)
	}
	return nil
}

// saveReq is one Ready's log write without a snapshot.
type saveReq struct {
	hs   *pb.HardState
	ents []*pb.Entry
}

// saveBatch is Save for several Readys without snapshots, in order, as one
// log write with one fsync. Later entries replace earlier ones from their
// first index on, as in separate Saves.
func (s *Storage) saveBatch(ctx context.Context, reqs []saveReq) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	cur := s.hs
	s.mu.Unlock()
	type part struct {
		recs int
		ents []*pb.Entry
	}
	var (
		recs  [][]byte
		parts []part
	)
	for _, r := range reqs {
		if r.hs != nil && !raft.IsEmptyHardState(r.hs) {
			cur = hsFrom(r.hs)
		}
		rs, err := s.encodeSave(cur, r.ents, nil, false)
		if err != nil {
			return err
		}
		recs = append(recs, rs...)
		parts = append(parts, part{len(rs), r.ents})
	}
	s.mu.Lock()
	s.hs = cur
	s.mu.Unlock()
	unlock := s.appending()
	first, err := s.log.AppendBatch(ctx, recs)
	if err != nil {
		unlock()
		return err
	}
	s.mu.Lock()
	s.fsyncs++
	s.hsDirty = s.hs != cur
	s.lastWAL = max(s.lastWAL, first+uint64(len(recs))-1)
	w := first
	for _, p := range parts {
		for range p.recs {
			if len(p.ents) > 0 {
				s.spans = append(s.spans, span{w, p.ents[len(p.ents)-1].GetIndex()})
			}
			w++
		}
	}
	s.mu.Unlock()
	unlock()
	for _, p := range parts {
		if err := s.mem.Append(p.ents); err != nil {
			return err
		}
	}
	if !cur.empty() {
		return s.mem.SetHardState(cur.proto())
	}
	return nil
}

func (s *Storage) encodeSave(cur hardState, ents []*pb.Entry, snap *pb.Snapshot, hasSnap bool) ([][]byte, error) {
	var recs [][]byte
	if hasSnap {
		m := snap.GetMetadata()
		recs = append(recs, encodeSnapshotMarker(nil, s.opts.Group, true, m.GetIndex(), m.GetTerm(), cur))
	}
	// Split long runs; only the last record carries the HardState, so a
	// torn batch never leaves a commit index past the entries it covers.
	for start := 0; start < len(ents) || len(recs) == 0 || start == 0; {
		end, size := start, 0
		for end < len(ents) && (end == start || size+proto.Size(ents[end]) <= s.opts.MaxRecordBytes) {
			size += proto.Size(ents[end])
			end++
		}
		var hsp *hardState
		if end == len(ents) {
			hsp = &cur
		}
		rec, err := encodeState(nil, s.opts.Group, hsp, ents[start:end])
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
		if end == len(ents) {
			break
		}
		start = end
	}
	return recs, nil
}

// CreateSnapshot makes a snapshot of the applied state at index durable:
// its file, then its log record (fsynced). It then compacts the in-memory
// log, keeping keep entries before index for slow followers, and drops
// log segments that the snapshot covers. The compaction fence: a log record
// is dropped only once every entry it holds is at or below a durable
// snapshot's index.
func (s *Storage) CreateSnapshot(ctx context.Context, index uint64, cs *pb.ConfState, data []byte, keep uint64) error {
	term, err := s.mem.Term(index)
	if errors.Is(err, raft.ErrCompacted) {
		return nil // a snapshot installed meanwhile already covers index
	}
	if err != nil {
		return err
	}
	snap := &pb.Snapshot{
		Metadata: &pb.SnapshotMetadata{Index: new(index), Term: new(term), ConfState: proto.Clone(cs).(*pb.ConfState)},
		Data:     data,
	}
	if err := writeSnapshotFile(s.snapDir, snap); err != nil {
		return err
	}
	s.wmu.Lock()
	s.mu.Lock()
	cur := s.hs
	s.mu.Unlock()
	unlock := s.appending()
	w, err := s.log.Append(ctx, encodeSnapshotMarker(nil, s.opts.Group, false, index, term, cur))
	if err != nil {
		unlock()
		s.wmu.Unlock()
		return err
	}
	s.mu.Lock()
	s.fsyncs++
	s.lastWAL = max(s.lastWAL, w)
	if index > s.snapIndex {
		s.snapIndex, s.snapTerm, s.markerWAL = index, term, w
	}
	s.mu.Unlock()
	unlock()
	s.wmu.Unlock()
	s.snapMu.Lock()
	_, err = s.mem.CreateSnapshot(index, cs, nil)
	if err == nil {
		s.snapData = data
	}
	s.snapMu.Unlock()
	if err != nil && !errors.Is(err, raft.ErrSnapOutOfDate) {
		return err
	}
	if index > keep {
		if err := s.mem.Compact(index - keep); err != nil && !errors.Is(err, raft.ErrCompacted) {
			return err
		}
	}
	return s.compactLog(ctx)
}

// compactLog drops log segments behind the fence and snapshot files older
// than the newest durable one. On a Host's shared log the fence is the
// lowest of every group's.
func (s *Storage) compactLog(ctx context.Context) error {
	s.mu.Lock()
	fence := s.fenceLocked()
	keep := s.snapIndex
	s.mu.Unlock()
	var err error
	if s.host != nil {
		err = s.host.compact(ctx)
	} else if fence != math.MaxUint64 {
		err = s.log.TruncateFront(ctx, fence)
	}
	if err != nil {
		return err
	}
	return removeOldSnapshots(s.snapDir, keep)
}

// fenceLocked forgets the spans a durable snapshot covers and returns the
// lowest log index this group still needs: its snapshot's record, its
// oldest record with entries after the snapshot, and its newest record
// (which holds its HardState). It is MaxUint64 for a group with no
// records. Called with mu held.
func (s *Storage) fenceLocked() uint64 {
	i := 0
	for i < len(s.spans) && s.spans[i].lastEntry <= s.snapIndex {
		i++
	}
	s.spans = append(s.spans[:0], s.spans[i:]...)
	if s.lastWAL == 0 {
		return math.MaxUint64
	}
	fence := s.lastWAL
	if s.snapIndex > 0 {
		fence = min(fence, s.markerWAL)
	}
	if len(s.spans) > 0 {
		fence = min(fence, s.spans[0].walIndex)
	}
	return fence
}

// rehomeRecord returns the one record that carries this group's whole
// recovery state, when its durable snapshot covers every entry it wrote:
// its snapshot record, which holds the HardState too, or with no snapshot
// a HardState record. Recovery reads the newest of either, so the copy
// written later stands for the older records. ok is false when the group has
// entries to keep or no records. Called with wmu held, so that no write
// of the group comes between this record and its bookkeeping.
func (s *Storage) rehomeRecord() (rec []byte, cur hardState, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fenceLocked() // forget the spans the snapshot covers
	if s.lastWAL == 0 || len(s.spans) > 0 {
		return nil, hardState{}, false
	}
	cur = s.hs
	if s.snapIndex > 0 {
		// Not marked installed: every entry before it is covered anyway,
		// and an installed record it copies is dropped only with all the
		// records before it.
		return encodeSnapshotMarker(nil, s.opts.Group, false, s.snapIndex, s.snapTerm, cur), cur, true
	}
	rec, err := encodeState(nil, s.opts.Group, &cur, nil)
	return rec, cur, err == nil // without entries there is nothing to fail
}

// rehomed notes that the record of rehomeRecord, holding cur, is durable
// at walIndex w. Called with wmu held.
func (s *Storage) rehomed(w uint64, cur hardState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastWAL = max(s.lastWAL, w)
	if s.snapIndex > 0 {
		s.markerWAL = w
	}
	s.hsDirty = s.hs != cur
	s.rehomes++
}

// setSnapshotRequests hands the storage the channel of the node running
// on it (nil when it stops).
func (s *Storage) setSnapshotRequests(c chan<- struct{}) {
	s.mu.Lock()
	s.snapReq = c
	s.mu.Unlock()
}

// requestSnapshotLocked asks the node running on this storage, if any,
// for a snapshot; it never blocks. Called with mu held.
func (s *Storage) requestSnapshotLocked() {
	if s.snapReq == nil {
		return
	}
	select {
	case s.snapReq <- struct{}{}:
	default: // a request is already pending
	}
}

// appending marks a write to a Host's shared log as in flight, so that a
// compaction never computes its fence between this write and its
// bookkeeping. It returns the function that ends the mark.
func (s *Storage) appending() func() {
	if s.host == nil {
		return func() {}
	}
	s.host.appendMu.RLock()
	return s.host.appendMu.RUnlock
}

// termOrVoteChanged says whether hs changes the stored term or vote, which
// must be durable before anything depending on it is sent.
func (s *Storage) termOrVoteChanged(hs *pb.HardState) bool {
	if hs == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return hs.GetTerm() != s.hs.term || hs.GetVote() != s.hs.vote
}

// Flush writes the HardState if a commit index change is still only in
// memory (Save keeps those for the next record), and waits for it to be
// durable. A node flushes on Stop, so that a restart, and above all a
// forced new cluster, starts from the commit index it had reached.
func (s *Storage) Flush(ctx context.Context) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	cur, dirty := s.hs, s.hsDirty
	s.mu.Unlock()
	if !dirty {
		return nil
	}
	rec, err := encodeState(nil, s.opts.Group, &cur, nil)
	if err != nil {
		return err
	}
	unlock := s.appending()
	defer unlock()
	w, err := s.log.Append(ctx, rec)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.fsyncs++
	s.hsDirty = s.hs != cur
	s.lastWAL = max(s.lastWAL, w)
	s.mu.Unlock()
	return nil
}

// Close closes the log. A Host's group only hands its storage back to the
// Host, which keeps the log open for the other groups.
func (s *Storage) Close() error {
	if s.host != nil {
		s.host.release(s.opts.Group)
		return nil
	}
	return s.log.Close()
}
