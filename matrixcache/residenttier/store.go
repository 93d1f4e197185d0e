package residenttier

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// Store is the resident tier: one file per block under a directory. It is
// safe for concurrent use.
type Store struct {
	opts Options
	dir  string
	lock *os.File

	closeMu sync.RWMutex // held for reading by every call in progress
	closed  bool

	// stripes serialise the writes and deletes of the files of one
	// subdirectory, so that a file and its index entry change together.
	stripes [fanout]sync.Mutex

	mu  sync.Mutex // guards idx
	idx *index

	st counters
}

type counters struct {
	puts, gets, hits, misses, deletes      atomic.Int64
	evictions, expired, corrupt, tempFiles atomic.Int64
	bytesWritten, fsyncs                   atomic.Int64
}

// Stats is a snapshot of a store's counters.
type Stats struct {
	// Entries and Bytes are what the store holds now; Bytes is the sum of
	// the block files' lengths, bounded by CapacityBytes.
	Entries       int64
	Bytes         int64
	CapacityBytes int64
	// Puts counts blocks written; Gets lookups (Get and View), of which
	// Hits found a live block and Misses did not (absent, expired, stored
	// under another key of the same hash, or undecodable).
	Puts, Gets, Hits, Misses int64
	// Deletes counts blocks removed by Delete, DeletePrefix and
	// DeleteShard.
	Deletes int64
	// Evictions counts blocks removed to stay within CapacityBytes.
	Evictions int64
	// Expired counts expired blocks removed: met by Get, View or Iterate,
	// by PurgeExpired, or at Open.
	Expired int64
	// Corrupt counts block files that failed to decode and were removed
	// (at Open, or after Get, View or Iterate met them).
	Corrupt int64
	// TempFilesRemoved counts leftovers of interrupted writes removed at
	// Open.
	TempFilesRemoved int64
	// BytesWritten counts the bytes of block files written.
	BytesWritten int64
	// Fsyncs counts fsync calls (files and directories); zero unless
	// Options.Sync is set.
	Fsyncs int64
}

// Open opens or creates the store in opts.Dir, locks the directory, and
// rebuilds the in-memory index from the files: leftovers of interrupted
// writes, expired blocks and files that do not decode are removed, and if
// the files hold more than CapacityBytes the coldest blocks are evicted.
// Every block file is read once. ctx bounds the rebuild.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("residenttier: %w", err)
	}
	lock, err := lockDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	s := &Store{opts: opts, dir: filepath.Clean(opts.Dir), lock: lock, idx: newIndex()}
	if err := s.load(ctx); err != nil {
		return nil, errors.Join(err, lock.Close())
	}
	return s, nil
}

// live is a block file found at Open.
type live struct {
	hash      uint64
	key       string
	size      int64
	expiresAt int64
	hotness   uint8
	mtime     time.Time
}

// scanned is what Open found in one subdirectory.
type scanned struct {
	lives            []live
	nExp, nCorr, nTm int
}

// load rebuilds the index from the directory, reading the subdirectories
// in parallel.
func (s *Store) load(ctx context.Context) error {
	now := s.opts.Clock.Now().UnixNano()
	var (
		next    atomic.Int64
		mu      sync.Mutex
		total   scanned
		errs    []error
		wg      sync.WaitGroup
		workers = min(max(runtime.GOMAXPROCS(0), 4), 16)
	)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= fanout {
					return
				}
				sc, err := s.scanDir(ctx, i, now)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
					next.Store(fanout) // stop the others early
				}
				total.lives = append(total.lives, sc.lives...)
				total.nExp += sc.nExp
				total.nCorr += sc.nCorr
				total.nTm += sc.nTm
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	lives := total.lives
	// No access times survive a restart: the coldest blocks by hotness
	// become the first victims, the least recently written first within
	// a hotness.
	slices.SortFunc(lives, func(a, b live) int {
		return cmp.Or(cmp.Compare(a.hotness, b.hotness), a.mtime.Compare(b.mtime), cmp.Compare(a.key, b.key))
	})
	for _, l := range lives {
		s.idx.put(l.hash, l.key, l.size, l.expiresAt)
	}
	nEvict := 0
	for s.idx.bytes > s.opts.CapacityBytes {
		v := s.idx.victim()
		s.idx.remove(v)
		if err := s.removeFile(v.hash); err != nil {
			return err
		}
		nEvict++
	}
	s.st.expired.Add(int64(total.nExp))
	s.st.corrupt.Add(int64(total.nCorr))
	s.st.tempFiles.Add(int64(total.nTm))
	s.st.evictions.Add(int64(nEvict))
	s.opts.Logger.Info("residenttier: opened", "dir", s.dir, "entries", s.idx.len(), "bytes", s.idx.bytes,
		"expired", total.nExp, "corrupt", total.nCorr, "leftovers", total.nTm, "evicted", nEvict)
	return nil
}

