package residenttier

import (
	"bytes"
	"context"
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/internal/fakeclock"
)

func openStore(t testing.TB, opts Options) *Store {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	s, err := Open(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func reopen(t testing.TB, s *Store, opts Options) *Store {
	t.Helper()
	require.NoError(t, s.Close())
	opts.Dir = s.Path()
	return openStore(t, opts)
}

func blk(shard uint64, record string, value string) blockfmt.Block {
	return blockfmt.NewBlock(cachekey.String(shard, record), []byte(value))
}

func pathOf(s *Store, k blockfmt.Key) string {
	return s.filePath(xxhash.Sum64(blockfmt.AppendOrderedKey(nil, k)))
}

func requireValue(t *testing.T, s *Store, k blockfmt.Key, want string) {
	t.Helper()
	b, ok, err := s.Get(k)
	require.NoError(t, err)
	require.True(t, ok, "%v", k)
	require.Equal(t, want, string(b.Value))
	require.Equal(t, k, b.Key)
}

func requireMissing(t *testing.T, s *Store, k blockfmt.Key) {
	t.Helper()
	_, ok, err := s.Get(k)
	require.NoError(t, err)
	require.False(t, ok, "%v", k)
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"zero values with a dir", Options{Dir: "x"}, true},
		{"no dir", Options{}, false},
		{"negative capacity", Options{Dir: "x", CapacityBytes: -1}, false},
		{"bad block options", Options{Dir: "x", Block: blockfmt.Options{MinCompressBytes: -1}}, false},
		{"everything set", Options{Dir: "x", CapacityBytes: 1 << 20, Sync: true, Mmap: true,
			Block: blockfmt.Options{Compression: blockfmt.CompressionZstd}}, true},
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

func TestPutGet(t *testing.T) {
	for _, opts := range []Options{
		{},
		{Sync: true},
		{Mmap: true},
		{Block: blockfmt.Options{Compression: blockfmt.CompressionZstd}},
		{Mmap: true, Block: blockfmt.Options{Compression: blockfmt.CompressionZstd}},
	} {
		t.Run(fmt.Sprintf("sync=%v/mmap=%v/%v", opts.Sync, opts.Mmap, opts.Block.Compression), func(t *testing.T) {
			s := openStore(t, opts)
			ctx := t.Context()
			big := string(bytes.Repeat([]byte("abcdefgh"), 1000))
			tests := []struct {
				record, value string
			}{{"a", "1"}, {"b", ""}, {"c", big}, {"a", "2"}, {"c", "3" + big}}
			want := map[string]string{}
			for _, tt := range tests {
				require.NoError(t, s.Put(ctx, blk(1, tt.record, tt.value)))
				want[tt.record] = tt.value
			}
			for r, v := range want {
				requireValue(t, s, cachekey.String(1, r), v)
			}
			requireMissing(t, s, cachekey.String(2, "a"))
			st := s.Stats()
			require.Equal(t, int64(3), st.Entries)
			require.Equal(t, int64(len(tests)), st.Puts)
			require.Equal(t, int64(3), st.Hits)
			require.Equal(t, int64(1), st.Misses)
			if opts.Sync {
				require.Equal(t, int64(2*len(tests)), st.Fsyncs)
			} else {
				require.Zero(t, st.Fsyncs)
			}

			// The file is where the package documentation says.
			k := cachekey.String(1, "a")
			h := xxhash.Sum64(blockfmt.AppendOrderedKey(nil, k))
			data, err := os.ReadFile(filepath.Join(s.Path(), fmt.Sprintf("%02x", h>>56), fmt.Sprintf("%016x.cache_block", h)))
			require.NoError(t, err)
			b, err := blockfmt.Decode(data)
			require.NoError(t, err)
			require.Equal(t, "2", string(b.Value))

			// PutBatch: a later block of a key wins.
			require.NoError(t, s.PutBatch(ctx, []blockfmt.Block{blk(1, "d", "x"), blk(1, "e", "y"), blk(1, "d", "z")}))
			requireValue(t, s, cachekey.String(1, "d"), "z")
			requireValue(t, s, cachekey.String(1, "e"), "y")

			// Survives a reopen, index rebuilt.
			before := s.Stats()
			s = reopen(t, s, opts)
			after := s.Stats()
			require.Equal(t, before.Entries, after.Entries)
			require.Equal(t, before.Bytes, after.Bytes)
			for r, v := range map[string]string{"a": "2", "b": "", "c": "3" + big, "d": "z", "e": "y"} {
				requireValue(t, s, cachekey.String(1, r), v)
			}
		})
	}
}

func TestTooLarge(t *testing.T) {
	s := openStore(t, Options{CapacityBytes: 1024})
	err := s.Put(t.Context(), blk(1, "a", string(make([]byte, 2048))))
	require.ErrorIs(t, err, ErrTooLarge)
	// A batch with one block that can never be stored writes nothing.
	err = s.PutBatch(t.Context(), []blockfmt.Block{blk(1, "b", "ok"), blk(1, "a", string(make([]byte, 2048)))})
	require.ErrorIs(t, err, ErrTooLarge)
	requireMissing(t, s, cachekey.String(1, "b"))
}

func TestTTL(t *testing.T) {
	clk := fakeclock.New()
	opts := Options{Clock: clk}
	s := openStore(t, opts)
	ctx := t.Context()
	at := func(d time.Duration) int64 { return clk.Now().Add(d).UnixNano() }

	short, long, never := blk(1, "short", "s"), blk(1, "long", "l"), blk(1, "never", "n")
	short.ExpiresAt, long.ExpiresAt = at(time.Minute), at(time.Hour)
	require.NoError(t, s.PutBatch(ctx, []blockfmt.Block{short, long, never}))
	requireValue(t, s, short.Key, "s")

	// Expired: a miss, and the file is gone.
	clk.Advance(2 * time.Minute)
	requireMissing(t, s, short.Key)
	require.NoFileExists(t, pathOf(s, short.Key))
	require.Equal(t, int64(1), s.Stats().Expired)

	// Writing an already expired block deletes the key.
	gone := blk(1, "never", "n2")
	gone.ExpiresAt = at(-time.Second)
	require.NoError(t, s.Put(ctx, gone))
	requireMissing(t, s, never.Key)
	require.NoError(t, s.Put(ctx, never))

	// After a reopen with the clock past the expiry, Open drops the block.
	s = reopen(t, s, opts)
	requireValue(t, s, long.Key, "l")
	clk.Advance(2 * time.Hour)
	s = reopen(t, s, opts)
	require.Equal(t, int64(1), s.Stats().Expired)
	require.Equal(t, int64(1), s.Stats().Entries)
	requireMissing(t, s, long.Key)
	requireValue(t, s, never.Key, "n")

	// PurgeExpired removes what expired without reading it.
	var bs []blockfmt.Block
	for i := range 10 {
		b := blk(2, fmt.Sprint(i), "v")
		b.ExpiresAt = at(time.Duration(i+1) * time.Minute)
		bs = append(bs, b)
	}
	require.NoError(t, s.PutBatch(ctx, bs))
	clk.Advance(5*time.Minute + time.Second)
	n, err := s.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 5, n)
	require.Equal(t, int64(6), s.Stats().Entries)

	// Iterate skips expired blocks.
	clk.Advance(2 * time.Minute)
	var seen []string
	require.NoError(t, s.Iterate(ctx, func(b blockfmt.Block) bool {
		seen = append(seen, b.Key.Record)
		return true
	}))
	require.Equal(t, []string{"never", "7", "8", "9"}, seen)
}

func TestInvalidation(t *testing.T) {
	s := openStore(t, Options{Sync: true})
	ctx := t.Context()
	for shard := range uint64(3) {
		for _, r := range []string{"user:1", "user:10", "user:2", "order:1", "us"} {
			require.NoError(t, s.Put(ctx, blk(shard, r, r)))
		}
		require.NoError(t, s.Put(ctx, blockfmt.NewBlock(cachekey.Hash(shard, "user:1", "f"), []byte("h"))))
	}
	tests := []struct {
		name    string
		do      func() (int, error)
		n       int
		gone    []blockfmt.Key
		staying []blockfmt.Key
	}{
		{"key", func() (int, error) {
			ok, err := s.Delete(ctx, cachekey.String(0, "us"))
			return map[bool]int{true: 1}[ok], err
		}, 1, []blockfmt.Key{cachekey.String(0, "us")}, []blockfmt.Key{cachekey.String(1, "us"), cachekey.String(0, "user:1")}},
		{"absent key", func() (int, error) {
			ok, err := s.Delete(ctx, cachekey.String(0, "us"))
			return map[bool]int{true: 1}[ok], err
		}, 0, nil, nil},
		{"prefix", func() (int, error) { return s.DeletePrefix(ctx, 1, "user:1") }, 3,
			[]blockfmt.Key{cachekey.String(1, "user:1"), cachekey.String(1, "user:10"), cachekey.Hash(1, "user:1", "f")},
			[]blockfmt.Key{cachekey.String(1, "user:2"), cachekey.String(1, "us"), cachekey.String(0, "user:1"), cachekey.String(2, "user:10")}},
		{"shard", func() (int, error) { return s.DeleteShard(ctx, 2) }, 6,
			[]blockfmt.Key{cachekey.String(2, "user:1"), cachekey.String(2, "order:1")},
			[]blockfmt.Key{cachekey.String(0, "order:1"), cachekey.String(1, "order:1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := tt.do()
			require.NoError(t, err)
			require.Equal(t, tt.n, n)
			for _, k := range tt.gone {
				requireMissing(t, s, k)
				require.NoFileExists(t, pathOf(s, k))
			}
			for _, k := range tt.staying {
				_, ok, err := s.Get(k)
				require.NoError(t, err)
				require.True(t, ok, "%v", k)
			}
		})
	}
	require.Equal(t, int64(10), s.Stats().Deletes)
	// Invalidated blocks do not come back after a reopen.
	s = reopen(t, s, Options{})
	require.Equal(t, int64(18-10), s.Stats().Entries)
	requireMissing(t, s, cachekey.String(2, "order:1"))

	// Clear removes the rest, files included, and nothing comes back.
	n, err := s.Clear(ctx)
	require.NoError(t, err)
	require.Equal(t, 8, n)
	requireMissing(t, s, cachekey.String(0, "order:1"))
	require.NoFileExists(t, pathOf(s, cachekey.String(0, "order:1")))
	s = reopen(t, s, Options{})
	require.Zero(t, s.Stats().Entries)
}

func TestEvictionOrder(t *testing.T) {
	one := blk(0, "k00", "0123456789")
	enc, err := blockfmt.Encode(nil, one, blockfmt.Options{})
	require.NoError(t, err)
	size := int64(len(enc))
	s := openStore(t, Options{CapacityBytes: 4 * size})
	ctx := t.Context()
	key := func(i int) blockfmt.Key { return cachekey.String(0, fmt.Sprintf("k%02d", i)) }
	put := func(i int) { require.NoError(t, s.Put(ctx, blockfmt.NewBlock(key(i), []byte("0123456789")))) }
	for i := range 4 {
		put(i)
	}
	require.Equal(t, 4*size, s.Stats().Bytes)
	requireValue(t, s, key(0), "0123456789") // 0 is now the most recent
	put(4)                                   // evicts 1
	put(5)                                   // evicts 2
	require.Equal(t, int64(2), s.Stats().Evictions)
	require.LessOrEqual(t, s.Stats().Bytes, 4*size)
	for _, tt := range []struct {
		i  int
		ok bool
	}{{0, true}, {1, false}, {2, false}, {3, true}, {4, true}, {5, true}} {
		_, ok, err := s.Get(key(tt.i))
		require.NoError(t, err)
		require.Equal(t, tt.ok, ok, "key %d", tt.i)
		if !tt.ok {
			require.NoFileExists(t, pathOf(s, key(tt.i)))
		}
	}

	// A smaller capacity at reopen evicts the coldest blocks, least
	// recently written first within a hotness.
	s = reopen(t, s, Options{CapacityBytes: 2 * size})
	require.Equal(t, int64(2), s.Stats().Entries)
	require.Equal(t, int64(2), s.Stats().Evictions)
	requireMissing(t, s, key(0))
	requireMissing(t, s, key(3))
	requireValue(t, s, key(4), "0123456789")
	requireValue(t, s, key(5), "0123456789")
}

func TestCorruptFiles(t *testing.T) {
	s := openStore(t, Options{})
	ctx := t.Context()
	keys := []blockfmt.Key{cachekey.String(1, "flip"), cachekey.String(1, "cut"), cachekey.String(1, "empty"), cachekey.String(1, "ok")}
	for _, k := range keys {
		require.NoError(t, s.Put(ctx, blockfmt.NewBlock(k, []byte("value of "+k.Record))))
	}
	damage := map[string]func([]byte) []byte{
		"flip":  func(b []byte) []byte { b[len(b)-1] ^= 1; return b },
		"cut":   func(b []byte) []byte { return b[:len(b)-3] },
		"empty": func([]byte) []byte { return nil },
	}
	for _, k := range keys[:3] {
		p := pathOf(s, k)
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, damage[k.Record](data), 0o600))
	}

	// Read at Get: an error wrapping ErrCorrupt, a miss, counted, removed.
	_, ok, err := s.Get(keys[0])
	require.ErrorIs(t, err, blockfmt.ErrCorrupt)
	require.False(t, ok)
	require.Equal(t, int64(1), s.Stats().Corrupt)
	require.NoFileExists(t, pathOf(s, keys[0]))
	requireMissing(t, s, keys[0])

	// The others are found at Open, along with leftover temp files and a
	// block file in the wrong place.
	require.NoError(t, s.Close())
	ok1 := pathOf(s, keys[3])
	data, err := os.ReadFile(ok1)
	require.NoError(t, err)
	wrong := filepath.Join(filepath.Dir(ok1), "0000000000000001.cache_block")
	require.NoError(t, os.WriteFile(wrong, data, 0o600))
	tmp := ok1 + ".12345.tmp"
	require.NoError(t, os.WriteFile(tmp, data[:10], 0o600))
	foreign := filepath.Join(s.Path(), "00", "README")
	require.NoError(t, os.WriteFile(foreign, []byte("x"), 0o600))

	s = openStore(t, Options{Dir: s.Path()})
	st := s.Stats()
	require.Equal(t, int64(3), st.Corrupt)
	require.Equal(t, int64(1), st.TempFilesRemoved)
	require.Equal(t, int64(1), st.Entries)
	require.NoFileExists(t, tmp)
	require.NoFileExists(t, wrong)
	require.FileExists(t, foreign)
	requireValue(t, s, keys[3], "value of ok")
	for _, k := range keys[:3] {
		requireMissing(t, s, k)
	}
}

