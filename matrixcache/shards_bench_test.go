package matrixcache

import (
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"math/rand/v2"
	"testing"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// BenchmarkShardCount is the shard-count sweep behind the guidance in
// Options.Shards: a DRAM-only cache of 16,384 64-byte values, filled and
// read so its entries are protected, then driven by four goroutines either
// reading resident keys or writing a set of 1,024 new keys. It reports
// ns/op, and for writes the evictions and admission refusals per write.
func BenchmarkShardCount(b *testing.B) {
	const entries, writeSet = 16384, 1024
	keys := make([]blockfmt.Key, entries+writeSet)
	for i := range keys {
		keys[i] = cachekey.String(0, fmt.Sprintf("key-%06d", i))
	}
	value := make([]byte, 64)
	for _, shards := range []int{1, 16, 64, 256, 1024} {
		setup := func(b *testing.B) *Cache {
			c := benchCache(b, Options{
				SSDCapacityBytes:  Disabled,
				DRAMCapacityBytes: entries * entryCost(keys[0], len(value)),
				Shards:            shards,
				MaxDRAMBlockBytes: 1024,
			})
			ctx := b.Context()
			for _, k := range keys[:entries] {
				if err := c.Put(ctx, k, value, PutOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			for range 2 {
				for _, k := range keys[:entries] {
					_, _, _, _ = c.GetShared(ctx, k)
				}
			}
			return c
		}
		b.Run(fmt.Sprintf("shards=%d/read", shards), func(b *testing.B) {
			c := setup(b)
			ctx := b.Context()
			b.SetParallelism(2) // four goroutines on two cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				r := rand.New(rand.NewPCG(rand.Uint64(), 1))
				for pb.Next() {
					_, _, _, _ = c.GetShared(ctx, keys[r.IntN(entries)])
				}
			})
		})
		b.Run(fmt.Sprintf("shards=%d/write", shards), func(b *testing.B) {
			c := setup(b)
			ctx := b.Context()
			before := c.Stats()
			b.SetParallelism(2)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				r := rand.New(rand.NewPCG(rand.Uint64(), 2))
				for pb.Next() {
					if err := c.Put(ctx, keys[entries+r.IntN(writeSet)], value, PutOptions{}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			st := c.Stats()
			writes := float64(st.DRAM.Puts - before.DRAM.Puts + st.DRAMAdmissionRejected - before.DRAMAdmissionRejected)
			b.ReportMetric(float64(st.DRAM.Evictions-before.DRAM.Evictions)/writes, "evictions/write")
			b.ReportMetric(float64(st.DRAMAdmissionRejected-before.DRAMAdmissionRejected)/writes, "refusals/write")
			b.ReportMetric(float64(entries)/float64(shards), "entries/shard")
		})
	}
}