// scanDir reads subdirectory i at Open: it removes leftovers of
// interrupted writes, undecodable or misplaced block files and expired
// blocks, and returns the rest.
func (s *Store) scanDir(ctx context.Context, i int, now int64) (scanned, error) {
	var sc scanned
	if err := ctx.Err(); err != nil {
		return sc, fmt.Errorf("residenttier: rebuild index: %w", err)
	}
	dir := filepath.Join(s.dir, subdirName(uint64(i)<<56))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return sc, fmt.Errorf("residenttier: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return sc, fmt.Errorf("residenttier: rebuild index: %w", err)
	}
	changed := false
	for n, de := range ents {
		if n%256 == 255 {
			if err := ctx.Err(); err != nil {
				return sc, fmt.Errorf("residenttier: rebuild index: %w", err)
			}
		}
		name := de.Name()
		path := filepath.Join(dir, name)
		if strings.HasSuffix(name, tempSuffix) {
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return sc, fmt.Errorf("residenttier: remove leftover: %w", err)
			}
			sc.nTm, changed = sc.nTm+1, true
			continue
		}
		h, ok := parseFileName(name)
		if !ok || !de.Type().IsRegular() {
			s.opts.Logger.Warn("residenttier: ignoring foreign file", "path", path)
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return sc, fmt.Errorf("residenttier: rebuild index: %w", err)
		}
		hd, derr := blockfmt.DecodeHeader(data)
		var key []byte
		if derr == nil {
			key = blockfmt.AppendOrderedKey(nil, hd.Key)
			if xxhash.Sum64(key) != h || int(h>>56) != i {
				derr = fmt.Errorf("%w: block of another key", blockfmt.ErrCorrupt)
			}
		}
		switch {
		case derr != nil:
			s.opts.Logger.Warn("residenttier: dropping undecodable block", "path", path, "err", derr)
			sc.nCorr++
		case hd.Expired(now):
			sc.nExp++
		default:
			var mtime time.Time
			if fi, err := de.Info(); err == nil {
				mtime = fi.ModTime()
			}
			sc.lives = append(sc.lives, live{h, string(key), int64(len(data)), hd.ExpiresAt, hd.Hotness, mtime})
			continue
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return sc, fmt.Errorf("residenttier: drop stale block: %w", err)
		}
		changed = true
	}
	if changed && s.opts.Sync {
		if err := s.syncDir(dir); err != nil {
			return sc, fmt.Errorf("residenttier: %w", err)
		}
	}
	return sc, nil
}

// begin admits a call unless the store is closed; end must follow.
func (s *Store) begin() error {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return ErrClosed
	}
	return nil
}

func (s *Store) end() { s.closeMu.RUnlock() }

// write is one prepared Put: an encoded block, or for an already expired
// block a delete of its key.
type write struct {
	key       []byte // ordered key
	hash      uint64
	enc       []byte // nil: delete
	expiresAt int64
}

