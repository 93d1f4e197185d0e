package sharedlog

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strconv"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// Errors of this package, matched with errors.Is.
var (
	// ErrInvalidOptions is returned by New for unusable Options.
	ErrInvalidOptions = errors.New("sharedlog: invalid options")
	// ErrConflict is returned by a Store's conditional append or cut whose
	// condition did not hold: another writer got there first.
	ErrConflict = errors.New("sharedlog: the append blob changed")
	// ErrNotExist is returned by a Store for a name it does not hold.
	ErrNotExist = errors.New("sharedlog: no such blob or object")
	// ErrUnsupported is returned by a Store for an operation it cannot do.
	ErrUnsupported = errors.New("sharedlog: not supported by this store")
	// ErrCorrupt is returned for bytes on the store this package did not
	// write whole.
	ErrCorrupt = errors.New("sharedlog: corrupt shared log")
)

// Defaults of Options.
const (
	// DefaultLeaseTimeout is how long the log may be silent before a
	// follower takes the writer's place.
	DefaultLeaseTimeout = 2 * time.Second
	// DefaultPollInterval is how often a follower looks for new frames.
	DefaultPollInterval = time.Millisecond
	// DefaultSegmentBytes is the size past which the writer starts a new
	// segment.
	DefaultSegmentBytes = 64 << 20
	// DefaultMaxBatchBytes bounds the frames one store append carries.
	DefaultMaxBatchBytes = 8 << 20
)

// Options configures the shared logs of one member.
type Options struct {
	// Store is the shared medium. Required.
	Store Store
	// Member names this member in the fences it writes, for the others to
	// route writes to it (an address, say). Default: a random name.
	Member string
	// ReadOnly members only follow: they never take the writer's place.
	ReadOnly bool
	// LeaseTimeout is how long the log may be silent before a follower
	// takes it over; the writer appends a lease frame every quarter of it
	// when idle. Default: DefaultLeaseTimeout.
	LeaseTimeout time.Duration
	// PollInterval is how often a follower looks for new frames.
	// Default: DefaultPollInterval.
	PollInterval time.Duration
	// SegmentBytes is the size past which the writer seals a segment and
	// starts the next. Default: DefaultSegmentBytes.
	SegmentBytes int64
	// MaxBatchBytes bounds the frames of one store append (appends waiting
	// meanwhile are batched into it). Default: DefaultMaxBatchBytes.
	MaxBatchBytes int
	// Prefer says this member should write the shard: it takes a log
	// nobody has written, or whose writer let go of it, at once; the
	// others wait out a lease first, which gives the preferred member
	// the time to. Once open for two leases and caught up, it takes the
	// shard back from a writer that is not preferred (after a failover)
	// by fencing it. Default: nil, every member takes an unwritten or
	// released log at once, and none takes one back.
	Prefer func(o storage.LogOptions) bool
	// Prefix names a shard's directory on the store. Default: its
	// namespace, table and number, slash-separated.
	Prefix func(o storage.LogOptions) string
	// Logger receives role changes and repairs. Default: discards them.
	Logger *slog.Logger
}

// DefaultPrefix is the default Options.Prefix: namespace, table and shard
// number, path-escaped, an empty name as "%" (which escaping never makes).
func DefaultPrefix(o storage.LogOptions) string {
	esc := func(s string) string {
		if s == "" {
			return "%"
		}
		return url.PathEscape(s)
	}
	return esc(o.Namespace) + "/" + esc(o.Table) + "/" + strconv.Itoa(o.Shard)
}

func (o Options) withDefaults() Options {
	if o.Member == "" {
		o.Member = "member-" + strconv.FormatUint(rand.Uint64(), 36)
	}
	if o.LeaseTimeout == 0 {
		o.LeaseTimeout = DefaultLeaseTimeout
	}
	if o.PollInterval == 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = DefaultSegmentBytes
	}
	if o.MaxBatchBytes == 0 {
		o.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if o.Prefix == nil {
		o.Prefix = DefaultPrefix
	}

	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Store == nil:
		return fmt.Errorf("%w: Store is required", ErrInvalidOptions)
	case o.LeaseTimeout < 4*o.PollInterval:
		return fmt.Errorf("%w: LeaseTimeout %v is under four PollIntervals (%v)", ErrInvalidOptions, o.LeaseTimeout, o.PollInterval)
	case o.SegmentBytes < 4096:
		return fmt.Errorf("%w: SegmentBytes %d is under 4096", ErrInvalidOptions, o.SegmentBytes)
	case o.MaxBatchBytes < 4096:
		return fmt.Errorf("%w: MaxBatchBytes %d is under 4096", ErrInvalidOptions, o.MaxBatchBytes)
	}
	return nil
}
