package ferricstore

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Option defaults.
const (
	// DefaultShards is Options.Shards' default: one log, so that one
	// fsync commits the writes of every connection waiting (15 XADDs an
	// fsync from 50 clients, against 4 with four shards, each fsyncing
	// alone); more shards apply in parallel, for stores bound by CPU
	// rather than by fsyncs.
	DefaultShards = 1
	// DefaultSyncInterval is Options.SyncInterval's default.
	DefaultSyncInterval = 10 * time.Millisecond
	// DefaultSnapshotEvery is Options.SnapshotEvery's default.
	DefaultSnapshotEvery = 100_000
)

// Options configure a Store.
type Options struct {
	// Dir holds one log per shard. Required.
	Dir string
	// Shards is the number of shards of a new directory, each with its
	// own log and writer. A key's shard is its slot modulo the count, so
	// a directory keeps the count it was made with: Open counts the
	// shard directories it finds and opens that many, logging a warning
	// when Shards asked for another (Store.Shards is the count in use).
	// Default: DefaultShards.
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
	// SnapshotEvery is how many log records a shard appends at least
	// between snapshots of its state, after which the log before the
	// snapshot is let go; a snapshot also waits until the log has grown
	// by the last one's size. Default: DefaultSnapshotEvery.
	SnapshotEvery int
	// FlowRetention is how long a flow that reached a terminal state
	// stays readable (FLOW.GET, FLOW.HISTORY, idempotent creates) before
	// it is deleted; negative keeps them. Default: DefaultFlowRetention.
	FlowRetention time.Duration
	// MaxTerminalFlows bounds the terminal flows a shard keeps: past it
	// the oldest are deleted, however recent. Negative keeps them all.
	// Default: DefaultMaxTerminalFlows.
	MaxTerminalFlows int
	// Logger receives recovery events. Default: discarded.
	Logger *slog.Logger
}

// ErrInvalidOptions is returned by Open for options it cannot take.
var ErrInvalidOptions = errors.New("ferricstore: invalid options")

// ErrMissingShard is returned by Open for a directory whose shard
// directories do not run from shard-000 without a gap, or that has a
// shard's snapshots without its log: the keys routed to the missing
// shard would seem lost, and opening fewer shards would route keys anew.
var ErrMissingShard = errors.New("ferricstore: a shard's directory is missing")

// Store is an open ferricstore: its streams, sharded by key as Redis
// Cluster shards (CRC16 of the key's {hash tag}), each shard a durable log
// replayed on Open. It is safe for concurrent use.
type Store struct {
	closed  atomic.Bool
	opts    Options
	shards  []*shard
	streams Streams
	flows   Flows
	// claimTurn rotates the shard a claim asks first.
	claimTurn atomic.Uint64
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
	if _, err := os.Stat(filepath.Join(opts.Dir, RestoreMarker)); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrRestoreIncomplete, opts.Dir)
	}
	existing, err := existingShards(opts.Dir)
	if err != nil {
		return nil, err
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
	if opts.FlowRetention == 0 {
		opts.FlowRetention = DefaultFlowRetention
	}
	if opts.MaxTerminalFlows == 0 {
		opts.MaxTerminalFlows = DefaultMaxTerminalFlows
	}
	switch {
	case existing == 0 && opts.Shards == 0:
		opts.Shards = DefaultShards
	case existing == 0:
	default:
		if opts.Shards != 0 && opts.Shards != existing {
			opts.Logger.Warn("ferricstore: the data directory keeps its shard count", "dir", opts.Dir, "shards", existing, "requested", opts.Shards)
		}
		opts.Shards = existing
	}
	st := &Store{opts: opts}
	st.streams = Streams{st: st}
	st.flows = Flows{st: st}
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

// existingShards is how many shards dir was made with: its shard-NNN
// log directories, which must be numbered from 0 without a gap, and no
// snapshot directory of a shard past them. It is 0 for a new directory.
func existingShards(dir string) (int, error) {
	logs, err := shardDirs(dir)
	if err != nil {
		return 0, err
	}
	for i, n := range logs {
		if n != i {
			return 0, fmt.Errorf("%w: %s has %s but no %s", ErrMissingShard, dir, shardDir(n), shardDir(i))
		}
	}
	snaps, err := shardDirs(filepath.Join(dir, "snapshots"))
	if err != nil {
		return 0, err
	}
	if len(snaps) > 0 && snaps[len(snaps)-1] >= len(logs) {
		n := snaps[len(snaps)-1]
		return 0, fmt.Errorf("%w: %s has snapshots of %s but not its log", ErrMissingShard, dir, shardDir(n))
	}
	return len(logs), nil
}

// shardDirs returns the shard numbers of the shard-NNN directories in
// dir, in order; none when dir does not exist. Other entries are not the
// store's and are left alone.
func shardDirs(dir string) ([]int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ferricstore: %w", err)
	}
	var out []int
	for _, e := range ents {
		num, ok := strings.CutPrefix(e.Name(), "shard-")
		if !ok || !e.IsDir() {
			continue
		}
		// Only the names openShard gives: shard-1 or shard-+01 are not
		// shard 1's.
		if n, err := strconv.Atoi(num); err == nil && n >= 0 && shardDir(n) == e.Name() {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// shardDir is the name of shard i's log directory, and of its snapshot
// directory under snapshots/.
func shardDir(i int) string { return fmt.Sprintf("shard-%03d", i) }

// Shards is the number of shards in use: the directory's own count when
// it had one, else Options.Shards.
func (st *Store) Shards() int { return len(st.shards) }

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
