package storage

import (
	"context"
	"errors"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/api"
)

// Errors a Log returns, matched with errors.Is (an implementation may wrap
// its own error in one of them).
var (
	// ErrClosed is returned by every call on a closed Log.
	ErrClosed = errors.New("storage: log closed")
	// ErrRecordTooLarge is returned by an append of a record over
	// MaxRecordSize; nothing is appended.
	ErrRecordTooLarge = errors.New("storage: record too large")
	// ErrGroupTooLarge is returned by an AppendGroup over MaxGroupSize;
	// nothing is appended.
	ErrGroupTooLarge = errors.New("storage: group too large")
	// ErrCompacted is returned by Read of an index below FirstIndex.
	ErrCompacted = errors.New("storage: index compacted")
	// ErrNotFound is returned by Read of an index past LastIndex.
	ErrNotFound = errors.New("storage: index beyond the last record")
	// ErrInvalidIndex is returned by TruncateFront past LastIndex()+1.
	ErrInvalidIndex = errors.New("storage: invalid index")
	// ErrLocked is returned by an OpenLogFunc for a log that is open
	// already.
	ErrLocked = errors.New("storage: log is open elsewhere")
	// ErrNotLeader is returned by an append to a replicated log on a
	// replica that does not lead its group: nothing is appended, and the
	// log stays usable (see Replicated). It is the engine's own error, so
	// that it reaches the surfaces as it is.
	ErrNotLeader = api.ErrNotLeader
	// ErrUnknownOutcome is returned by an append to a replicated log whose
	// leadership changed before the record was committed: it may yet be
	// committed (and then applied like a replicated record) or not. The
	// log stays usable.
	ErrUnknownOutcome = api.ErrUnknownOutcome
)

// Replicated is an optional interface of a Log whose records are also
// appended by replication: a replica of a shard's group appends what its
// leader committed, and a leader the records of an earlier leader. Every
// record such a log holds is committed. The shard applies, in index
// order, its own appends as they return and the others as it finds them.
type Replicated interface {
	// Appended receives a value after records were appended by
	// replication; it is buffered, so one value may stand for many.
	Appended() <-chan struct{}
	// Foreign reports whether the record at index, one past every record
	// the shard applied, is there and was not appended through this log's
	// Append calls that are yet to hand it to the shard: a shard applies a
	// foreign record itself, reading it from the log.
	Foreign(index uint64) bool
	// Attach gives the log its shard's state, so that a replica too far
	// behind to catch up from the replication log is sent the shard's
	// image and the records after it. The shard attaches once it is
	// loaded.
	Attach(s ShardImages)
}

// Recoverer is an optional interface of a Log that takes appends again,
// without a restart, after a failed write or sync made it refuse them (see
// the package doc).
type Recoverer interface {
	// Recover brings the log back from the state a failed write or sync
	// left it in, keeping the records up to last, the last its shard
	// acknowledged: the records after it were appended by calls that
	// failed, and are cut durably, so that none turns up later. Records
	// the medium no longer holds intact are cut as well (only ones not yet
	// synced, of a log that is not Durable): LastIndex then falls below
	// last. It returns nil once appends may go on, having checked that the
	// medium takes writes again (a file log: that a segment fits); an
	// error while it does not, and may then be called again. Reads go on
	// meanwhile; the caller appends nothing until it returns nil.
	Recover(ctx context.Context, last uint64) error
}

// SyncHook is an optional interface of a Log whose syncs can first make
// durable what its records name elsewhere (see largelog).
type SyncHook interface {
	// SetBeforeSync has f called before every sync that makes appended
	// records durable, whether Sync, an interval's, a group commit's or
	// Close's; an error from f fails that sync as a failed write would.
	// f may run beside appends; nil removes it.
	SetBeforeSync(f func() error)
}

// ShardImages is a shard's state as a replicated log sends and installs
// it: a checkpoint image, which the log's records complete.
type ShardImages interface {
	// CaptureImage writes a checkpoint of the shard and returns it; the
	// log holds every record the image needs.
	CaptureImage(ctx context.Context) ([]byte, error)
	// InstallImage replaces the shard's state with image and the log's
	// records: with the shard held, reset replaces the log's records with
	// those sent beside the image, then the shard reloads from them.
	InstallImage(image []byte, reset func() error) error
}

