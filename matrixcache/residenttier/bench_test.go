package residenttier

import (
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"sync/atomic"
	"testing"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// BenchmarkPut measures Put of 4 KiB blocks, durable (Sync) and not: one
// file written and renamed per block, plus 2 fsyncs with Sync.
func BenchmarkPut(b *testing.B) {
	for _, durable := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v/4KiB", durable), func(b *testing.B) {
			s := openStore(b, Options{Sync: durable})
			value := make([]byte, 4096)
			b.SetBytes(int64(len(value)))
			b.ReportAllocs()
			ctx := b.Context()
			i := uint64(0)
			for b.Loop() {
				i++
				k := cachekey.Page(i%16, i%4096, 0, 4096)
				if err := s.Put(ctx, blockfmt.NewBlock(k, value)); err != nil {
					b.Fatal(err)
				}
			}
			st := s.Stats()
			b.ReportMetric(float64(st.Fsyncs)/float64(max(1, st.Puts)), "fsyncs/put")
		})
	}
}

// BenchmarkGetHit measures Get and View of resident 4 KiB blocks, read
// and mapped; Get copies the value, View with Mmap does not.
func BenchmarkGetHit(b *testing.B) {
	const keys = 1024
	for _, mmap := range []bool{false, true} {
		s := openStore(b, Options{Mmap: mmap})
		value := make([]byte, 4096)
		for i := range uint64(keys) {
			if err := s.Put(b.Context(), blockfmt.NewBlock(cachekey.Page(1, i, 0, 4096), value)); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("get/mmap=%v/4KiB", mmap), func(b *testing.B) {
			b.SetBytes(int64(len(value)))
			b.ReportAllocs()
			i := uint64(0)
			for b.Loop() {
				i++
				if _, ok, err := s.Get(cachekey.Page(1, i%keys, 0, 4096)); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
		b.Run(fmt.Sprintf("view/mmap=%v/4KiB", mmap), func(b *testing.B) {
			b.SetBytes(int64(len(value)))
			b.ReportAllocs()
			i := uint64(0)
			var sum atomic.Int64
			for b.Loop() {
				i++
				ok, err := s.View(cachekey.Page(1, i%keys, 0, 4096), func(bl blockfmt.Block) error {
					sum.Add(int64(bl.Value[len(bl.Value)-1]))
					return nil
				})
				if !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

// BenchmarkOpen measures rebuilding the index of 4,096 resident 4 KiB
// blocks: every file is read and verified.
func BenchmarkOpen(b *testing.B) {
	const keys = 4096
	s := openStore(b, Options{})
	value := make([]byte, 4096)
	for i := range uint64(keys) {
		if err := s.Put(b.Context(), blockfmt.NewBlock(cachekey.Page(1, i, 0, 4096), value)); err != nil {
			b.Fatal(err)
		}
	}
	dir := s.Path()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s, err := Open(b.Context(), Options{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if s.Stats().Entries != keys {
			b.Fatal(s.Stats())
		}
		s.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/keys, "ns/block")
}