func (s *Store) prepare(b blockfmt.Block, now int64) (write, error) {
	key := blockfmt.AppendOrderedKey(nil, b.Key)
	w := write{key: key, hash: xxhash.Sum64(key), expiresAt: b.ExpiresAt}
	if b.Expired(now) {
		return w, nil
	}
	enc, err := blockfmt.Encode(make([]byte, 0, blockfmt.HeaderLen+b.Key.Size()+len(b.Value)), b, s.opts.Block)
	if err != nil {
		return write{}, fmt.Errorf("residenttier: %w", err)
	}
	if int64(len(enc)) > s.opts.CapacityBytes {
		return write{}, fmt.Errorf("%w: %d bytes stored, capacity %d", ErrTooLarge, len(enc), s.opts.CapacityBytes)
	}
	w.enc = enc
	return w, nil
}

// apply performs one prepared write and the evictions it causes.
func (s *Store) apply(w write) error {
	if w.enc == nil {
		_, err := s.deleteKey(w.hash, w.key)
		return err
	}
	stripe := &s.stripes[w.hash>>56]
	stripe.Lock()
	if err := s.writeFile(w.hash, w.enc); err != nil {
		stripe.Unlock()
		return err
	}
	var victims []*entry
	s.mu.Lock()
	s.idx.put(w.hash, string(w.key), int64(len(w.enc)), w.expiresAt)
	for s.idx.bytes > s.opts.CapacityBytes {
		v := s.idx.victim()
		s.idx.remove(v)
		victims = append(victims, v)
	}
	s.mu.Unlock()
	stripe.Unlock()
	s.st.puts.Add(1)
	s.st.bytesWritten.Add(int64(len(w.enc)))
	s.st.evictions.Add(int64(len(victims)))
	return s.evict(victims)
}

// evict removes the files of entries already taken out of the index,
// unless a write has put the hash back since, and hands the blocks to
// Options.OnEvict.
func (s *Store) evict(victims []*entry) error {
	var (
		errs    []error
		evicted []blockfmt.Block
	)
	for _, v := range victims {
		stripe := &s.stripes[v.hash>>56]
		stripe.Lock()
		s.mu.Lock()
		_, back := s.idx.m[v.hash]
		s.mu.Unlock()
		if !back {
			if s.opts.OnEvict != nil {
				if b, ok := s.readVictim(v); ok {
					evicted = append(evicted, b)
				}
			}
			errs = append(errs, s.removeFile(v.hash))
		}
		stripe.Unlock()
	}
	for _, b := range evicted {
		s.opts.OnEvict(b)
	}
	return errors.Join(errs...)
}

// readVictim reads the block an eviction is about to remove, if it is
// whole, live and still v's key.
func (s *Store) readVictim(v *entry) (blockfmt.Block, bool) {
	data, release, err := s.readFile(v.hash)
	if err != nil {
		return blockfmt.Block{}, false
	}
	defer release()
	b, err := decodeView(data)
	if err != nil || b.Expired(s.opts.Clock.Now().UnixNano()) || string(blockfmt.AppendOrderedKey(nil, b.Key)) != v.key {
		return blockfmt.Block{}, false
	}
	if s.opts.Mmap {
		b.Value = bytes.Clone(b.Value)
	}
	return b, true
}

// deleteKey removes the block of key, reporting whether there was one.
func (s *Store) deleteKey(hash uint64, key []byte) (bool, error) {
	stripe := &s.stripes[hash>>56]
	stripe.Lock()
	defer stripe.Unlock()
	s.mu.Lock()
	e := s.idx.get(hash, key)
	if e != nil {
		s.idx.remove(e)
	}
	s.mu.Unlock()
	if e == nil {
		return false, nil
	}
	if err := s.removeFile(hash); err != nil {
		return true, err
	}
	if s.opts.Sync {
		if err := s.syncDir(s.subdir(hash)); err != nil {
			return true, fmt.Errorf("residenttier: %w", err)
		}
	}
	return true, nil
}

