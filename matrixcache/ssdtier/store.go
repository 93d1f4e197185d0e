package ssdtier

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

var (
	blocksBucket  = []byte("blocks")
	metaBucket    = []byte("meta")
	versionKey    = []byte("version")
	formatVersion = byte(1)
)

// iterateChunk is how many blocks Iterate reads per read transaction.
const iterateChunk = 256

// Store is the SSD tier: blocks in one bbolt file, written in group
// commits. It is safe for concurrent use.
type Store struct {
	opts   Options
	db     *bolt.DB
	path   string
	budget *budget

	reqs       chan *request
	writerDone chan struct{}
	closeMu    sync.RWMutex // held for reading while sending on reqs
	closed     atomic.Bool
	failed     atomic.Pointer[error]

	mu  sync.Mutex // guards idx
	idx *index

	st counters
}

type counters struct {
	puts, gets, hits, misses, deletes          atomic.Int64
	budgetRefused, evictions, expired, corrupt atomic.Int64
	commits, committedOps, bytesWritten        atomic.Int64
}

// Stats is a snapshot of a store's counters.
type Stats struct {
	// Entries and Bytes are what the store holds now; Bytes is the
	// accounted size (encoded blocks plus keys) bounded by CapacityBytes.
	Entries       int64
	Bytes         int64
	CapacityBytes int64
	// Puts counts blocks written; Gets lookups, of which Hits found a
	// live block and Misses did not (absent, expired or undecodable).
	Puts, Gets, Hits, Misses int64
	// Deletes counts blocks removed by Delete, DeletePrefix and
	// DeleteShard.
	Deletes int64
	// BudgetRefused counts blocks the write budget refused.
	BudgetRefused int64
	// BudgetShare is the write budget's admission share out of
	// [MaxBudgetShare]: about BudgetShare/MaxBudgetShare of keys are
	// admitted. It is MaxBudgetShare when WriteBytesPerSec is 0, and never
	// 0 (see [Options.WriteBytesPerSec]).
	BudgetShare int64
	// BudgetObservedBytesPerSec is the bytes written in the last closed
	// one-second window of the budget: 0 if it was quiet, or if none has
	// closed since Open. It is measured whether or not there is a target,
	// and counts what [Options.WriteBytesPerSec] counts.
	BudgetObservedBytesPerSec int64
	// BudgetTargetBytesPerSec is [Options.WriteBytesPerSec]: 0 when
	// unlimited.
	BudgetTargetBytesPerSec int64
	// Evictions counts blocks removed to stay within CapacityBytes.
	Evictions int64
	// Expired counts expired blocks removed: found by Get or Iterate and
	// deleted in the background, by PurgeExpired, or at Open.
	Expired int64
	// Corrupt counts blocks that failed to decode and were removed (at
	// Open, or in the background after Get or Iterate met them).
	Corrupt int64
	// Commits counts write transactions; CommittedOps the writes and
	// deletes they carried, so CommittedOps/Commits is the batch size.
	Commits, CommittedOps int64
	// BytesWritten counts the encoded bytes of blocks written.
	BytesWritten int64
}

type opKind uint8

const (
	opPut opKind = iota
	opDelete
	opDeleteIfStale // delete if expired or undecodable
	opDeletePrefix
)

type op struct {
	kind opKind
	key  []byte // ordered key, or prefix for opDeletePrefix
	val  []byte // encoded block for opPut
}

type request struct {
	ops  []op
	done chan result // nil: nobody waits
}

type result struct {
	n   int // blocks deleted
	err error
}

// Open opens or creates the store at opts.Path and rebuilds its in-memory
// index from the file: expired and undecodable blocks are removed, and if
// the file holds more than CapacityBytes the coldest blocks are evicted.
// ctx bounds the rebuild.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	path, err := dbFile(opts.Path)
	if err != nil {
		return nil, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:        time.Second,
		NoSync:         opts.NoSync,
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s", ErrLocked, path)
	}
	if err != nil {
		return nil, fmt.Errorf("ssdtier: open %s: %w", path, err)
	}
	s := &Store{
		opts:       opts,
		db:         db,
		path:       path,
		budget:     newBudget(opts.WriteBytesPerSec, opts.Clock.Now()),
		reqs:       make(chan *request, 1024),
		writerDone: make(chan struct{}),
		idx:        newIndex(),
	}
	if err := s.load(ctx); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	go s.run()
	return s, nil
}

func dbFile(p string) (string, error) {
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return filepath.Join(p, FileName), nil
	}
	dir, file := p, FileName
	if !strings.HasSuffix(p, string(os.PathSeparator)) {
		dir, file = filepath.Split(p)
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("ssdtier: %w", err)
		}
	}
	return filepath.Join(dir, file), nil
}

