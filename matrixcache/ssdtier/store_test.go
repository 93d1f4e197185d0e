package ssdtier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/internal/fakeclock"
)

func openStore(t testing.TB, opts Options) *Store {
	t.Helper()
	if opts.Path == "" {
		opts.Path = t.TempDir()
	}
	s, err := Open(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func blk(shard uint64, record string, value string) blockfmt.Block {
	return blockfmt.NewBlock(cachekey.String(shard, record), []byte(value))
}

// flush waits until everything queued before it, including background
// deletes, has been committed: the writer handles requests in order.
func flush(t testing.TB, s *Store) {
	t.Helper()
	_, err := s.Delete(context.Background(), blockfmt.Key{Record: "\xff-flush"})
	require.NoError(t, err)
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"zero values with a path", Options{Path: "x"}, true},
		{"no path", Options{}, false},
		{"negative capacity", Options{Path: "x", CapacityBytes: -1}, false},
		{"negative budget", Options{Path: "x", WriteBytesPerSec: -1}, false},
		{"negative delay", Options{Path: "x", BatchDelay: -time.Second}, false},
		{"negative batch", Options{Path: "x", MaxBatch: -1}, false},
		{"bad block options", Options{Path: "x", Block: blockfmt.Options{MinCompressBytes: -1}}, false},
		{"everything set", Options{Path: "x", CapacityBytes: 1 << 20, WriteBytesPerSec: 1 << 20, BatchDelay: time.Millisecond,
			MaxBatch: 8, Block: blockfmt.Options{Compression: blockfmt.CompressionZstd}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidOptions)
			_, err = Open(t.Context(), tt.opts)
			require.ErrorIs(t, err, ErrInvalidOptions)
		})
	}
}

func TestPathIsDirectoryOrFile(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name, path, want string
	}{
		{"existing directory", root, filepath.Join(root, FileName)},
		{"new directory", filepath.Join(root, "a", "b") + string(os.PathSeparator), filepath.Join(root, "a", "b", FileName)},
		{"file in a new directory", filepath.Join(root, "c", "cache.db"), filepath.Join(root, "c", "cache.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t, Options{Path: tt.path})
			require.Equal(t, tt.want, s.Path())
			require.NoError(t, s.Close())
			require.FileExists(t, tt.want)
		})
	}
}

func TestPutGet(t *testing.T) {
	big := bytes.Repeat([]byte("compressible page "), 500)
	tests := []struct {
		name  string
		block blockfmt.Block
	}{
		{"string", blk(1, "user:1", "alice")},
		{"empty value", blockfmt.NewBlock(cachekey.String(1, "empty"), nil)},
		{"page", blockfmt.NewBlock(cachekey.PageWithSlot(2, 7, 0, 4096, 3), big)},
		{"zero bytes in key", blockfmt.NewBlock(blockfmt.Key{Shard: 0, Record: "a\x00b", Namespace: "x\x00", Selector: "\x00"}, []byte{0})},
		{"hotness and ttl kept", blockfmt.Block{Key: cachekey.Hash(3, "h", "f"), Kind: blockfmt.KindObject, Hotness: 9,
			ExpiresAt: time.Unix(1_800_000_000, 0).UnixNano(), Value: []byte("v")}},
	}
	for _, compression := range []blockfmt.Compression{blockfmt.CompressionNone, blockfmt.CompressionZstd} {
		s := openStore(t, Options{Clock: fakeclock.New(), Block: blockfmt.Options{Compression: compression}})
		for _, tt := range tests {
			t.Run(compression.String()+"/"+tt.name, func(t *testing.T) {
				require.NoError(t, s.Put(t.Context(), tt.block))
				got, ok, err := s.Get(tt.block.Key)
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, tt.block, got)
			})
		}
		_, ok, err := s.Get(cachekey.String(1, "absent"))
		require.NoError(t, err)
		require.False(t, ok)
		st := s.Stats()
		require.Equal(t, int64(len(tests)), st.Entries)
		require.Equal(t, int64(len(tests)), st.Puts)
		require.Equal(t, int64(len(tests)+1), st.Gets)
		require.Equal(t, int64(len(tests)), st.Hits)
		require.Equal(t, int64(1), st.Misses)
	}
}