// TestHashCollision plants a block of one key in the file of another, as
// a collision of their hashes would: reads of the other key miss, and a
// write of it replaces the block.
func TestHashCollision(t *testing.T) {
	s := openStore(t, Options{})
	ctx := t.Context()
	a, b := cachekey.String(1, "a"), cachekey.String(1, "b")
	require.NoError(t, s.Put(ctx, blockfmt.NewBlock(a, []byte("A"))))
	ha := xxhash.Sum64(blockfmt.AppendOrderedKey(nil, a))
	// Pretend b hashes like a: its index lookup finds a's entry, whose key
	// does not match.
	s.mu.Lock()
	require.Nil(t, s.idx.get(ha, blockfmt.AppendOrderedKey(nil, b)))
	s.mu.Unlock()
	// The file of a, read as b: the stored key does not match.
	data, err := os.ReadFile(s.filePath(ha))
	require.NoError(t, err)
	got, err := decodeView(data)
	require.NoError(t, err)
	require.NotEqual(t, b, got.Key)
	// A collision replacing the file is a plain replacement in the index.
	s.mu.Lock()
	s.idx.put(ha, string(blockfmt.AppendOrderedKey(nil, b)), 10, 0)
	require.Equal(t, 1, s.idx.len())
	require.Nil(t, s.idx.get(ha, blockfmt.AppendOrderedKey(nil, a)))
	s.mu.Unlock()
	requireMissing(t, s, a)
}