// Put writes one block; the last write of a key wins. It returns once the
// block file has been renamed into place (and, with Sync, fsynced along
// with its directory). A block that has already expired deletes the key
// instead. A block whose key hashes like another stored key's replaces
// that key's block: see the package documentation.
func (s *Store) Put(ctx context.Context, b blockfmt.Block) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	if err := ctx.Err(); err != nil {
		return err
	}
	w, err := s.prepare(b, s.opts.Clock.Now().UnixNano())
	if err != nil {
		return err
	}
	return s.apply(w)
}

// PutBatch writes blocks in order, so a later block of the same key wins.
// If any block can never be stored nothing is written. Each block is its
// own file, so a batch is not atomic: if a write fails, or ctx ends, the
// blocks before it are written and the rest are not.
func (s *Store) PutBatch(ctx context.Context, blocks []blockfmt.Block) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	now := s.opts.Clock.Now().UnixNano()
	ws := make([]write, 0, len(blocks))
	for _, b := range blocks {
		w, err := s.prepare(b, now)
		if err != nil {
			return err
		}
		ws = append(ws, w)
	}
	for _, w := range ws {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.apply(w); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes key's block, reporting whether there was one.
func (s *Store) Delete(ctx context.Context, key blockfmt.Key) (bool, error) {
	if err := s.begin(); err != nil {
		return false, err
	}
	defer s.end()
	if err := ctx.Err(); err != nil {
		return false, err
	}
	k := blockfmt.AppendOrderedKey(nil, key)
	ok, err := s.deleteKey(xxhash.Sum64(k), k)
	if ok {
		s.st.deletes.Add(1)
	}
	return ok, err
}

// DeletePrefix removes every block of shard whose record key starts with
// recordPrefix, and returns how many. It scans the in-memory index (every
// entry, not a range: files are named by hash). If ctx ends part way, the
// blocks removed so far are counted and ctx's error returned.
func (s *Store) DeletePrefix(ctx context.Context, shard uint64, recordPrefix string) (int, error) {
	if err := s.begin(); err != nil {
		return 0, err
	}
	defer s.end()
	prefix := string(blockfmt.RecordPrefix(shard, recordPrefix))
	return s.removeWhere(ctx, func(e *entry) bool { return strings.HasPrefix(e.key, prefix) }, &s.st.deletes)
}

// DeleteShard removes every block of shard and returns how many.
func (s *Store) DeleteShard(ctx context.Context, shard uint64) (int, error) {
	return s.DeletePrefix(ctx, shard, "")
}

// Clear removes every block and returns how many: a cache whose resident
// tier is not flushed empties it at start, since after a machine crash its
// files may hold values deleted or overwritten before the crash.
func (s *Store) Clear(ctx context.Context) (int, error) {
	if err := s.begin(); err != nil {
		return 0, err
	}
	defer s.end()
	return s.removeWhere(ctx, func(*entry) bool { return true }, &s.st.deletes)
}

// PurgeExpired deletes every expired block and returns how many it
// deleted. It reads the expiries kept in memory, not the files.
func (s *Store) PurgeExpired(ctx context.Context) (int, error) {
	if err := s.begin(); err != nil {
		return 0, err
	}
	defer s.end()
	now := s.opts.Clock.Now().UnixNano()
	return s.removeWhere(ctx, func(e *entry) bool { return e.expiresAt != 0 && e.expiresAt <= now }, &s.st.expired)
}

// removeWhere removes every block whose entry matches, counting them in
// counter.
func (s *Store) removeWhere(ctx context.Context, match func(*entry) bool, counter *atomic.Int64) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var hashes []uint64
	s.mu.Lock()
	for h, e := range s.idx.m {
		if match(e) {
			hashes = append(hashes, h)
		}
	}
	s.mu.Unlock()
	slices.Sort(hashes) // one subdirectory after another
	n := 0
	dirty := map[uint64]bool{}
	var errs []error
	for i, h := range hashes {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				errs = append(errs, err)
				break
			}
		}
		stripe := &s.stripes[h>>56]
		stripe.Lock()
		s.mu.Lock()
		e, ok := s.idx.m[h]
		ok = ok && match(e)
		if ok {
			s.idx.remove(e)
		}
		s.mu.Unlock()
		if ok {
			n++
			counter.Add(1)
			dirty[h>>56] = true
			errs = append(errs, s.removeFile(h))
		}
		stripe.Unlock()
	}
	if s.opts.Sync {
		for d := range dirty {
			if err := s.syncDir(s.subdir(d << 56)); err != nil {
				errs = append(errs, fmt.Errorf("residenttier: %w", err))
			}
		}
	}
	return n, errors.Join(errs...)
}