func TestLastWriteWins(t *testing.T) {
	s := openStore(t, Options{})
	ctx := t.Context()
	k := cachekey.String(1, "k")
	for i := range 10 {
		require.NoError(t, s.Put(ctx, blk(1, "k", fmt.Sprint("v", i))))
	}
	got, ok, err := s.Get(k)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "v9", string(got.Value))
	require.NoError(t, s.PutBatch(ctx, []blockfmt.Block{blk(1, "k", "a"), blk(1, "k", "b")}))
	got, _, _ = s.Get(k)
	require.Equal(t, "b", string(got.Value), "a later block in a batch wins")
	require.Equal(t, int64(1), s.Stats().Entries)
}

func TestDeletes(t *testing.T) {
	records := []string{"user:1", "user:10", "user:2", "order:1", "use", "user\x00x"}
	tests := []struct {
		name      string
		del       func(ctx context.Context, s *Store) (int, error)
		wantCount int
		remaining map[uint64][]string
	}{
		{"key", func(ctx context.Context, s *Store) (int, error) {
			ok, err := s.Delete(ctx, cachekey.String(1, "user:1"))
			if ok {
				return 1, err
			}
			return 0, err
		}, 1, map[uint64][]string{1: {"user:10", "user:2", "order:1", "use", "user\x00x"}, 2: records}},
		{"absent key", func(ctx context.Context, s *Store) (int, error) {
			ok, err := s.Delete(ctx, cachekey.String(3, "user:1"))
			if ok {
				return 1, err
			}
			return 0, err
		}, 0, map[uint64][]string{1: records, 2: records}},
		{"prefix", func(ctx context.Context, s *Store) (int, error) { return s.DeletePrefix(ctx, 1, "user:1") },
			2, map[uint64][]string{1: {"user:2", "order:1", "use", "user\x00x"}, 2: records}},
		{"prefix with zero byte", func(ctx context.Context, s *Store) (int, error) { return s.DeletePrefix(ctx, 2, "user\x00") },
			1, map[uint64][]string{1: records, 2: {"user:1", "user:10", "user:2", "order:1", "use"}}},
		{"short prefix", func(ctx context.Context, s *Store) (int, error) { return s.DeletePrefix(ctx, 1, "use") },
			5, map[uint64][]string{1: {"order:1"}, 2: records}},
		{"shard", func(ctx context.Context, s *Store) (int, error) { return s.DeleteShard(ctx, 2) },
			6, map[uint64][]string{1: records}},
		{"empty shard", func(ctx context.Context, s *Store) (int, error) { return s.DeleteShard(ctx, 9) },
			0, map[uint64][]string{1: records, 2: records}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t, Options{})
			ctx := t.Context()
			for _, shard := range []uint64{1, 2} {
				for _, r := range records {
					require.NoError(t, s.Put(ctx, blk(shard, r, r)))
				}
			}
			n, err := tt.del(ctx, s)
			require.NoError(t, err)
			require.Equal(t, tt.wantCount, n)
			got := map[uint64][]string{}
			require.NoError(t, s.Iterate(ctx, func(b blockfmt.Block) bool {
				got[b.Key.Shard] = append(got[b.Key.Shard], b.Key.Record)
				return true
			}))
			for shard, want := range tt.remaining {
				require.ElementsMatch(t, want, got[shard], "shard %d", shard)
			}
			require.Len(t, got, len(tt.remaining))
			st := s.Stats()
			require.Equal(t, int64(12-tt.wantCount), st.Entries)
			require.Equal(t, int64(tt.wantCount), st.Deletes)
		})
	}
}