// load checks the format version and rebuilds the index.
func (s *Store) load(ctx context.Context) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(metaBucket)
		if err != nil {
			return err
		}
		switch v := meta.Get(versionKey); {
		case v == nil:
			if err := meta.Put(versionKey, []byte{formatVersion}); err != nil {
				return err
			}
		case len(v) != 1 || v[0] > formatVersion:
			return fmt.Errorf("%w: %v", ErrUnsupportedVersion, v)
		}
		_, err = tx.CreateBucketIfNotExists(blocksBucket)
		return err
	})
	if err != nil {
		return err
	}

	type live struct {
		key     []byte
		size    int64
		hotness uint8
	}
	var (
		lives        []live
		stale        [][]byte
		nExp, nCorr  int
		now          = s.opts.Clock.Now().UnixNano()
		errCancelled error
	)
	err = s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(blocksBucket).Cursor()
		n := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if n++; n%4096 == 0 {
				if errCancelled = ctx.Err(); errCancelled != nil {
					return errCancelled
				}
			}
			h, err := blockfmt.DecodeHeader(v)
			switch {
			case err != nil || !bytes.Equal(blockfmt.AppendOrderedKey(nil, h.Key), k):
				s.opts.Logger.Warn("ssdtier: dropping undecodable block", "key", fmt.Sprintf("%q", k), "err", err)
				stale, nCorr = append(stale, bytes.Clone(k)), nCorr+1
			case h.Expired(now):
				stale, nExp = append(stale, bytes.Clone(k)), nExp+1
			default:
				lives = append(lives, live{bytes.Clone(k), int64(len(k) + len(v)), h.Hotness})
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ssdtier: rebuild index: %w", err)
	}
	// No access times survive a restart: the coldest blocks by hotness
	// become the first victims, in key order within a hotness.
	slices.SortStableFunc(lives, func(a, b live) int { return cmp.Compare(a.hotness, b.hotness) })
	for _, l := range lives {
		s.idx.put(l.key, l.size)
	}
	var victims [][]byte
	for s.idx.bytes > s.opts.CapacityBytes {
		v := s.idx.victim()
		victims = append(victims, []byte(v.key))
		s.idx.remove([]byte(v.key))
	}
	if len(stale)+len(victims) > 0 {
		err = s.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(blocksBucket)
			for _, k := range append(stale, victims...) {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("ssdtier: drop stale blocks: %w", err)
		}
	}
	s.st.expired.Add(int64(nExp))
	s.st.corrupt.Add(int64(nCorr))
	s.st.evictions.Add(int64(len(victims)))
	s.opts.Logger.Info("ssdtier: opened", "path", s.path, "entries", s.idx.len(), "bytes", s.idx.bytes,
		"expired", nExp, "corrupt", nCorr, "evicted", len(victims))
	return nil
}

// prepare encodes a block for writing. An already expired block becomes a
// delete, so it still replaces an older live copy.
func (s *Store) prepare(b blockfmt.Block, now time.Time) (op, error) {
	key := blockfmt.AppendOrderedKey(nil, b.Key)
	if len(key) > bolt.MaxKeySize {
		return op{}, fmt.Errorf("%w: key of %d bytes (max %d)", ErrTooLarge, len(key), bolt.MaxKeySize)
	}
	if b.Expired(now.UnixNano()) {
		return op{kind: opDelete, key: key}, nil
	}
	val, err := blockfmt.Encode(make([]byte, 0, blockfmt.HeaderLen+b.Key.Size()+len(b.Value)), b, s.opts.Block)
	if err != nil {
		return op{}, fmt.Errorf("ssdtier: %w", err)
	}
	if size := int64(len(key) + len(val)); size > s.opts.CapacityBytes {
		return op{}, fmt.Errorf("%w: %d bytes stored, capacity %d", ErrTooLarge, size, s.opts.CapacityBytes)
	}
	return op{kind: opPut, key: key, val: val}, nil
}

// Put writes one block; the last write of a key wins. It returns once the
// block is committed (and, unless NoSync, fsynced), or fails with
// [ErrBudgetExceeded] if the write budget refused it. A block that has
// already expired deletes the key instead. If ctx ends first Put returns
// its error, and the block may or may not be written.
func (s *Store) Put(ctx context.Context, b blockfmt.Block) error {
	if err := s.usable(); err != nil {
		return err
	}
	now := s.opts.Clock.Now()
	o, err := s.prepare(b, now)
	if err != nil {
		return err
	}
	if o.kind == opPut && !admitsKey(o.key, s.budget.shareAt(now)) {
		s.st.budgetRefused.Add(1)
		return ErrBudgetExceeded
	}
	_, err = s.submit(ctx, []op{o})
	return err
}