// Log is one shard's ordered record log (see the package doc for the
// contract every method shares).
type Log interface {
	// Append appends rec under index LastIndex()+1 and returns that index.
	// ctx is checked before the record is queued; once queued the call
	// waits for the write. rec is not retained.
	Append(ctx context.Context, rec []byte) (uint64, error)
	// AppendBatch appends recs in order under consecutive indexes and
	// returns the first. A crash may keep a prefix of an unacknowledged
	// batch. An empty batch appends nothing and returns the next index.
	AppendBatch(ctx context.Context, recs [][]byte) (uint64, error)
	// AppendGroup is AppendBatch made crash-atomic: after a crash all of
	// the group's records are in the log or none is. A group over
	// MaxGroupSize returns ErrGroupTooLarge.
	AppendGroup(ctx context.Context, recs [][]byte) (uint64, error)
	// Read returns the record at index, in a slice the caller owns. It
	// returns ErrCompacted below FirstIndex and ErrNotFound past LastIndex.
	Read(index uint64) ([]byte, error)
	// Iterator returns an iterator positioned before the record at from.
	// It sees records appended after it was made.
	Iterator(from uint64) Iterator
	// FirstIndex is the index of the first record held: in an empty log,
	// the index the next record gets.
	FirstIndex() uint64
	// LastIndex is the index of the last record readable.
	LastIndex() uint64
	// Segments describes the log's units of reclamation, oldest first:
	// TruncateFront removes whole segments. A log that reclaims record by
	// record reports each record as a segment; one that never reclaims,
	// one segment.
	Segments() []Segment
	// TruncateFront discards the records before index, whole segments at a
	// time (so FirstIndex may stay below index); the last segment is kept.
	// index may be at most LastIndex()+1 (ErrInvalidIndex otherwise).
	TruncateFront(ctx context.Context, index uint64) error
	// Sync makes every record appended so far durable.
	Sync(ctx context.Context) error
	// MaxRecordSize is the largest record an append takes.
	MaxRecordSize() int
	// MaxGroupSize bounds an AppendGroup: its records' bytes plus
	// FrameOverhead each.
	MaxGroupSize() int64
	// Stats returns the log's counters since it was opened.
	Stats() LogStats
	// Close syncs what was appended and releases the log. Calls after it
	// return ErrClosed.
	Close() error
}

// FrameOverhead is what a record costs in a log besides its own bytes, as
// MaxGroupSize counts it.
const FrameOverhead = 9

// Iterator reads a log's records in index order.
type Iterator interface {
	// Next advances to the next record. It returns false at the end of the
	// log or on an error; Err tells which.
	Next() bool
	// Index is the current record's index.
	Index() uint64
	// Value is the current record, valid until the next call to Next.
	Value() []byte
	// Err is the error that stopped the iteration, if any.
	Err() error
	// Close releases the iterator.
	Close() error
}

// Segment describes one unit of a log's reclamation.
type Segment struct {
	// First is the index of the segment's first record.
	First uint64
	// Bytes is what the segment's records take (written, not reserved).
	Bytes int64
}

// LogStats are a log's counters since it was opened.
type LogStats struct {
	// Records and Bytes count the records appended and the bytes written
	// for them (envelopes included).
	Records, Bytes uint64
	// Fsyncs counts the syncs to stable storage; FsyncLatency their times.
	Fsyncs       uint64
	FsyncLatency Histogram
	// RecordsPerFsync is Records over Fsyncs, 0 before the first.
	RecordsPerFsync float64
	// Segments is the number of segments held.
	Segments int
	// DiskBytes is the space the log takes on its medium, reserved space
	// included.
	DiskBytes int64
}

// LogOptions say which shard's log to open and how.
type LogOptions struct {
	// Dir is the shard's directory: a log may keep its files there.
	Dir string
	// Namespace, Table and Shard name the shard.
	Namespace, Table string
	Shard            int
	// Durable acknowledges an append once it is on stable storage;
	// otherwise once written, with a sync every SyncInterval.
	Durable      bool
	SyncInterval time.Duration
	// SegmentBytes is the size of the log's units of reclamation, a hint.
	SegmentBytes int64
}

// OpenLogFunc opens (creating if needed) the log of one shard. It returns
// ErrLocked for a log that is open already.
type OpenLogFunc func(ctx context.Context, o LogOptions) (Log, error)

// HistogramBuckets is the number of buckets of a Histogram.
const HistogramBuckets = 22

// Histogram counts durations in buckets whose bounds double from one
// microsecond; the last bucket also holds everything longer.
type Histogram struct {
	// Counts[i] counts the durations in (BucketBound(i-1), BucketBound(i)].
	Counts [HistogramBuckets]uint64
	// Sum is the total of every duration counted.
	Sum time.Duration
}

// BucketBound is the inclusive upper bound of bucket i.
func BucketBound(i int) time.Duration { return time.Duration(1<<i) * time.Microsecond }

// Total is the number of durations counted.
func (h Histogram) Total() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Merge adds o's counts to h's.
func (h *Histogram) Merge(o Histogram) {
	for i, c := range o.Counts {
		h.Counts[i] += c
	}
	h.Sum += o.Sum
}

// Quantile is the upper bound of the bucket holding the q-th quantile
// (0 < q <= 1), or 0 when h is empty.
func (h Histogram) Quantile(q float64) time.Duration {
	total := h.Total()
	if total == 0 {
		return 0
	}
	rank := max(uint64(q*float64(total)+0.5), 1)
	var seen uint64
	for i, c := range h.Counts {
		if seen += c; seen >= rank {
			return BucketBound(i)
		}
	}
	return BucketBound(HistogramBuckets - 1)
}
