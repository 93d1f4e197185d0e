package ssdtier

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// Clock tells the store the time. Expiry is checked against it.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Defaults.
const (
	// DefaultCapacityBytes is [Options.CapacityBytes] when left zero: the
	// original's ssd_capacity.
	DefaultCapacityBytes = 16 << 30
	// DefaultMaxBatch is [Options.MaxBatch] when left zero.
	DefaultMaxBatch = 1024
	// FileName is the bbolt file's name when [Options.Path] is a directory.
	FileName = "ssdtier.bbolt"
)

// Options configure [Open]. The zero value of every field but Path is a
// usable default.
type Options struct {
	// Path is the bbolt file, or a directory to hold it under [FileName].
	// An existing directory, or a path ending in a separator, is a
	// directory; anything else is the file, whose parent directories are
	// created. Required.
	Path string

	// CapacityBytes bounds the bytes the store accounts for: for every
	// block, its encoded length plus its ordered key's length. Writes past
	// it evict the least recently used blocks. The file itself is larger
	// (bbolt page overhead) and never shrinks. Default (0)
	// [DefaultCapacityBytes].
	CapacityBytes int64

	// NoSync turns off fsync on commit: a write returns once it is in the
	// operating system's page cache, and Close flushes. A killed process
	// loses nothing, but a machine that stops abruptly may lose recent
	// writes. Default false: every commit is fsynced before any write in
	// it returns (the original's ssd_block_durability = true).
	NoSync bool

	// WriteBytesPerSec is the write budget, to spare flash endurance:
	// the bytes per second the store aims to write. 0 (the default) means
	// unlimited: every block is admitted, [Stats].BudgetShare is
	// [MaxBudgetShare], and the write rate is still measured.
	//
	// Otherwise admission follows CacheLib's dynamic random admission,
	// keyed by a hash instead of a random draw. The budget keeps a share
	// out of [MaxBudgetShare], starting full, and a block is admitted if
	// the xxhash of its ordered key, high 32 bits, modulo
	// [MaxBudgetShare], is below the share: the same key gets the same
	// answer at the same share, and a block's size does not matter. Time
	// ([Options.Clock]) is cut into one-second windows. When one closes,
	// the share doubles (up to [MaxBudgetShare]) if the bytes written in
	// it were at most WriteBytesPerSec, and is scaled by
	// WriteBytesPerSec/written otherwise, but never below 1. So an
	// overload narrows the share within a window or two, and an idle
	// store is back to full admission within 14 windows. The rate
	// therefore overshoots for about a window when load rises, and in a
	// steady overload it swings between about the target and twice it.
	//
	// Bytes written are every block the writer commits, as its ordered
	// key plus its encoded block: admitted blocks of Put and PutBatch are
	// the only blocks this store writes. Deletes — Delete, DeletePrefix,
	// DeleteShard, evictions, expiry and corruption cleanup, Open's
	// cleanup — write no block and are neither counted nor refused, and
	// bbolt's own overhead (pages, meta, freelist) is not counted, so the
	// device sees somewhat more than the counted bytes.
	//
	// A refused block returns [ErrBudgetExceeded] and is counted in
	// [Stats].BudgetRefused.
	WriteBytesPerSec int64

	// BatchDelay is how long the writer waits for more writes after the
	// first one of a batch before committing it. Default 0: a batch is
	// whatever queued while the previous commit ran, which is already
	// group commit under concurrency without adding latency to a lone
	// writer.
	BatchDelay time.Duration

	// MaxBatch bounds the blocks (and deletes) in one transaction.
	// Default (0) [DefaultMaxBatch].
	MaxBatch int

	// Block selects compression of stored values. Default: none.
	Block blockfmt.Options

	// Logger receives corruption reports and open/close summaries.
	// Default: discard.
	Logger *slog.Logger

	// Clock is the time source for expiry and the write budget. Default:
	// the system clock.
	Clock Clock
}

// Validate reports options that cannot be used, wrapping
// [ErrInvalidOptions]. Zero values are valid defaults.
func (o Options) Validate() error {
	switch {
	case o.Path == "":
		return fmt.Errorf("%w: Path is required", ErrInvalidOptions)
	case o.CapacityBytes < 0:
		return fmt.Errorf("%w: CapacityBytes %d is negative", ErrInvalidOptions, o.CapacityBytes)
	case o.WriteBytesPerSec < 0:
		return fmt.Errorf("%w: WriteBytesPerSec %d is negative", ErrInvalidOptions, o.WriteBytesPerSec)
	case o.BatchDelay < 0:
		return fmt.Errorf("%w: BatchDelay %v is negative", ErrInvalidOptions, o.BatchDelay)
	case o.MaxBatch < 0:
		return fmt.Errorf("%w: MaxBatch %d is negative", ErrInvalidOptions, o.MaxBatch)
	}
	if err := o.Block.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.CapacityBytes == 0 {
		o.CapacityBytes = DefaultCapacityBytes
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	return o
}