func TestTTL(t *testing.T) {
	clock := fakeclock.New()
	dir := t.TempDir()
	s := openStore(t, Options{Path: dir, Clock: clock})
	ctx := t.Context()
	short := blk(1, "short", "s")
	short.ExpiresAt = clock.Now().Add(time.Minute).UnixNano()
	long := blk(1, "long", "l")
	long.ExpiresAt = clock.Now().Add(time.Hour).UnixNano()
	never := blk(1, "never", "n")
	require.NoError(t, s.PutBatch(ctx, []blockfmt.Block{short, long, never}))

	_, ok, err := s.Get(short.Key)
	require.NoError(t, err)
	require.True(t, ok, "not yet expired")

	clock.Advance(time.Minute) // expiry is inclusive
	_, ok, err = s.Get(short.Key)
	require.NoError(t, err)
	require.False(t, ok, "expired blocks are never served")
	flush(t, s)
	st := s.Stats()
	require.Equal(t, int64(1), st.Expired, "and are deleted lazily")
	require.Equal(t, int64(2), st.Entries)

	// Iterate skips expired blocks too.
	clock.Advance(time.Hour)
	var seen []string
	require.NoError(t, s.Iterate(ctx, func(b blockfmt.Block) bool { seen = append(seen, b.Key.Record); return true }))
	require.Equal(t, []string{"never"}, seen)

	// Writing an already-expired block hides an older live copy.
	dead := blk(1, "never", "dead")
	dead.ExpiresAt = clock.Now().UnixNano()
	require.NoError(t, s.Put(ctx, dead))
	_, ok, _ = s.Get(never.Key)
	require.False(t, ok)
	require.NoError(t, s.Close())

	// Expiry holds across a restart: the block is in the file but expired.
	clock2 := fakeclock.New()
	s2 := openStore(t, Options{Path: dir, Clock: clock2})
	ttl := blk(2, "ttl", "t")
	ttl.ExpiresAt = clock2.Now().Add(time.Second).UnixNano()
	require.NoError(t, s2.Put(ctx, ttl))
	require.NoError(t, s2.Close())
	clock2.Advance(2 * time.Second)
	s3 := openStore(t, Options{Path: dir, Clock: clock2})
	_, ok, err = s3.Get(ttl.Key)
	require.NoError(t, err)
	require.False(t, ok, "an expired block does not come back after a restart")
	require.Equal(t, int64(1), s3.Stats().Expired, "Open removed it")
	require.Equal(t, int64(0), s3.Stats().Entries)
}

func TestReopenRecovers(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprint("NoSync=", noSync), func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{Path: dir, NoSync: noSync, Block: blockfmt.Options{Compression: blockfmt.CompressionZstd}}
			s := openStore(t, opts)
			want := map[blockfmt.Key][]byte{}
			var batch []blockfmt.Block
			for i := range 500 {
				b := blockfmt.NewBlock(cachekey.Page(uint64(i%4), uint64(i), 0, 4096), bytes.Repeat([]byte{byte(i)}, i*3))
				want[b.Key] = b.Value
				batch = append(batch, b)
			}
			require.NoError(t, s.PutBatch(t.Context(), batch))
			before := s.Stats()
			require.NoError(t, s.Close())

			s = openStore(t, opts)
			after := s.Stats()
			require.Equal(t, before.Entries, after.Entries)
			require.Equal(t, before.Bytes, after.Bytes)
			got := map[blockfmt.Key][]byte{}
			require.NoError(t, s.Iterate(t.Context(), func(b blockfmt.Block) bool { got[b.Key] = b.Value; return true }))
			require.Equal(t, len(want), len(got))
			for k, v := range want {
				require.True(t, bytes.Equal(v, got[k]), "%v", k)
			}
		})
	}
}

func TestEvictionLeastRecentlyUsedFirst(t *testing.T) {
	ctx := t.Context()
	one := int64(blockfmt.OrderedKeyLen(cachekey.String(1, "a"))) + int64(len(mustEncode(t, blk(1, "a", "0123456789"))))
	s := openStore(t, Options{CapacityBytes: 3 * one})
	for _, r := range []string{"a", "b", "c"} {
		require.NoError(t, s.Put(ctx, blk(1, r, "0123456789")))
	}
	require.Equal(t, 3*one, s.Stats().Bytes)
	_, ok, _ := s.Get(cachekey.String(1, "a")) // a is now the most recently used
	require.True(t, ok)
	require.NoError(t, s.Put(ctx, blk(1, "d", "0123456789")))
	present := func(r string) bool {
		_, ok, err := s.Get(cachekey.String(1, r))
		require.NoError(t, err)
		return ok
	}
	require.False(t, present("b"), "b was the least recently used")
	require.True(t, present("a"))
	require.True(t, present("c"))
	require.True(t, present("d"))
	st := s.Stats()
	require.Equal(t, int64(1), st.Evictions)
	require.Equal(t, int64(3), st.Entries)
	require.LessOrEqual(t, st.Bytes, st.CapacityBytes)

	require.ErrorIs(t, s.Put(ctx, blk(1, "huge", string(make([]byte, 4*one)))), ErrTooLarge)
	require.ErrorIs(t, s.Put(ctx, blockfmt.NewBlock(blockfmt.Key{Record: string(make([]byte, bolt.MaxKeySize))}, nil)), ErrTooLarge)
	require.ErrorIs(t, s.PutBatch(ctx, []blockfmt.Block{blk(1, "ok", "x"), blk(1, "huge", string(make([]byte, 4*one)))}), ErrTooLarge)
	require.False(t, present("ok"), "a batch with a block that can never be stored writes nothing")
}

