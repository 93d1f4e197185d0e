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

// HostOptions configures a Host.
type HostOptions struct {
	// WAL configures the shared log under <dir>/log. The default is a
	// durable log (wal.SyncAlways) with the wal package's defaults.
	WAL wal.Options
	// MaxRecordBytes bounds the entries of one group written in one log
	// record. Default: 4 MiB.
	MaxRecordBytes int
	// Logger receives lifecycle events. Default: discards them.
	Logger *slog.Logger
}

func (o HostOptions) withDefaults() HostOptions {
	if o.MaxRecordBytes == 0 {
		o.MaxRecordBytes = 4 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Validate reports whether the options (after defaults) are usable.
func (o HostOptions) Validate() error {
	if o.MaxRecordBytes < 0 {
		return fmt.Errorf("%w: negative MaxRecordBytes", ErrInvalidOptions)
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
// <dir>/groups/<id>/snap. Compaction is per group with one shared fence: a
// log segment is dropped only once no group needs any record in it — every
// group's durable snapshot covers its entries there and its newest record
// is later. A group that stops taking snapshots therefore holds the log's
// front back until it takes one; that includes a group that is closed but
// not deleted.
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

// compact drops the log segments no group needs any more.
func (h *Host) compact(ctx context.Context) error {
	h.compactMu.Lock()
	defer h.compactMu.Unlock()
	h.appendMu.Lock()
	h.mu.Lock()
	fence := uint64(math.MaxUint64)
	for _, s := range h.groups {
		s.mu.Lock()
		fence = min(fence, s.fenceLocked())
		s.mu.Unlock()
	}
	h.mu.Unlock()
	h.appendMu.Unlock()
	if fence == math.MaxUint64 {
		return nil
	}
	return h.log.TruncateFront(ctx, fence)
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
