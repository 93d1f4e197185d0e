package ferricstore

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"
)

// Option defaults.
const (
	// DefaultShards is Options.Shards' default.
	DefaultShards = 4
	// DefaultSyncInterval is Options.SyncInterval's default.
	DefaultSyncInterval = 10 * time.Millisecond
	// DefaultSnapshotEvery is Options.SnapshotEvery's default.
	DefaultSnapshotEvery = 100_000
)

// Options configure a Store.
type Options struct {
	// Dir holds one log per shard. Required.
	Dir string
	// Shards is the number of shards, each with its own log and writer.
	// It must stay the same for a directory. Default: DefaultShards.
	Shards int
	// Async acknowledges a write once it is written to the operating
	// system and syncs every SyncInterval: a machine crash can lose one
	// interval, a killed process nothing. Default: false, a write is
	// acknowledged once fsynced.
	Async bool
	// SyncInterval is Async's sync period. Default: DefaultSyncInterval.
	SyncInterval time.Duration
	// Now is the clock (IDs, delivery and idle times). Default: time.Now.
	Now func() time.Time
	// SnapshotEvery is how many log records a shard appends between
	// snapshots of its state, after which the log before the snapshot
	// is let go. Default: DefaultSnapshotEvery.
	SnapshotEvery int
	// Logger receives recovery events. Default: discarded.
	Logger *slog.Logger
}

// ErrInvalidOptions is returned by Open for options it cannot take.
var ErrInvalidOptions = errors.New("ferricstore: invalid options")

// Store is an open ferricstore: its streams, sharded by key as Redis
// Cluster shards (CRC16 of the key's {hash tag}), each shard a durable log
// replayed on Open. It is safe for concurrent use.
type Store struct {
	closed  atomic.Bool
	opts    Options
	shards  []*shard
	streams Streams
}

// Open opens the store in opts.Dir, creating it if need be, and replays
// its logs.
func Open(opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, fmt.Errorf("%w: Dir is required", ErrInvalidOptions)
	}
	if opts.Shards < 0 || opts.SyncInterval < 0 || opts.SnapshotEvery < 0 {
		return nil, fmt.Errorf("%w: negative Shards, SyncInterval or SnapshotEvery", ErrInvalidOptions)
	}
	if opts.SnapshotEvery == 0 {
		opts.SnapshotEvery = DefaultSnapshotEvery
	}
	if opts.Shards == 0 {
		opts.Shards = DefaultShards
	}
	if opts.SyncInterval == 0 {
		opts.SyncInterval = DefaultSyncInterval
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	st := &Store{opts: opts}
	st.streams = Streams{st: st}
	for i := range opts.Shards {
		sh, err := openShard(st, i)
		if err != nil {
			st.Close()
			return nil, err
		}
		st.shards = append(st.shards, sh)
	}
	return st, nil
}

// Now is the store's clock.
func (st *Store) Now() time.Time { return st.opts.Now() }

// Streams is the store's streams API.
func (st *Store) Streams() *Streams { return &st.streams }

// Close stops the writers once their queues are drained and closes the
// logs.
func (st *Store) Close() error {
	if st.closed.Swap(true) {
		return nil
	}
	var errs []error
	for _, sh := range st.shards {
		errs = append(errs, sh.close())
	}
	return errors.Join(errs...)
}

// now is the clock in Unix ms.
func (st *Store) now() int64 { return st.opts.Now().UnixMilli() }

// shardOf returns key's shard.
func (st *Store) shardOf(key string) *shard {
	return st.shards[int(Slot(key))%len(st.shards)]
}

// Slot is key's Redis Cluster hash slot: CRC16 of its {hash tag} (the text
// between the first '{' and the next '}', when not empty) or of the whole
// key, modulo 16384.
func Slot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return crc16(key) & 16383
}

// crc16 is CRC-16/XMODEM, Redis Cluster's.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
