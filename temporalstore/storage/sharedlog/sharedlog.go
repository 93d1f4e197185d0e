package sharedlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/disk"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/internal/valuelog"
)

// Logs opens the shared logs of one member's shards.
type Logs struct {
	opts Options

	mu   sync.Mutex
	open map[string]*Log
}

// New returns the shared logs of the member opts describes.
func New(opts Options) (*Logs, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Logs{opts: opts, open: map[string]*Log{}}, nil
}

// Log returns the open log of the shard named by prefix, or nil.
func (ls *Logs) Log(prefix string) *Log {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.open[prefix]
}

// valueLogSyncInterval bounds how stale the value log's file may be: the
// shared log is the durable copy, so this only keeps dirty pages few.
const valueLogSyncInterval = time.Second

// OpenLog is a storage.OpenLogFunc: it opens the shard's value log in
// o.Dir, brings it up to the shared log and starts following it (or
// takes the log, when nobody has written it yet).
func (ls *Logs) OpenLog(ctx context.Context, o storage.LogOptions) (storage.Log, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prefix := ls.opts.Prefix(o)
	ls.mu.Lock()
	if ls.open[prefix] != nil {
		ls.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", storage.ErrLocked, prefix)
	}
	l := &Log{
		logs: ls, opts: ls.opts, store: ls.opts.Store, prefix: prefix, preferred: ls.opts.Prefer == nil || ls.opts.Prefer(o),
		handBack: ls.opts.Prefer != nil && ls.opts.Prefer(o), opened: time.Now(),
		reqs: make(chan *request, 1024), appended: make(chan struct{}, 1), attached: make(chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{}), silentSince: time.Now(),
	}
	ls.open[prefix] = l
	ls.mu.Unlock()
	if err := l.start(ctx, o); err != nil {
		ls.mu.Lock()
		delete(ls.open, prefix)
		ls.mu.Unlock()
		return nil, err
	}
	return l, nil
}

// Log is one shard's shared log (see the package doc).
type Log struct {
	logs     *Logs
	opts     Options
	store    Store
	prefix   string
	vl       *wal.Log
	reqs     chan *request
	appended chan struct{}
	stop     chan struct{}
	done     chan struct{}

	// The cursor, moved by the loop goroutine only.
	seg  uint64 // first index of the segment read or written
	off  int64  // end of the frames applied from it
	size int64  // its size when last looked at
	// silentSince is when the segment last grew (or this log started).
	silentSince time.Time
	// released says the writer let go: take over at once, if preferred.
	released  bool
	preferred bool
	// handBack says Options.Prefer names this member for the shard: once
	// up for handBackAfter and caught up, it takes the shard from a writer
	// that is not preferred. opened is when this log was opened.
	handBack bool
	opened   time.Time
	// behindFront says the value log is behind the oldest segment: the
	// snapshot is being installed, and following waits for it.
	behindFront bool

	mu sync.Mutex // guards the fields below
	// writing says this member is the log's writer, in epoch;
	// appendedAt is when its last append to the store returned.
	writing    bool
	appendedAt time.Time
	epoch      uint64
	owner      string // the writer's Member name, as its fence says
	// owned are the value-log records appended for Append calls that
	// have not handed them to the shard yet.
	owned    valuelog.Owned
	failed   error
	closed   bool
	images   storage.ShardImages
	attached chan struct{}
	stats    Stats
	// segs are the first indexes of the segments from the front to the
	// one read or written, as far as this member has seen them.
	segs       []uint64
	installing bool
	compacting bool
}

// Stats are a shared log's counters since it was opened.
type Stats struct {
	// StoreAppends counts the appends to the store; StoreAppendTime their
	// times.
	StoreAppends    uint64
	StoreAppendTime storage.Histogram
	// Takeovers counts the times this member became the writer.
	Takeovers uint64
	// Snapshots counts the snapshots written (writer) or installed.
	Snapshots uint64
	// Behind is how many bytes of the current segment this member has yet
	// to apply, when it last looked.
	Behind int64
}

// A request to the loop: an append (recs), a read barrier or a
// compaction (first, the value log's new front).
type request struct {
	op    byte
	recs  [][]byte
	first uint64
	err   error
	done  chan struct{}
}