// PutBatch writes blocks in one transaction, in order (so a later block
// of the same key wins). If any block can never be stored nothing is
// written. Blocks the write budget refuses are skipped and the others
// written; the error then wraps [ErrBudgetExceeded] and says how many.
func (s *Store) PutBatch(ctx context.Context, blocks []blockfmt.Block) error {
	if err := s.usable(); err != nil {
		return err
	}
	now := s.opts.Clock.Now()
	ops := make([]op, 0, len(blocks))
	for _, b := range blocks {
		o, err := s.prepare(b, now)
		if err != nil {
			return err
		}
		ops = append(ops, o)
	}
	// One share for the whole batch: it is decided at one instant, and
	// the budget's lock is taken once.
	share := s.budget.shareAt(now)
	refused := 0
	kept := ops[:0]
	for _, o := range ops {
		if o.kind == opPut && !admitsKey(o.key, share) {
			refused++
			continue
		}
		kept = append(kept, o)
	}
	s.st.budgetRefused.Add(int64(refused))
	if len(kept) > 0 {
		if _, err := s.submit(ctx, kept); err != nil {
			return err
		}
	}
	if refused > 0 {
		return fmt.Errorf("%w: %d of %d blocks refused", ErrBudgetExceeded, refused, len(blocks))
	}
	return nil
}

// Delete removes key's block, reporting whether there was one.
func (s *Store) Delete(ctx context.Context, key blockfmt.Key) (bool, error) {
	if err := s.usable(); err != nil {
		return false, err
	}
	n, err := s.submit(ctx, []op{{kind: opDelete, key: blockfmt.AppendOrderedKey(nil, key)}})
	return n > 0, err
}

// DeletePrefix removes every block of shard whose record key starts with
// recordPrefix, and returns how many. It is a range scan of the file.
func (s *Store) DeletePrefix(ctx context.Context, shard uint64, recordPrefix string) (int, error) {
	if err := s.usable(); err != nil {
		return 0, err
	}
	return s.submit(ctx, []op{{kind: opDeletePrefix, key: blockfmt.RecordPrefix(shard, recordPrefix)}})
}

// DeleteShard removes every block of shard and returns how many.
func (s *Store) DeleteShard(ctx context.Context, shard uint64) (int, error) {
	return s.DeletePrefix(ctx, shard, "")
}

// Get returns key's block. An expired block is not found, and is deleted
// in the background. A block that fails to decode is reported as an
// error wrapping [blockfmt.ErrCorrupt] and deleted in the background.
func (s *Store) Get(key blockfmt.Key) (blockfmt.Block, bool, error) {
	if s.closed.Load() {
		return blockfmt.Block{}, false, ErrClosed
	}
	s.st.gets.Add(1)
	var buf [128]byte
	k := blockfmt.AppendOrderedKey(buf[:0], key)
	var (
		b     blockfmt.Block
		found bool
		derr  error
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(blocksBucket).Get(k)
		if v == nil {
			return nil
		}
		found = true
		b, derr = blockfmt.Decode(v)
		return nil
	})
	if err != nil {
		if errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
			return blockfmt.Block{}, false, ErrClosed
		}
		return blockfmt.Block{}, false, fmt.Errorf("ssdtier: get: %w", err)
	}
	if found && derr == nil && b.Key != key {
		derr = fmt.Errorf("%w: stored under another key", blockfmt.ErrCorrupt)
	}
	switch {
	case !found:
		s.st.misses.Add(1)
		return blockfmt.Block{}, false, nil
	case derr != nil:
		s.st.misses.Add(1)
		s.opts.Logger.Warn("ssdtier: undecodable block", "key", key, "err", derr)
		s.submitAsync(op{kind: opDeleteIfStale, key: bytes.Clone(k)})
		return blockfmt.Block{}, false, fmt.Errorf("ssdtier: block %v: %w", key, derr)
	case b.Expired(s.opts.Clock.Now().UnixNano()):
		s.st.misses.Add(1)
		s.submitAsync(op{kind: opDeleteIfStale, key: bytes.Clone(k)})
		return blockfmt.Block{}, false, nil
	}
	s.st.hits.Add(1)
	s.mu.Lock()
	s.idx.touch(k)
	s.mu.Unlock()
	return b, true, nil
}