func TestEvictionAfterReopenWithSmallerCapacity(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, Options{Path: dir})
	for i := range 100 {
		b := blk(1, fmt.Sprint("k", i), "value")
		b.Hotness = uint8(100 - i) // k99 is the coldest
		require.NoError(t, s.Put(t.Context(), b))
	}
	total := s.Stats().Bytes
	require.NoError(t, s.Close())
	s = openStore(t, Options{Path: dir, CapacityBytes: total / 2})
	st := s.Stats()
	require.LessOrEqual(t, st.Bytes, total/2)
	require.Equal(t, 100-st.Entries, st.Evictions)
	_, ok, _ := s.Get(cachekey.String(1, "k99"))
	require.False(t, ok, "the coldest block goes first after a restart")
	_, ok, _ = s.Get(cachekey.String(1, "k0"))
	require.True(t, ok, "the hottest stays")
}

func mustEncode(t testing.TB, b blockfmt.Block) []byte {
	enc, err := blockfmt.Encode(nil, b, blockfmt.Options{})
	require.NoError(t, err)
	return enc
}

func TestConcurrentPutsAreBatched(t *testing.T) {
	s := openStore(t, Options{})
	ctx := t.Context()
	const writers, each = 16, 100
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				require.NoError(t, s.Put(ctx, blk(uint64(w), fmt.Sprint(i), fmt.Sprint(w, "/", i))))
				if i%10 == 0 {
					_, _, err := s.Get(cachekey.String(uint64(w), fmt.Sprint(i)))
					require.NoError(t, err)
				}
			}
		})
	}
	wg.Wait()
	st := s.Stats()
	require.Equal(t, int64(writers*each), st.Puts)
	require.Equal(t, int64(writers*each), st.Entries)
	require.Less(t, st.Commits, st.Puts, "concurrent puts share commits")
	t.Logf("%d puts in %d commits (%.1f per commit)", st.Puts, st.Commits, float64(st.CommittedOps)/float64(st.Commits))
	for w := range writers {
		for i := range each {
			b, ok, err := s.Get(cachekey.String(uint64(w), fmt.Sprint(i)))
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, fmt.Sprint(w, "/", i), string(b.Value))
		}
	}
}

func TestBatchDelayGroupsWrites(t *testing.T) {
	s := openStore(t, Options{BatchDelay: 20 * time.Millisecond, MaxBatch: 8})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() { require.NoError(t, s.Put(t.Context(), blk(1, fmt.Sprint(i), "v"))) })
	}
	wg.Wait()
	st := s.Stats()
	require.Equal(t, int64(16), st.Puts)
	require.LessOrEqual(t, st.Commits, int64(8))
}

func TestIterate(t *testing.T) {
	s := openStore(t, Options{NoSync: true})
	ctx := t.Context()
	var batch []blockfmt.Block
	for i := range 3*iterateChunk + 7 {
		batch = append(batch, blk(uint64(i%3), fmt.Sprintf("%05d", i), "v"))
	}
	require.NoError(t, s.PutBatch(ctx, batch))
	var keys []blockfmt.Key
	require.NoError(t, s.Iterate(ctx, func(b blockfmt.Block) bool {
		if b.Key.Shard == 9 {
			return true // written during the walk: may or may not be seen
		}
		keys = append(keys, b.Key)
		// fn may write to the store: it runs outside any transaction.
		require.NoError(t, s.Put(ctx, blk(9, b.Key.Record, "copy")))
		return true
	}))
	require.Equal(t, len(batch), len(keys))
	for i := 1; i < len(keys); i++ {
		require.Negative(t, keys[i-1].Compare(keys[i]), "key order")
	}
	n := 0
	require.NoError(t, s.Iterate(ctx, func(blockfmt.Block) bool { n++; return n < 5 }))
	require.Equal(t, 5, n, "stops when fn returns false")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, s.Iterate(cctx, func(blockfmt.Block) bool { return true }), context.Canceled)
}

