package object

import (
	"fmt"
	"testing"
)

// An aggregate over a 10,000-point series (one point a second, about 2.8
// hours), whole window: the rollup ladder against a scan of the points.
func BenchmarkAggregate10k(b *testing.B) {
	s := New(KindSeries, []byte("b")).Series
	const n = 10_000
	for i := range n {
		s.Upsert(int64(i)*1000+137, []byte(fmt.Sprint(i%97)))
	}
	start, end := int64(0), int64(n)*1000
	want := s.ScanAggregate(start, end)
	for _, tc := range []struct {
		name string
		fn   func(int64, int64) Agg
	}{{"rollup", s.Aggregate}, {"scan", s.ScanAggregate}} {
		b.Run(tc.name, func(b *testing.B) {
			if got := tc.fn(start, end); got != want {
				b.Fatalf("%+v, want %+v", got, want)
			}
			for b.Loop() {
				tc.fn(start, end)
			}
			b.ReportMetric(n, "points/op")
		})
	}
}
