package ssdtier

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
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

	// WriteBytesPerSec is the write budget: 0 (the default) means
	// unlimited. Otherwise a token bucket holding one second of budget is
	// refilled at this rate, a block costs its encoded size, and a block
	// is admitted only if the bucket holds its cost and a random draw
	// falls below the bucket's fill level — the whole of it when the
	// bucket is full, less as it drains (CacheLib's dynamic random
	// admission). A refused block returns [ErrBudgetExceeded] and is
	// counted in [Stats].BudgetRefused. Blocks larger than one second of
	// budget are always refused.
	WriteBytesPerSec int64

	// Rand is the random source of budget admission. Default: a PCG
	// seeded from the clock. Tests pass a fixed seed.
	Rand rand.Source

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
	if o.Rand == nil {
		o.Rand = rand.NewPCG(uint64(o.Clock.Now().UnixNano()), 0x55d)
	}
	return o
}
