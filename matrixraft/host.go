package matrixraft

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"go.etcd.io/raft/v3"

	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
)

// DefaultMaxPinnedBytes is the default HostOptions.MaxPinnedBytes: one
// segment of the wal package's default size.
const DefaultMaxPinnedBytes = 64 << 20

// HostOptions configures a Host.
type HostOptions struct {
	// WAL configures the shared log under <dir>/log. The default is a
	// durable log (wal.SyncAlways) with the wal package's defaults.
	WAL wal.Options
	// MaxRecordBytes bounds the entries of one group written in one log
	// record. Default: 4 MiB.
	MaxRecordBytes int
	// MaxPinnedBytes bounds how much of the shared log one group may keep
	// from compaction: the written bytes of the sealed segments from the
	// one holding the oldest record the group needs. A compaction that
	// finds a group past it writes the group's HardState and snapshot
	// record again at the log's head when its snapshot covers all its
	// entries, and otherwise asks the group's node for a snapshot (see
	// Host). math.MaxInt64 turns this off. Default: DefaultMaxPinnedBytes
	// (64 MiB).
	MaxPinnedBytes int64
	// Logger receives lifecycle events. Default: discards them.
	Logger *slog.Logger
}

func (o HostOptions) withDefaults() HostOptions {
	if o.MaxRecordBytes == 0 {
		o.MaxRecordBytes = 4 << 20
	}
	if o.MaxPinnedBytes == 0 {
		o.MaxPinnedBytes = DefaultMaxPinnedBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Validate reports whether the options (after defaults) are usable.
func (o HostOptions) Validate() error {
	switch {
	case o.MaxRecordBytes < 0:
		return fmt.Errorf("%w: negative MaxRecordBytes", ErrInvalidOptions)
	case o.MaxPinnedBytes < 0:
		return fmt.Errorf("%w: negative MaxPinnedBytes", ErrInvalidOptions)
	}
	return nil
}

// Host runs many raft groups in one process on one shared wal.Log, so that
// the Ready batches of groups persisting at the same moment share one
// write and one fdatasync (the log's group commit) instead of one each.
//
// Every log record carries its group's ID. OpenHost reads the log once and
// recovers every group found in it; StartNode (or Storage) hands a group's
// storage to one node at a time. A group's snapshots live in
// <dir>/groups/<id>/snap.
//
// Compaction is per group with one shared fence: a log segment is dropped
// only once no group needs any record in it — its newest HardState, its
// newest snapshot record, and its entries that its durable snapshot does
// not cover. It runs whenever a group takes or installs a snapshot. A
// quiet group would hold the log's front back at its last records for
// ever, so a compaction that finds a group needing records more than
// HostOptions.MaxPinnedBytes behind the head moves it out of the way:
//
//   - A group whose snapshot covers all its entries (or that has only a
//     HardState) gets that state written again at the log's head as one
//     new record, a copy of what recovery reads from its old ones: the
//     newest record wins on recovery, so its old records may go. Open,
//     running or handed back, the group is moved the same way; one that is
//     writing at that moment is left for the next compaction.
//   - A group with entries its snapshot does not cover is asked for a
//     snapshot now, before Options.SnapshotEntries, if its node runs on
//     this Host (StartNode). The node takes it as any other snapshot, and
//     the compaction behind that snapshot moves the fence.
//
// What can still hold the front back: a group with entries its snapshot
// does not cover and no node here to take one (one opened only through
// Storage, or handed back with such entries), entries not yet applied
// (no snapshot covers them), and a log whose groups all write without any
// of them snapshotting, since compaction runs after snapshots.
//
// A Host is safe for concurrent use. Stop its nodes before Close.
type Host struct {
	dir  string
	opts HostOptions
	log  *wal.Log

	// appendMu is held shared by every group's log write until its
	// bookkeeping is done, and exclusively while a compaction reads the
	// groups' fences, so no fence is read between a write and its record.
	appendMu sync.RWMutex
	// compactMu serializes compactions.
	compactMu sync.Mutex

	mu      sync.Mutex // guards the fields below
	groups  map[uint64]*Storage
	claimed map[uint64]bool
	closed  bool
}

// indexedRecord is a decoded log record with its log index.
type indexedRecord struct {
	walIndex uint64
	rec      logRecord
}

// OpenHost opens (or creates) the host in dir and recovers every group in
// its log, reading the log once.
func OpenHost(dir string, opts HostOptions) (*Host, error) {
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	l, err := wal.Open(filepath.Join(dir, "log"), opts.WAL)
	if err != nil {
		return nil, err
	}
	h := &Host{dir: dir, opts: opts, log: l, groups: map[uint64]*Storage{}, claimed: map[uint64]bool{}}
	byGroup, err := h.split()
	if err != nil {
		l.Close()
		return nil, err
	}
	for _, g := range slices.Sorted(maps.Keys(byGroup)) {
		s, err := h.newGroup(g)
		if err != nil {
			l.Close()
			return nil, err
		}
		recs := byGroup[g]
		err = s.recover(func(visit func(uint64, logRecord) error) error {
			for _, r := range recs {
				if err := visit(r.walIndex, r.rec); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("group %d: %w", g, err)
		}
		h.groups[g] = s
	}
	opts.Logger.Info("matrixraft: host opened", "dir", dir, "groups", len(h.groups), "log_first", l.FirstIndex(), "log_last", l.LastIndex())
	return h, nil
}

// split reads the whole log once and returns its records by group, each
// group's in log order.
func (h *Host) split() (map[uint64][]indexedRecord, error) {
	out := map[uint64][]indexedRecord{}
	it := h.log.Iterator(h.log.FirstIndex())
	defer it.Close()
	for it.Next() {
		if err := splitRecord(out, it.Index(), it.Value()); err != nil {
			return nil, err
		}
	}
	return out, it.Err()
}

// splitRecord decodes the log record at walIndex and files it under its
// group.
func splitRecord(out map[uint64][]indexedRecord, walIndex uint64, raw []byte) error {
	rec, err := decodeRecord(raw)
	if err != nil {
		return fmt.Errorf("log record %d: %w", walIndex, err)
	}
	if rec.group == 0 {
		return fmt.Errorf("%w: log record %d names group 0", ErrCorrupt, walIndex)
	}
	out[rec.group] = append(out[rec.group], indexedRecord{walIndex, rec})
	return nil
}

func (h *Host) groupDir(group uint64) string {
	return filepath.Join(h.dir, "groups", strconv.FormatUint(group, 10))
}

func (h *Host) newGroup(group uint64) (*Storage, error) {
	s := &Storage{
		opts:    StorageOptions{Group: group, MaxRecordBytes: h.opts.MaxRecordBytes},
		dir:     h.groupDir(group),
		snapDir: filepath.Join(h.groupDir(group), "snap"),
		log:     h.log,
		mem:     raft.NewMemoryStorage(),
		host:    h,
	}
	if err := os.MkdirAll(s.snapDir, 0o755); err != nil {
		return nil, err
	}
	return s, nil
}

// Groups returns the IDs of the groups that have state on this host.
func (h *Host) Groups() []uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []uint64
	for g, s := range h.groups {
		s.mu.Lock()
		has := s.lastWAL > 0
		s.mu.Unlock()
		if has {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out
}

// Storage hands out group's storage, recovered from the shared log (or
// empty for a new group). One caller at a time holds a group: until its
// Close, Storage returns ErrGroupInUse for it.
func (h *Host) Storage(group uint64) (*Storage, error) {
	if group == 0 {
		return nil, fmt.Errorf("%w: group 0", ErrInvalidOptions)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrHostClosed
	}
	if h.claimed[group] {
		return nil, fmt.Errorf("%w: %d", ErrGroupInUse, group)
	}
	s := h.groups[group]
	if s == nil {
		var err error
		if s, err = h.newGroup(group); err != nil {
			return nil, err
		}
		h.groups[group] = s
	}
	h.claimed[group] = true
	return s, nil
}

func (h *Host) release(group uint64) {
	h.mu.Lock()
	delete(h.claimed, group)
	h.mu.Unlock()
}

// StartNode starts a node of group opts.Storage.Group (default 1) on this
// host's shared log; opts.Storage.WAL is ignored and opts.Dir defaults to
// the group's directory. Stopping the node hands the group back, so it can
// be started again.
func (h *Host) StartNode(opts Options) (*Node, error) {
	group := opts.Storage.withDefaults().Group
	if opts.Dir == "" {
		opts.Dir = h.groupDir(group)
	}
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	st, err := h.Storage(group)
	if err != nil {
		return nil, err
	}
	return startNode(opts, st)
}

// Stats returns the shared log's statistics: its fsyncs serve every group.
func (h *Host) Stats() wal.Stats { return h.log.Stats() }

// compact drops the log segments no group needs any more, after moving
// the groups that hold more than MaxPinnedBytes of the log back out of the
// way (see Host).
func (h *Host) compact(ctx context.Context) error {
	h.compactMu.Lock()
	defer h.compactMu.Unlock()
	limit := pinLimit(h.log.Segments(), h.opts.MaxPinnedBytes)
	fence, covered := h.fence(limit)
	if len(covered) > 0 {
		moved, err := h.rehome(ctx, covered)
		if err != nil {
			return err
		}
		if moved > 0 {
			fence, _ = h.fence(0)
		}
	}
	if fence == math.MaxUint64 {
		return nil
	}
	if h.opts.WAL.Sync == wal.SyncInterval {
		// The records standing for those about to go (a snapshot record,
		// a re-homed state) may not be on stable storage yet.
		if err := h.log.Sync(ctx); err != nil {
			return err
		}
	}
	return h.log.TruncateFront(ctx, fence)
}

// fence returns the lowest log index any group still needs. Of the groups
// that need a record below limit, it returns those whose snapshot covers
// all their entries, to be re-homed, and asks the others' nodes for a
// snapshot.
func (h *Host) fence(limit uint64) (uint64, []*Storage) {
	// Exclusive: no group is between a log write and its bookkeeping.
	h.appendMu.Lock()
	defer h.appendMu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	fence := uint64(math.MaxUint64)
	var covered []*Storage
	for _, s := range h.groups {
		s.mu.Lock()
		f := s.fenceLocked()
		fence = min(fence, f)
		if f < limit {
			if len(s.spans) == 0 {
				covered = append(covered, s)
			} else {
				s.requestSnapshotLocked()
			}
		}
		s.mu.Unlock()
	}
	return fence, covered
}

// pinLimit returns the lowest log index a group may need without holding
// more than maxPinned bytes of sealed segments: the segment holding a
// group's oldest needed record and every later one but the last (which
// is never dropped) are what the group keeps.
func pinLimit(segs []wal.SegmentInfo, maxPinned int64) uint64 {
	if len(segs) == 0 {
		return 0
	}
	limit := segs[len(segs)-1].First
	var held int64
	for i := len(segs) - 2; i >= 0; i-- {
		held += segs[i].Bytes
		if held > maxPinned {
			break
		}
		limit = segs[i].First
	}
	return limit
}

// rehome writes the recovery state of each group in groups again at the
// log's head, all in one batch, so that their older records are needed no
// more. It returns how many groups it moved.
func (h *Host) rehome(ctx context.Context, groups []*Storage) (int, error) {
	var (
		moved []*Storage
		recs  [][]byte
		hss   []hardState
	)
	defer func() {
		for _, s := range moved {
			s.wmu.Unlock()
		}
	}()
	for _, s := range groups {
		// Never wait for a group's writer: it may be compacting itself
		// (Save holds wmu through its compaction) and waiting here for
		// this compaction. A group writing now moves its fence anyway.
		if !s.wmu.TryLock() {
			continue
		}
		rec, cur, ok := s.rehomeRecord()
		if !ok {
			s.wmu.Unlock()
			continue
		}
		moved = append(moved, s)
		recs = append(recs, rec)
		hss = append(hss, cur)
	}
	if len(recs) == 0 {
		return 0, nil
	}
	h.appendMu.RLock()
	defer h.appendMu.RUnlock()
	first, err := h.log.AppendBatch(ctx, recs)
	if err != nil {
		return 0, err
	}
	for i, s := range moved {
		s.rehomed(first+uint64(i), hss[i])
	}
	h.opts.Logger.Debug("matrixraft: groups re-homed at the log's head", "groups", len(moved), "at", first)
	return len(moved), nil
}

// Close closes the shared log. Nodes still running on it fail their next
// write.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.mu.Unlock()
	return h.log.Close()
}
