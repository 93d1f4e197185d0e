package ssdtier

import (
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// BenchmarkPut measures Put from many goroutines, durable and not: the
// writer groups them into shared commits, reported as blocks/commit.
func BenchmarkPut(b *testing.B) {
	for _, noSync := range []bool{false, true} {
		for _, size := range []int{256, 4096} {
			for _, conc := range []int{1, 64} {
				name := fmt.Sprintf("durable=%v/%dB/c%d", !noSync, size, conc)
				b.Run(name, func(b *testing.B) {
					s := openStore(b, Options{NoSync: noSync})
					value := make([]byte, size)
					var n atomic.Uint64
					b.SetBytes(int64(size))
					b.ReportAllocs()
					b.SetParallelism(conc)
					ctx := b.Context()
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							i := n.Add(1)
							k := cachekey.Page(i%16, i%4096, 0, uint64(size))
							if err := s.Put(ctx, blockfmt.NewBlock(k, value)); err != nil {
								b.Fatal(err)
							}
						}
					})
					st := s.Stats()
					b.ReportMetric(float64(st.CommittedOps)/float64(max(1, st.Commits)), "blocks/commit")
				})
			}
		}
	}
}

// BenchmarkPutBatch measures PutBatch of 64 blocks per call.
func BenchmarkPutBatch(b *testing.B) {
	s := openStore(b, Options{})
	value := make([]byte, 1024)
	batch := make([]blockfmt.Block, 64)
	b.SetBytes(int64(len(batch) * len(value)))
	b.ReportAllocs()
	i := uint64(0)
	for b.Loop() {
		for j := range batch {
			i++
			batch[j] = blockfmt.NewBlock(cachekey.Page(1, i%8192, 0, 1024), value)
		}
		if err := s.PutBatch(b.Context(), batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/block")
}

// BenchmarkGetHit measures Get of resident blocks.
func BenchmarkGetHit(b *testing.B) {
	for _, opts := range []blockfmt.Options{{}, {Compression: blockfmt.CompressionZstd}} {
		for _, size := range []int{256, 4096} {
			b.Run(fmt.Sprintf("%s/%dB", opts.Compression, size), func(b *testing.B) {
				s := openStore(b, Options{NoSync: true, Block: opts})
				value := make([]byte, size)
				for i := range value {
					value[i] = byte(i / 16)
				}
				const keys = 4096
				var batch []blockfmt.Block
				for i := range keys {
					batch = append(batch, blockfmt.NewBlock(cachekey.Page(1, uint64(i), 0, uint64(size)), value))
				}
				if err := s.PutBatch(b.Context(), batch); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(size))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, ok, err := s.Get(batch[i%keys].Key); err != nil || !ok {
						b.Fatal(ok, err)
					}
					i++
				}
			})
		}
	}
}

// BenchmarkBoltBatchBaseline is the alternative the store's writer was
// measured against: the same durable 256-byte puts
// through bbolt's own db.Batch (default 10 ms delay, 1000 calls), alone
// and from 64 goroutines.
func BenchmarkBoltBatchBaseline(b *testing.B) {
	for _, conc := range []int{1, 64} {
		b.Run(fmt.Sprintf("c%d", conc), func(b *testing.B) {
			s := openStore(b, Options{})
			value := make([]byte, 256)
			var n atomic.Uint64
			b.SetBytes(int64(len(value)))
			b.ReportAllocs()
			b.SetParallelism(conc)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					blk := blockfmt.NewBlock(cachekey.Page(i%16, i%4096, 0, 256), value)
					enc, err := blockfmt.Encode(nil, blk, blockfmt.Options{})
					if err != nil {
						b.Fatal(err)
					}
					key := blockfmt.AppendOrderedKey(nil, blk.Key)
					if err := s.db.Batch(func(tx *bolt.Tx) error { return tx.Bucket(blocksBucket).Put(key, enc) }); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkBudgetAdmit measures the write budget's cost on the write path
// of one block: the share, the key's hash, the decision, and recording an
// admitted block, with the clock moving 1 ms a block so windows close and
// the share narrows.
func BenchmarkBudgetAdmit(b *testing.B) {
	for _, target := range []int64{0, 1 << 20} {
		b.Run(fmt.Sprintf("target=%d", target), func(b *testing.B) {
			now := time.Unix(1_700_000_000, 0)
			bud := newBudget(target, now)
			key := blockfmt.AppendOrderedKey(nil, cachekey.Page(1, 42, 0, 4096))
			n, admitted := 0, 0
			b.ReportAllocs()
			for b.Loop() {
				n++
				key[len(key)-1]++ // another key each time
				now = now.Add(time.Millisecond)
				if admitsKey(key, bud.shareAt(now)) {
					bud.record(now, 4096)
					admitted++
				}
			}
			b.ReportMetric(100*float64(admitted)/float64(n), "admitted%")
		})
	}
}