func TestLocked(t *testing.T) {
	s := openStore(t, Options{})
	_, err := Open(t.Context(), Options{Dir: s.Path()})
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	_, _, err = s.Get(cachekey.String(1, "a"))
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, s.Put(t.Context(), blk(1, "a", "x")), ErrClosed)
	s2 := openStore(t, Options{Dir: s.Path()})
	require.NoError(t, s2.Close())
}

func TestView(t *testing.T) {
	for _, mmap := range []bool{false, true} {
		t.Run(fmt.Sprintf("mmap=%v", mmap), func(t *testing.T) {
			s := openStore(t, Options{Mmap: mmap})
			ctx := t.Context()
			k := cachekey.Page(1, 2, 0, 4096)
			value := bytes.Repeat([]byte{7}, 4096)
			require.NoError(t, s.Put(ctx, blockfmt.NewBlock(k, value)))
			var seen []byte
			ok, err := s.View(k, func(b blockfmt.Block) error {
				require.Equal(t, k, b.Key)
				seen = bytes.Clone(b.Value)
				// A write of the same key while the old block is viewed
				// replaces the file; the view keeps the old bytes.
				require.NoError(t, s.Put(ctx, blockfmt.NewBlock(k, bytes.Repeat([]byte{8}, 4096))))
				require.Equal(t, value, b.Value)
				return nil
			})
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, value, seen)
			ok, err = s.View(k, func(b blockfmt.Block) error { return fmt.Errorf("stop") })
			require.True(t, ok)
			require.EqualError(t, err, "stop")
			ok, err = s.View(cachekey.Page(1, 3, 0, 1), func(blockfmt.Block) error { panic("called") })
			require.NoError(t, err)
			require.False(t, ok)
			// Damaged while mapped-read: never a value.
			p := pathOf(s, k)
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			data[100] ^= 0xff
			require.NoError(t, os.WriteFile(p, data, 0o600))
			ok, err = s.View(k, func(blockfmt.Block) error { panic("called") })
			require.ErrorIs(t, err, blockfmt.ErrCorrupt)
			require.False(t, ok)
			// Get with Mmap returns memory of its own.
			require.NoError(t, s.Put(ctx, blockfmt.NewBlock(k, value)))
			b, ok, err := s.Get(k)
			require.NoError(t, err)
			require.True(t, ok)
			require.NoError(t, s.Put(ctx, blockfmt.NewBlock(k, []byte("x"))))
			require.Equal(t, value, b.Value)
		})
	}
}