func TestCorruptBlocksAreDroppedAtOpen(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, Options{Path: dir})
	for i := range 10 {
		require.NoError(t, s.Put(t.Context(), blk(1, fmt.Sprint(i), "value")))
	}
	path := s.Path()
	require.NoError(t, s.Close())

	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(blocksBucket)
		k := blockfmt.AppendOrderedKey(nil, cachekey.String(1, "3"))
		v := bytes.Clone(b.Get(k))
		v[len(v)-1] ^= 1 // a flipped bit
		require.NoError(t, b.Put(k, v))
		k = blockfmt.AppendOrderedKey(nil, cachekey.String(1, "4"))
		require.NoError(t, b.Put(k, bytes.Clone(b.Get(k))[:20])) // torn
		// A valid block filed under the wrong key.
		return b.Put(blockfmt.AppendOrderedKey(nil, cachekey.String(1, "5")), bytes.Clone(b.Get(blockfmt.AppendOrderedKey(nil, cachekey.String(1, "6")))))
	}))
	require.NoError(t, db.Close())

	s = openStore(t, Options{Path: dir})
	st := s.Stats()
	require.Equal(t, int64(3), st.Corrupt)
	require.Equal(t, int64(7), st.Entries)
	for _, r := range []string{"3", "4", "5"} {
		_, ok, err := s.Get(cachekey.String(1, r))
		require.NoError(t, err)
		require.False(t, ok)
	}
	b, ok, err := s.Get(cachekey.String(1, "6"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "value", string(b.Value))
}

func TestUnsupportedFileVersion(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, Options{Path: dir})
	path := s.Path()
	require.NoError(t, s.Close())
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error { return tx.Bucket(metaBucket).Put(versionKey, []byte{formatVersion + 1}) }))
	require.NoError(t, db.Close())
	_, err = Open(t.Context(), Options{Path: dir})
	require.ErrorIs(t, err, ErrUnsupportedVersion)
}

func TestClosedAndLocked(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, Options{Path: dir})
	_, err := Open(t.Context(), Options{Path: dir})
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close twice is fine")
	ctx := t.Context()
	k := cachekey.String(1, "k")
	require.ErrorIs(t, s.Put(ctx, blk(1, "k", "v")), ErrClosed)
	require.ErrorIs(t, s.PutBatch(ctx, []blockfmt.Block{blk(1, "k", "v")}), ErrClosed)
	_, _, err = s.Get(k)
	require.ErrorIs(t, err, ErrClosed)
	_, err = s.Delete(ctx, k)
	require.ErrorIs(t, err, ErrClosed)
	_, err = s.DeleteShard(ctx, 1)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, s.Iterate(ctx, func(blockfmt.Block) bool { return true }), ErrClosed)
}

func TestPutHonoursContext(t *testing.T) {
	s := openStore(t, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := s.Put(ctx, blk(1, "k", "v"))
	if err != nil { // the request may win the race into the queue
		require.True(t, errors.Is(err, context.Canceled))
	}
}

func TestPurgeExpired(t *testing.T) {
	clock := fakeclock.New()
	s := openStore(t, Options{Clock: clock, NoSync: true})
	ctx := t.Context()
	var batch []blockfmt.Block
	for i := range 2500 {
		b := blk(uint64(i%5), fmt.Sprint(i), "v")
		if i%3 == 0 {
			b.ExpiresAt = clock.Now().Add(time.Duration(1+i%2) * time.Minute).UnixNano()
		}
		batch = append(batch, b)
	}
	require.NoError(t, s.PutBatch(ctx, batch))
	n, err := s.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing has expired yet")

	clock.Advance(time.Minute)
	n, err = s.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 417, n, "i%3==0 and i%2==0: every sixth")
	clock.Advance(time.Minute)
	n, err = s.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 417, n)
	n, err = s.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "a second purge finds nothing")
	st := s.Stats()
	require.Equal(t, int64(2500-834), st.Entries)
	require.Equal(t, int64(834), st.Expired)
}