const (
	opAppend byte = iota
	opBarrier
	opCompact
)

var (
	_ storage.Log        = (*Log)(nil)
	_ storage.Replicated = (*Log)(nil)
)

func (l *Log) start(ctx context.Context, o storage.LogOptions) error {
	vl, err := wal.Open(o.Dir, wal.Options{SegmentSize: o.SegmentBytes, Sync: wal.SyncInterval, SyncInterval: valueLogSyncInterval, Compression: wal.CompressionFast})
	if err != nil {
		return disk.WALError(err)
	}
	l.vl = vl
	if err := l.locate(ctx); err != nil {
		vl.Close()
		return err
	}
	// Catch up with what is there before the shard loads, so it starts
	// from the log as it is.
	for !l.isBehindFront() {
		progressed, err := l.follow(ctx)
		if err != nil {
			vl.Close()
			return err
		}
		if !progressed {
			break
		}
	}
	if !l.opts.ReadOnly && !l.isBehindFront() {
		// Take the log at once when nobody has written it, its writer
		// let go of it, or its writer was this member before a restart.
		_, err := l.store.Size(ctx, segmentName(l.prefix, l.seg))
		empty := errors.Is(err, ErrNotExist) && l.seg == 1
		if (empty || l.released) && l.preferred || l.Writer() == l.opts.Member {
			l.takeOver(ctx)
		}
	}
	l.opts.Logger.Info("sharedlog: opened", "log", l.prefix, "writer", l.Writer(), "segment", l.seg, "value_log_last", vl.LastIndex())
	go l.loop()
	return nil
}

// Writer returns the writer's Member name as the log's last fence says,
// "" before any.
func (l *Log) Writer() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.owner
}

// Writing reports whether this member is the log's writer.
func (l *Log) Writing() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writing
}

// Attach implements storage.Replicated.
func (l *Log) Attach(s storage.ShardImages) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.images == nil {
		close(l.attached)
	}
	l.images = s
}

// Appended implements storage.Replicated.
func (l *Log) Appended() <-chan struct{} { return l.appended }

// Foreign implements storage.Replicated.
func (l *Log) Foreign(index uint64) bool {
	if index > l.vl.LastIndex() {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.owned.Foreign(index)
}

// Append appends rec once the store has it.
func (l *Log) Append(ctx context.Context, rec []byte) (uint64, error) {
	return l.append(ctx, [][]byte{rec})
}

// AppendBatch appends recs in one frame.
func (l *Log) AppendBatch(ctx context.Context, recs [][]byte) (uint64, error) {
	return l.append(ctx, recs)
}

// AppendGroup is AppendBatch: a frame is applied whole or not at all.
func (l *Log) AppendGroup(ctx context.Context, recs [][]byte) (uint64, error) {
	if valuelog.GroupTooLarge(recs, l.MaxGroupSize()) {
		return 0, storage.ErrGroupTooLarge
	}
	return l.append(ctx, recs)
}

func (l *Log) append(ctx context.Context, recs [][]byte) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var size int
	for _, r := range recs {
		if len(r) > l.MaxRecordSize() {
			return 0, storage.ErrRecordTooLarge
		}
		size += len(r)
	}
	if size > l.opts.MaxBatchBytes-recordsSize(nil)-len(recs)*10 {
		return 0, storage.ErrGroupTooLarge
	}
	l.mu.Lock()
	if err := l.usableLocked(); err != nil {
		l.mu.Unlock()
		return 0, err
	}
	if len(recs) == 0 {
		defer l.mu.Unlock()
		return l.vl.LastIndex() + 1, nil
	}
	if !l.writing {
		defer l.mu.Unlock()
		return 0, l.notWriterLocked()
	}
	l.mu.Unlock()
	r := &request{op: opAppend, recs: recs, done: make(chan struct{})}
	select {
	case l.reqs <- r:
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-l.stop:
		return 0, storage.ErrClosed
	}
	<-r.done
	return r.first, r.err
}

func (l *Log) notWriterLocked() error {
	return fmt.Errorf("%w: %s is written by %q", storage.ErrNotLeader, l.prefix, l.owner)
}

func (l *Log) usableLocked() error {
	switch {
	case l.closed:
		return storage.ErrClosed
	case l.failed != nil:
		return l.failed
	}
	return nil
}