func TestIterateOrderAndStop(t *testing.T) {
	s := openStore(t, Options{})
	ctx := t.Context()
	for _, r := range []string{"c", "a", "b"} {
		require.NoError(t, s.Put(ctx, blk(2, r, r)))
		require.NoError(t, s.Put(ctx, blk(1, r, r)))
	}
	var seen []string
	require.NoError(t, s.Iterate(ctx, func(b blockfmt.Block) bool {
		seen = append(seen, fmt.Sprintf("%d%s", b.Key.Shard, b.Value))
		return len(seen) < 4
	}))
	require.Equal(t, []string{"1a", "1b", "1c", "2a"}, seen)
}

func TestConcurrent(t *testing.T) {
	for _, opts := range []Options{{CapacityBytes: 64 << 10}, {CapacityBytes: 64 << 10, Mmap: true}} {
		t.Run(fmt.Sprintf("mmap=%v", opts.Mmap), func(t *testing.T) {
			s := openStore(t, opts)
			ctx := t.Context()
			value := func(k blockfmt.Key, v int) []byte {
				return []byte(fmt.Sprintf("%s=%d;%s", k.Record, v, bytes.Repeat([]byte{'x'}, v%700)))
			}
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					for i := range 400 {
						k := cachekey.String(uint64(i%3), fmt.Sprintf("k%d", (i*7+w)%50))
						switch i % 10 {
						case 0:
							_, err := s.Delete(ctx, k)
							require.NoError(t, err)
						case 1:
							_, err := s.DeletePrefix(ctx, k.Shard, "k1")
							require.NoError(t, err)
						case 2, 3, 4:
							require.NoError(t, s.Put(ctx, blockfmt.NewBlock(k, value(k, i))))
						case 5:
							require.NoError(t, s.Iterate(ctx, func(b blockfmt.Block) bool {
								require.Contains(t, string(b.Value), b.Key.Record+"=")
								return true
							}))
						default:
							ok, err := s.View(k, func(b blockfmt.Block) error {
								require.Equal(t, k, b.Key)
								require.True(t, bytes.HasPrefix(b.Value, []byte(k.Record+"=")), "%q", b.Value)
								return nil
							})
							require.NoError(t, err)
							_ = ok
						}
					}
				})
			}
			wg.Wait()
			st := s.Stats()
			require.LessOrEqual(t, st.Bytes, st.CapacityBytes)
			require.Zero(t, st.Corrupt)
			// The index matches the files.
			s = reopen(t, s, opts)
			st2 := s.Stats()
			require.Equal(t, st.Entries, st2.Entries)
			require.Equal(t, st.Bytes, st2.Bytes)
			require.Zero(t, st2.Corrupt)
		})
	}
}

