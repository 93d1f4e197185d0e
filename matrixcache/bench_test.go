package matrixcache

import (
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

func benchKeys(n int) []blockfmt.Key {
	keys := make([]blockfmt.Key, n)
	for i := range keys {
		keys[i] = cachekey.String(uint64(i%4), fmt.Sprintf("record-%06d", i))
	}
	return keys
}

func benchCache(b *testing.B, opts Options) *Cache {
	b.Helper()
	if opts.SSDCapacityBytes != Disabled && opts.SSDPath == "" {
		opts.SSDPath = b.TempDir()
	}
	c, err := New(b.Context(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return c
}

// BenchmarkGetDRAMHit reads 1,024 resident 256-byte values.
func BenchmarkGetDRAMHit(b *testing.B) {
	c := benchCache(b, Options{SSDCapacityBytes: Disabled})
	ctx := b.Context()
	keys := benchKeys(1024)
	value := make([]byte, 256)
	for _, k := range keys {
		if err := c.Put(ctx, k, value, PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(value)))
	i := 0
	for b.Loop() {
		if _, _, ok, _ := c.GetShared(ctx, keys[i&1023]); !ok {
			b.Fatal("miss")
		}
		i++
	}
}

// BenchmarkGetDRAMHitParallel is BenchmarkGetDRAMHit from GOMAXPROCS
// goroutines over 16 shards.
func BenchmarkGetDRAMHitParallel(b *testing.B) {
	c := benchCache(b, Options{SSDCapacityBytes: Disabled})
	ctx := b.Context()
	keys := benchKeys(1024)
	for _, k := range keys {
		if err := c.Put(ctx, k, make([]byte, 256), PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(rand.Uint64(), 1))
		for pb.Next() {
			_, _, _, _ = c.GetShared(ctx, keys[r.IntN(len(keys))])
		}
	})
}

// BenchmarkPut writes 256-byte values over 4,096 keys into a DRAM tier that
// holds a quarter of them, with the SSD tier off, written through (unsynced)
// and written back.
func BenchmarkPut(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts Options
	}{
		{"dram-only", Options{SSDCapacityBytes: Disabled}},
		{"write-through-nosync", Options{SSDNoSync: true}},
		{"write-back-nosync", Options{SSDNoSync: true, WriteBack: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			opts := bc.opts
			opts.DRAMCapacityBytes = 1024 * 300
			opts.Shards = 4
			c := benchCache(b, opts)
			ctx := b.Context()
			keys := benchKeys(4096)
			value := make([]byte, 256)
			b.ReportAllocs()
			b.SetBytes(int64(len(value)))
			i := 0
			for b.Loop() {
				if err := c.Put(ctx, keys[i&4095], value, PutOptions{}); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.StopTimer()
			_ = c.Flush(ctx)
			st := c.Stats()
			b.ReportMetric(float64(st.DRAM.Evictions)/float64(i), "evictions/op")
		})
	}
}

// BenchmarkPutOverwrite rewrites 65,536 resident 64-byte values in a
// shuffled order: every Put replaces a DRAM entry and evicts nothing, the
// common write of a cache that holds its working set.
func BenchmarkPutOverwrite(b *testing.B) {
	const n = 1 << 16
	c := benchCache(b, Options{SSDCapacityBytes: Disabled, DRAMCapacityBytes: 4 * n * 128})
	ctx := b.Context()
	keys := make([]blockfmt.Key, n)
	value := make([]byte, 64)
	for i := range keys {
		keys[i] = cachekey.String(0, fmt.Sprintf("key-%06d", i))
		require.NoError(b, c.Put(ctx, keys[i], value, PutOptions{}))
	}
	order := rand.New(rand.NewPCG(1, 2)).Perm(n)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := c.Put(ctx, keys[order[i&(n-1)]], value, PutOptions{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.StopTimer()
	require.Equal(b, int64(0), c.Stats().DRAM.Evictions, "every key stays resident")
}

// BenchmarkZipfGet reads a Zipf-distributed key set four times larger than
// DRAM, over an SSD tier that holds every key, and reports the share of
// reads DRAM answered.
func BenchmarkZipfGet(b *testing.B) {
	for _, pol := range []string{"tinylfu", "slru"} {
		b.Run(pol, func(b *testing.B) {
			c := benchCache(b, Options{DRAMCapacityBytes: 1024 * 300, Shards: 4, SSDNoSync: true, Policy: pol})
			ctx := b.Context()
			keys := benchKeys(4096)
			value := make([]byte, 256)
			items := make([]Item, 0, len(keys))
			for _, k := range keys {
				items = append(items, Item{Key: k, Value: value})
			}
			if err := c.PutBatch(ctx, items); err != nil {
				b.Fatal(err)
			}
			before := c.Stats()
			z := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), 1.1, 1, uint64(len(keys)-1))
			b.ReportAllocs()
			for b.Loop() {
				_, _, _, _ = c.Get(ctx, keys[z.Uint64()])
			}
			b.StopTimer()
			st := c.Stats()
			hits := st.DRAM.Hits - before.DRAM.Hits
			gets := hits + st.DRAM.Misses - before.DRAM.Misses
			b.ReportMetric(100*float64(hits)/float64(gets), "dram-hit%")
		})
	}
}

// BenchmarkGetZipfParallel reads 65,536 resident 64-byte values with Zipf
// (s=1.0001) keys from 2 and 8 goroutines, as `bench cache` does, and
// reports the share of hits the policy was told of.
func BenchmarkGetZipfParallel(b *testing.B) {
	for _, readers := range []int{2, 8} {
		b.Run(fmt.Sprint(readers), func(b *testing.B) { benchGetZipfParallel(b, readers) })
	}
}

func benchGetZipfParallel(b *testing.B, readers int) {
	const n = 1 << 16
	c := benchCache(b, Options{SSDCapacityBytes: Disabled, DRAMCapacityBytes: 4 * n * 128})
	ctx := b.Context()
	keys := make([]blockfmt.Key, n)
	for i := range keys {
		keys[i] = cachekey.String(0, fmt.Sprintf("key-%06d", i))
		if err := c.Put(ctx, keys[i], make([]byte, 64), PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.SetParallelism(max(1, readers/runtime.GOMAXPROCS(0)))
	before := c.Stats()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		z := rand.NewZipf(rand.New(rand.NewPCG(rand.Uint64(), 1)), 1.0001, 1, n-1)
		stream := make([]uint32, 1<<14)
		for i := range stream {
			stream[i] = uint32(z.Uint64())
		}
		i := 0
		for pb.Next() {
			if _, _, ok, _ := c.GetShared(ctx, keys[stream[i&(1<<14-1)]]); !ok {
				b.Error("miss")
				return
			}
			i++
		}
	})
	b.StopTimer()
	after := c.Stats()
	b.ReportMetric(float64(after.DRAMHitsToPolicy-before.DRAMHitsToPolicy)/float64(after.DRAM.Hits-before.DRAM.Hits), "to-policy/hit")
}