// Iterate calls fn with every live block in key order until fn returns
// false, for recovery of the tiers above. Expired and undecodable blocks
// are skipped and deleted. fn runs outside any transaction, so it may
// call the store; blocks written during the walk may or may not be seen.
func (s *Store) Iterate(ctx context.Context, fn func(blockfmt.Block) bool) error {
	var after []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.closed.Load() {
			return ErrClosed
		}
		var chunk []blockfmt.Block
		var stale [][]byte
		now := s.opts.Clock.Now().UnixNano()
		err := s.db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(blocksBucket).Cursor()
			k, v := c.First()
			if after != nil {
				k, v = c.Seek(after)
				if bytes.Equal(k, after) {
					k, v = c.Next()
				}
			}
			for ; k != nil && len(chunk)+len(stale) < iterateChunk; k, v = c.Next() {
				after = bytes.Clone(k)
				b, err := blockfmt.Decode(v)
				if err != nil || b.Expired(now) {
					if err != nil {
						s.opts.Logger.Warn("ssdtier: undecodable block", "key", fmt.Sprintf("%q", k), "err", err)
					}
					stale = append(stale, after)
					continue
				}
				chunk = append(chunk, b)
			}
			if k == nil {
				after = nil
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("ssdtier: iterate: %w", err)
		}
		for _, k := range stale {
			s.submitAsync(op{kind: opDeleteIfStale, key: k})
		}
		for _, b := range chunk {
			if !fn(b) {
				return nil
			}
		}
		if after == nil {
			return nil
		}
	}
}

// PurgeExpired deletes every expired block and returns how many it
// deleted. It reads block headers only (no value is decompressed) in
// chunks, so it does not hold up writers for long.
func (s *Store) PurgeExpired(ctx context.Context) (int, error) {
	var after []byte
	total := 0
	for {
		if err := s.usable(); err != nil {
			return total, err
		}
		var ops []op
		now := s.opts.Clock.Now().UnixNano()
		done := false
		err := s.db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(blocksBucket).Cursor()
			k, v := c.First()
			if after != nil {
				if k, v = c.Seek(after); bytes.Equal(k, after) {
					k, v = c.Next()
				}
			}
			for n := 0; k != nil && n < 4*iterateChunk; k, v = c.Next() {
				n++
				after = bytes.Clone(k)
				if h, err := blockfmt.DecodeHeader(v); err != nil || h.Expired(now) {
					ops = append(ops, op{kind: opDeleteIfStale, key: after})
				}
			}
			done = k == nil
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("ssdtier: purge: %w", err)
		}
		if len(ops) > 0 {
			n, err := s.submit(ctx, ops)
			total += n
			if err != nil {
				return total, err
			}
		}
		if done {
			return total, nil
		}
	}
}

// Stats returns a snapshot of the store's counters.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	entries, nbytes := int64(s.idx.len()), s.idx.bytes
	s.mu.Unlock()
	share, observed := s.budget.stats(s.opts.Clock.Now())
	return Stats{
		Entries:                   entries,
		Bytes:                     nbytes,
		CapacityBytes:             s.opts.CapacityBytes,
		Puts:                      s.st.puts.Load(),
		Gets:                      s.st.gets.Load(),
		Hits:                      s.st.hits.Load(),
		Misses:                    s.st.misses.Load(),
		Deletes:                   s.st.deletes.Load(),
		BudgetRefused:             s.st.budgetRefused.Load(),
		BudgetShare:               share,
		BudgetObservedBytesPerSec: observed,
		BudgetTargetBytesPerSec:   s.opts.WriteBytesPerSec,
		Evictions:                 s.st.evictions.Load(),
		Expired:                   s.st.expired.Load(),
		Corrupt:                   s.st.corrupt.Load(),
		Commits:                   s.st.commits.Load(),
		CommittedOps:              s.st.committedOps.Load(),
		BytesWritten:              s.st.bytesWritten.Load(),
	}
}

// Path is the bbolt file the store uses.
func (s *Store) Path() string { return s.path }

// Close waits for queued writes to commit, flushes the file if NoSync is
// set, and closes it. Later calls return nil.
func (s *Store) Close() error {
	s.closeMu.Lock()
	if s.closed.Load() {
		s.closeMu.Unlock()
		return nil
	}
	s.closed.Store(true)
	close(s.reqs)
	s.closeMu.Unlock()
	<-s.writerDone
	var err error
	if s.opts.NoSync {
		err = s.db.Sync()
	}
	return errors.Join(err, s.db.Close())
}

func (s *Store) usable() error {
	if s.closed.Load() {
		return ErrClosed
	}
	if p := s.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// submit queues ops as one request and waits for its commit.
func (s *Store) submit(ctx context.Context, ops []op) (int, error) {
	r := &request{ops: ops, done: make(chan result, 1)}
	s.closeMu.RLock()
	if s.closed.Load() {
		s.closeMu.RUnlock()
		return 0, ErrClosed
	}
	select {
	case s.reqs <- r:
	case <-ctx.Done():
		s.closeMu.RUnlock()
		return 0, ctx.Err()
	}
	s.closeMu.RUnlock()
	select {
	case res := <-r.done:
		return res.n, res.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// submitAsync queues background housekeeping if there is room, and drops
// it otherwise: it will be found again.
func (s *Store) submitAsync(o op) {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	if s.closed.Load() {
		return
	}
	select {
	case s.reqs <- &request{ops: []op{o}}:
	default:
	}
}