func TestOnEvict(t *testing.T) {
	clk := fakeclock.New()
	one := blk(0, "k00", "0123456789")
	enc, err := blockfmt.Encode(nil, one, blockfmt.Options{})
	require.NoError(t, err)
	size := int64(len(enc))
	for _, mmap := range []bool{false, true} {
		t.Run(fmt.Sprintf("mmap=%v", mmap), func(t *testing.T) {
			var (
				s       *Store
				evicted []string
			)
			s = openStore(t, Options{CapacityBytes: 3 * size, Mmap: mmap, Clock: clk, OnEvict: func(b blockfmt.Block) {
				evicted = append(evicted, b.Key.Record+"="+string(b.Value))
				// The store is usable from the callback, and the block is gone.
				_, ok, err := s.Get(b.Key)
				require.NoError(t, err)
				require.False(t, ok)
			}})
			ctx := t.Context()
			key := func(i int) blockfmt.Key { return cachekey.String(0, fmt.Sprintf("k%02d", i)) }
			for i := range 3 {
				b := blockfmt.NewBlock(key(i), []byte(fmt.Sprintf("%010d", i)))
				if i == 1 {
					b.ExpiresAt = clk.Now().Add(time.Minute).UnixNano()
				}
				require.NoError(t, s.Put(ctx, b))
			}
			clk.Advance(2 * time.Minute)
			for i := 3; i < 6; i++ {
				require.NoError(t, s.Put(ctx, blockfmt.NewBlock(key(i), []byte(fmt.Sprintf("%010d", i)))))
			}
			// k01 had expired: evicted, but not handed over.
			require.Equal(t, []string{"k00=0000000000", "k02=0000000002"}, evicted)
			require.Equal(t, int64(3), s.Stats().Evictions)
		})
	}
}

