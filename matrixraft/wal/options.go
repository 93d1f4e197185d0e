package wal

import (
	"fmt"
	"io"
	"log/slog"
	"time"
)

// SyncPolicy says when an append is acknowledged relative to fdatasync.
type SyncPolicy int

const (
	// SyncAlways acknowledges an append after the batch holding it has been
	// written and fdatasynced (durable commit). It is the default.
	SyncAlways SyncPolicy = iota
	// SyncInterval acknowledges an append once it has been written to the
	// operating system; a background goroutine fdatasyncs every
	// Options.SyncInterval (async commit). A machine crash can lose up to one
	// interval of acknowledged records; a process crash loses nothing.
	SyncInterval
	// SyncNever never calls fdatasync. For tests only.
	SyncNever
)

// String returns the policy's name.
func (p SyncPolicy) String() string {
	switch p {
	case SyncAlways:
		return "always"
	case SyncInterval:
		return "interval"
	case SyncNever:
		return "never"
	}
	return fmt.Sprintf("SyncPolicy(%d)", int(p))
}

// Compression says whether records may be stored compressed.
type Compression int

const (
	// CompressionDefault stores a record zstd-compressed when it is at least
	// Options.CompressMinSize bytes long and compression makes it smaller.
	CompressionDefault Compression = iota
	// CompressionNone stores every record as given.
	CompressionNone
	// CompressionFast stores a record S2-compressed
	// (github.com/klauspost/compress/s2) under the same conditions as
	// CompressionDefault: several times faster than zstd at its fastest,
	// for somewhat larger records. For logs on a request path, where
	// compressing costs more than the bytes it saves.
	CompressionFast
)

// Defaults applied by Open to zero-valued Options fields.
const (
	DefaultSegmentSize     = 64 << 20
	DefaultMaxRecordSize   = 16 << 20
	DefaultSyncInterval    = 10 * time.Millisecond
	DefaultCompressMinSize = 256
	DefaultFirstIndex      = 1
)

// maxSegmentSize keeps record offsets within a uint32.
const maxSegmentSize = 1<<32 - 1

// Options configures a Log. The zero value is a durable log with the defaults
// below.
type Options struct {
	// SegmentSize is the size each segment file is preallocated to; a segment
	// is sealed and a new one started when the next frame would not fit.
	// The default is 64 MiB; at most 4 GiB - 1.
	SegmentSize int64
	// MaxRecordSize is the largest record Append accepts, before compression.
	// The default is 16 MiB. It must leave room for the segment header and a
	// frame envelope within SegmentSize.
	MaxRecordSize int
	// Sync is the sync policy. The default is SyncAlways.
	Sync SyncPolicy
	// SyncInterval is how often SyncInterval syncs. The default is 10 ms.
	SyncInterval time.Duration
	// Compression says whether and how records may be stored compressed.
	// The default, CompressionDefault, compresses with zstd when it saves
	// space.
	Compression Compression
	// CompressMinSize is the smallest record worth trying to compress. The
	// default is 256 bytes; smaller records rarely shrink enough to pay for
	// the attempt.
	CompressMinSize int
	// FirstIndex is the index of the first record of a new, empty log. It is
	// ignored when the directory already holds a log. The default is 1.
	FirstIndex uint64
	// NoPreallocate skips preallocating segment files. Preallocation is on by
	// default so that appends do not extend the file.
	NoPreallocate bool
	// NoDirectIO makes SyncAlways write through the page cache. By default
	// SyncAlways writes the active segment with O_DIRECT (falling back to
	// buffered writes where the filesystem refuses it), which measured
	// lower fdatasync latency, above all at the tail.
	NoDirectIO bool
	// RepairTail makes Open truncate the last segment at its first damaged
	// frame even when that frame does not look like a torn write (for
	// example after a power failure that reordered writes). Records after
	// the damage are lost. The default, false, refuses to open instead.
	RepairTail bool
	// Logger receives recovery and truncation events. The default discards
	// them.
	Logger *slog.Logger
}

// withDefaults returns a copy of o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.SegmentSize == 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.MaxRecordSize == 0 {
		o.MaxRecordSize = DefaultMaxRecordSize
		if limit := int(o.SegmentSize) - segmentHeaderSize - frameHeaderSize; limit > 0 && o.MaxRecordSize > limit {
			o.MaxRecordSize = limit
		}
	}
	if o.SyncInterval == 0 {
		o.SyncInterval = DefaultSyncInterval
	}
	if o.CompressMinSize == 0 {
		o.CompressMinSize = DefaultCompressMinSize
	}
	if o.FirstIndex == 0 {
		o.FirstIndex = DefaultFirstIndex
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Validate reports whether the options (after defaults) are usable.
func (o Options) Validate() error {
	switch {
	case o.SegmentSize < segmentHeaderSize+frameHeaderSize+1 || o.SegmentSize > maxSegmentSize:
		return fmt.Errorf("%w: SegmentSize %d out of range [%d, %d]", ErrInvalidOptions, o.SegmentSize, segmentHeaderSize+frameHeaderSize+1, int64(maxSegmentSize))
	case o.MaxRecordSize < 1:
		return fmt.Errorf("%w: MaxRecordSize %d must be positive", ErrInvalidOptions, o.MaxRecordSize)
	case int64(o.MaxRecordSize)+segmentHeaderSize+frameHeaderSize > o.SegmentSize:
		return fmt.Errorf("%w: MaxRecordSize %d does not fit in SegmentSize %d", ErrInvalidOptions, o.MaxRecordSize, o.SegmentSize)
	case o.Sync < SyncAlways || o.Sync > SyncNever:
		return fmt.Errorf("%w: unknown sync policy %d", ErrInvalidOptions, int(o.Sync))
	case o.SyncInterval < 0:
		return fmt.Errorf("%w: negative SyncInterval", ErrInvalidOptions)
	case o.Compression < CompressionDefault || o.Compression > CompressionFast:
		return fmt.Errorf("%w: unknown compression %d", ErrInvalidOptions, int(o.Compression))
	case o.CompressMinSize < 0:
		return fmt.Errorf("%w: negative CompressMinSize", ErrInvalidOptions)
	}
	return nil
}
