package wal

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkAppend measures Append at several payload sizes, concurrencies
// and sync policies. Peers are compared in tools/bench; this is the
// in-module micro-benchmark.
func BenchmarkAppend(b *testing.B) {
	for _, policy := range []SyncPolicy{SyncAlways, SyncInterval} {
		for _, size := range []int{0, 256, 4096} {
			for _, conc := range []int{1, 64} {
				b.Run(fmt.Sprintf("%s/%dB/c%d", policy, size, conc), func(b *testing.B) {
					l, err := Open(b.TempDir(), Options{Sync: policy})
					if err != nil {
						b.Fatal(err)
					}
					defer l.Close()
					data := payload(1, size, false)
					ctx := b.Context()
					b.SetBytes(int64(size))
					b.ReportAllocs()
					if conc == 1 {
						for b.Loop() {
							if _, err := l.Append(ctx, data); err != nil {
								b.Fatal(err)
							}
						}
					} else {
						var left atomic.Int64
						left.Store(int64(b.N))
						var wg sync.WaitGroup
						b.ResetTimer()
						for range conc {
							wg.Go(func() {
								for left.Add(-1) >= 0 {
									if _, err := l.Append(ctx, data); err != nil {
										b.Error(err)
										return
									}
								}
							})
						}
						wg.Wait()
					}
					st := l.Stats()
					b.ReportMetric(st.RecordsPerFsync, "records/fsync")
					b.ReportMetric(float64(st.FsyncLatency.Quantile(0.99).Microseconds()), "fsync-p99-µs")
				})
			}
		}
	}
}