func TestCancelledContext(t *testing.T) {
	s := openStore(t, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, s.Put(ctx, blk(1, "a", "x")), context.Canceled)
	require.ErrorIs(t, s.PutBatch(ctx, []blockfmt.Block{blk(1, "a", "x")}), context.Canceled)
	_, err := s.Delete(ctx, cachekey.String(1, "a"))
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, s.Iterate(ctx, func(blockfmt.Block) bool { return true }), context.Canceled)
	_, err = s.DeleteShard(ctx, 1)
	require.ErrorIs(t, err, context.Canceled)
	requireMissing(t, s, cachekey.String(1, "a"))
}

// TestEveryByteDamaged flips each byte of a block file in turn: a read
// must report corruption (a newer format version, for the version byte),
// count it and remove the file, and never return a value.
func TestEveryByteDamaged(t *testing.T) {
	for _, opts := range []Options{{}, {Mmap: true}, {Block: blockfmt.Options{Compression: blockfmt.CompressionZstd, MinCompressBytes: 1}}} {
		t.Run(fmt.Sprintf("mmap=%v/%v", opts.Mmap, opts.Block.Compression), func(t *testing.T) {
			s := openStore(t, opts)
			ctx := t.Context()
			k := cachekey.Hash(3, "rec", "field")
			value := []byte(strings.Repeat("value-", 20))
			require.NoError(t, s.Put(ctx, blockfmt.NewBlock(k, value)))
			p := pathOf(s, k)
			good, err := os.ReadFile(p)
			require.NoError(t, err)
			for i := range good {
				require.NoError(t, s.Put(ctx, blockfmt.NewBlock(k, value)))
				bad := bytes.Clone(good)
				bad[i] ^= 0x5a
				require.NoError(t, os.WriteFile(p, bad, 0o600))
				b, ok, err := s.Get(k)
				require.False(t, ok, "byte %d", i)
				if i == 4 { // the format version byte
					require.ErrorIs(t, err, blockfmt.ErrUnsupportedVersion)
				} else {
					require.ErrorIs(t, err, blockfmt.ErrCorrupt, "byte %d", i)
				}
				require.Nil(t, b.Value)
			}
			require.Equal(t, int64(len(good)), s.Stats().Corrupt)
		})
	}
}

func TestOpenCancelledReleasesLock(t *testing.T) {
	s := openStore(t, Options{})
	require.NoError(t, s.Put(t.Context(), blk(1, "a", "x")))
	require.NoError(t, s.Close())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := Open(ctx, Options{Dir: s.Path()})
	require.ErrorIs(t, err, context.Canceled)
	s = openStore(t, Options{Dir: s.Path()})
	requireValue(t, s, cachekey.String(1, "a"), "x")
}

func TestSyncedDeletes(t *testing.T) {
	s := openStore(t, Options{Sync: true})
	ctx := t.Context()
	require.NoError(t, s.PutBatch(ctx, []blockfmt.Block{blk(1, "a", "x"), blk(1, "b", "y"), blk(2, "c", "z")}))
	require.Equal(t, int64(6), s.Stats().Fsyncs) // file and directory per block
	ok, err := s.Delete(ctx, cachekey.String(1, "a"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(7), s.Stats().Fsyncs) // the directory
	n, err := s.DeleteShard(ctx, 2)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, int64(8), s.Stats().Fsyncs)
}