// lookup finds key's live block. Its value aliases the file's bytes
// (mapped with Mmap) when stored uncompressed; release, never nil when ok,
// lets them go. It counts the lookup, removes an expired or undecodable
// file it meets, and touches the block on a hit. The caller holds begin.
func (s *Store) lookup(key blockfmt.Key) (b blockfmt.Block, release func(), ok bool, err error) {
	s.st.gets.Add(1)
	var buf [128]byte
	k := blockfmt.AppendOrderedKey(buf[:0], key)
	h := xxhash.Sum64(k)
	s.mu.Lock()
	known := s.idx.get(h, k) != nil
	s.mu.Unlock()
	if !known {
		s.st.misses.Add(1)
		return blockfmt.Block{}, nil, false, nil
	}
	data, release, err := s.readFile(h)
	if errors.Is(err, os.ErrNotExist) {
		s.st.misses.Add(1) // removed meanwhile
		return blockfmt.Block{}, nil, false, nil
	}
	if err != nil {
		s.st.misses.Add(1)
		return blockfmt.Block{}, nil, false, fmt.Errorf("residenttier: read block: %w", err)
	}
	b, err = decodeView(data)
	switch {
	case err != nil:
		release()
		s.st.misses.Add(1)
		s.opts.Logger.Warn("residenttier: undecodable block", "key", key, "err", err)
		return blockfmt.Block{}, nil, false, errors.Join(fmt.Errorf("residenttier: block %v: %w", key, err), s.dropStale(h))
	case b.Key != key:
		release()
		s.st.misses.Add(1) // replaced meanwhile by a key of the same hash
		return blockfmt.Block{}, nil, false, nil
	case b.Expired(s.opts.Clock.Now().UnixNano()):
		release()
		s.st.misses.Add(1)
		return blockfmt.Block{}, nil, false, s.dropStale(h)
	}
	s.st.hits.Add(1)
	s.mu.Lock()
	if e := s.idx.get(h, k); e != nil {
		s.idx.touch(e)
	}
	s.mu.Unlock()
	return b, release, true, nil
}

// dropStale removes the file of hash h if it is still expired or
// undecodable once its subdirectory is locked: a write may have replaced
// it since it was read.
func (s *Store) dropStale(h uint64) error {
	stripe := &s.stripes[h>>56]
	stripe.Lock()
	defer stripe.Unlock()
	data, release, err := s.readFile(h)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("residenttier: read block: %w", err)
	}
	hd, derr := blockfmt.DecodeHeader(data)
	release()
	switch {
	case derr != nil:
		s.st.corrupt.Add(1)
	case hd.Expired(s.opts.Clock.Now().UnixNano()):
		s.st.expired.Add(1)
	default:
		return nil
	}
	s.mu.Lock()
	if e, ok := s.idx.m[h]; ok {
		s.idx.remove(e)
	}
	s.mu.Unlock()
	return s.removeFile(h)
}

// Get returns key's block. An expired block is not found, and is deleted.
// A file that fails to decode is reported as an error wrapping
// [blockfmt.ErrCorrupt] (or [blockfmt.ErrUnsupportedVersion], for a block
// of a newer format), counted and deleted; it is never returned as a
// value. The returned block is the caller's own memory.
func (s *Store) Get(key blockfmt.Key) (blockfmt.Block, bool, error) {
	if err := s.begin(); err != nil {
		return blockfmt.Block{}, false, err
	}
	defer s.end()
	b, release, ok, err := s.lookup(key)
	if !ok {
		return blockfmt.Block{}, false, err
	}
	if s.opts.Mmap {
		b.Value = bytes.Clone(b.Value)
	}
	release()
	return b, true, nil
}

