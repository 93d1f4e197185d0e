package residenttier

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

// DefaultCapacityBytes is [Options.CapacityBytes] when left zero: the
// original's pmem_capacity.
const DefaultCapacityBytes = 512 << 20

// Options configure [Open]. The zero value of every field but Dir is a
// usable default.
type Options struct {
	// Dir holds the block files (see the package documentation for the
	// layout). It is created if missing. Required.
	Dir string

	// CapacityBytes bounds the bytes the store accounts for: the sum of
	// its block files' lengths. Writes past it evict the least recently
	// used blocks. Directory entries and file system block rounding are
	// not counted. Default (0) [DefaultCapacityBytes].
	CapacityBytes int64

	// Sync fsyncs each block file before renaming it into place and then
	// its directory (2 fsyncs per write), and the directory after every
	// delete, so a write or delete that returned survives the machine
	// stopping abruptly. Default false (the original's
	// pmem_block_durability = false): write + rename only, so a killed
	// process loses nothing, but a machine crash may lose recent writes
	// or bring back recently deleted blocks. Either way a block is
	// whole or absent, never torn.
	Sync bool

	// Mmap makes reads map the block file (golang.org/x/sys/unix.Mmap)
	// instead of reading it: [Store.View] then hands its callback the
	// value in the mapped pages without copying it. [Store.Get] always
	// returns memory of its own either way. Mapping costs two system
	// calls and a page fault per read, so for small blocks (a few KiB)
	// reading is faster; mapping pays off when the copy is what costs.
	// Default false: read(2).
	Mmap bool

	// Block selects compression of stored values. Default: none. A
	// compressed value is decompressed into fresh memory on every read,
	// so [Store.View] is zero-copy only for uncompressed values.
	Block blockfmt.Options

	// OnEvict, if set, receives every block evicted to stay within
	// CapacityBytes after a write, so the cache can demote it to a lower
	// tier. It is called after the block's file is removed, on the
	// goroutine of the Put that caused the eviction, with no lock held
	// (it may call the store), and that Put returns only after it. Blocks
	// already expired, or that fail to decode, are removed without it,
	// and so are blocks evicted at Open. Default: none (evicting then
	// reads nothing).
	OnEvict func(blockfmt.Block)

	// Logger receives corruption reports and open summaries. Default:
	// discard.
	Logger *slog.Logger

	// Clock is the time source for expiry. Default: the system clock.
	Clock Clock
}

// Validate reports options that cannot be used, wrapping
// [ErrInvalidOptions]. Zero values are valid defaults.
func (o Options) Validate() error {
	switch {
	case o.Dir == "":
		return fmt.Errorf("%w: Dir is required", ErrInvalidOptions)
	case o.CapacityBytes < 0:
		return fmt.Errorf("%w: CapacityBytes %d is negative", ErrInvalidOptions, o.CapacityBytes)
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
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	return o
}