// ReadBarrier returns once this member is sure it was the writer at some
// point after the call, with every record appended before then in its
// value log: the segment is as long as this writer made it, so no
// follower has fenced it. A follower returns storage.ErrNotLeader.
func (l *Log) ReadBarrier(ctx context.Context) error {
	r := &request{op: opBarrier, done: make(chan struct{})}
	l.mu.Lock()
	writing := l.writing
	err := l.usableLocked()
	if err == nil && !writing {
		err = l.notWriterLocked()
	}
	l.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case l.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-l.stop:
		return storage.ErrClosed
	}
	<-r.done
	return r.err
}

// LeaseBarrier is ReadBarrier without the store round when the writer
// appended within half a lease: no follower takes the log over before
// a full lease of silence after it saw that append, so none can have yet
// (while clocks run at rates within half a lease of each other).
func (l *Log) LeaseBarrier(ctx context.Context) error {
	l.mu.Lock()
	ok := l.writing && l.failed == nil && !l.closed && time.Since(l.appendedAt) < l.opts.LeaseTimeout/2
	l.mu.Unlock()
	if ok {
		return nil
	}
	return l.ReadBarrier(ctx)
}

// Read returns the record at index.
func (l *Log) Read(index uint64) ([]byte, error) {
	rec, err := l.vl.Read(index)
	return rec, disk.WALError(err)
}

// Iterator returns an iterator over the value log from index from.
func (l *Log) Iterator(from uint64) storage.Iterator {
	return &iterator{it: l.vl.Iterator(from)}
}

// FirstIndex is the value log's first index.
func (l *Log) FirstIndex() uint64 { return l.vl.FirstIndex() }

// LastIndex is the value log's last index.
func (l *Log) LastIndex() uint64 { return l.vl.LastIndex() }

// Segments describes the value log's segments.
func (l *Log) Segments() []storage.Segment { return valuelog.Segments(l.vl) }

// TruncateFront drops value-log segments before index; the writer then
// reclaims the shared segments no member needs (see compact).
func (l *Log) TruncateFront(ctx context.Context, index uint64) error {
	if err := l.vl.TruncateFront(ctx, index); err != nil {
		return disk.WALError(err)
	}
	select {
	case l.reqs <- &request{op: opCompact, first: index, done: make(chan struct{})}:
	default:
	}
	return nil
}

// Sync makes the value log durable up to its last record; the shared log
// is durable already.
func (l *Log) Sync(ctx context.Context) error { return disk.WALError(l.vl.Sync(ctx)) }

// MaxRecordSize is the value log's.
func (l *Log) MaxRecordSize() int { return min(l.vl.MaxRecordSize(), l.opts.MaxBatchBytes/2) }

// MaxGroupSize bounds a group by one store append.
func (l *Log) MaxGroupSize() int64 {
	return min(l.vl.MaxGroupSize(), int64(l.opts.MaxBatchBytes/2))
}

// Stats returns the value log's counters, the store appends as fsyncs.
func (l *Log) Stats() storage.LogStats {
	out := valuelog.Stats(l.vl)
	l.mu.Lock()
	st := l.stats
	l.mu.Unlock()
	out.Fsyncs, out.FsyncLatency, out.RecordsPerFsync = st.StoreAppends, st.StoreAppendTime, 0
	if st.StoreAppends > 0 {
		out.RecordsPerFsync = float64(out.Records) / float64(st.StoreAppends)
	}
	return out
}

// SharedStats returns the shared log's own counters.
func (l *Log) SharedStats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// Close stops following; a writer appends a release frame first, so a
// follower takes over without waiting out the lease.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return storage.ErrClosed
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	err := l.vl.Close()
	l.logs.mu.Lock()
	delete(l.logs.open, l.prefix)
	l.logs.mu.Unlock()
	return disk.WALError(err)
}

type iterator struct{ it *wal.Iterator }

func (it *iterator) Next() bool    { return it.it.Next() }
func (it *iterator) Index() uint64 { return it.it.Index() }
func (it *iterator) Value() []byte { return it.it.Value() }
func (it *iterator) Err() error    { return disk.WALError(it.it.Err()) }
func (it *iterator) Close() error  { return disk.WALError(it.it.Close()) }