// View calls fn with key's block if the store holds a live one, and
// returns whether it did and fn's error. It counts and cleans up like
// [Store.Get]. The block's Value is valid only until fn returns: with
// Mmap and an uncompressed value it is the mapped file itself, read-only,
// unmapped after fn. fn must not keep it nor write to it. fn runs with no
// lock held, so it may call the store.
func (s *Store) View(key blockfmt.Key, fn func(blockfmt.Block) error) (bool, error) {
	if err := s.begin(); err != nil {
		return false, err
	}
	b, release, ok, err := s.lookup(key)
	s.end()
	if !ok {
		return false, err
	}
	defer release()
	return true, fn(b)
}

// Iterate calls fn with every live block in key order until fn returns
// false, for recovery of the tiers above. Expired and undecodable blocks
// are skipped and deleted. The keys are those in the index when Iterate
// starts; fn runs with no lock held, so it may call the store, and blocks
// written during the walk may or may not be seen.
func (s *Store) Iterate(ctx context.Context, fn func(blockfmt.Block) bool) error {
	type item struct {
		key  string
		hash uint64
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.begin(); err != nil {
		return err
	}
	s.mu.Lock()
	items := make([]item, 0, s.idx.len())
	for h, e := range s.idx.m {
		items = append(items, item{e.key, h})
	}
	s.mu.Unlock()
	s.end()
	slices.SortFunc(items, func(a, b item) int { return cmp.Compare(a.key, b.key) })
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, ok, err := s.readForIterate(it.hash, it.key)
		if err != nil {
			return err
		}
		if ok && !fn(b) {
			return nil
		}
	}
	return nil
}

func (s *Store) readForIterate(h uint64, key string) (blockfmt.Block, bool, error) {
	if err := s.begin(); err != nil {
		return blockfmt.Block{}, false, err
	}
	defer s.end()
	data, release, err := s.readFile(h)
	if errors.Is(err, os.ErrNotExist) {
		return blockfmt.Block{}, false, nil
	}
	if err == nil {
		defer release()
	}
	if err != nil {
		return blockfmt.Block{}, false, fmt.Errorf("residenttier: iterate: %w", err)
	}
	b, err := decodeView(data)
	if err != nil || b.Expired(s.opts.Clock.Now().UnixNano()) {
		if err != nil {
			s.opts.Logger.Warn("residenttier: undecodable block", "path", s.filePath(h), "err", err)
		}
		return blockfmt.Block{}, false, s.dropStale(h)
	}
	if string(blockfmt.AppendOrderedKey(nil, b.Key)) != key {
		return blockfmt.Block{}, false, nil // replaced by a key of the same hash
	}
	if s.opts.Mmap {
		b.Value = bytes.Clone(b.Value)
	}
	return b, true, nil
}

// Stats returns a snapshot of the store's counters.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	entries, nbytes := int64(s.idx.len()), s.idx.bytes
	s.mu.Unlock()
	return Stats{
		Entries:          entries,
		Bytes:            nbytes,
		CapacityBytes:    s.opts.CapacityBytes,
		Puts:             s.st.puts.Load(),
		Gets:             s.st.gets.Load(),
		Hits:             s.st.hits.Load(),
		Misses:           s.st.misses.Load(),
		Deletes:          s.st.deletes.Load(),
		Evictions:        s.st.evictions.Load(),
		Expired:          s.st.expired.Load(),
		Corrupt:          s.st.corrupt.Load(),
		TempFilesRemoved: s.st.tempFiles.Load(),
		BytesWritten:     s.st.bytesWritten.Load(),
		Fsyncs:           s.st.fsyncs.Load(),
	}
}

// Path is the directory the store uses.
func (s *Store) Path() string { return s.dir }

// Close waits for calls in progress to finish and releases the
// directory. Every file is already in place (and, with Sync, flushed), so
// there is nothing to write. Later calls return nil.
func (s *Store) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.lock.Close()
}
