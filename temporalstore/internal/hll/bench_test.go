package hll

import (
	"strconv"
	"testing"
)

func benchElems(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte("element:" + strconv.Itoa(i))
	}
	return out
}

// Adding to a sparse sketch (kept below promotion) and to a dense one.
func BenchmarkAdd(b *testing.B) {
	for _, tc := range []struct {
		name  string
		dense bool
		n     int
	}{{"sparse", false, 300}, {"dense", true, 100_000}} {
		b.Run(tc.name, func(b *testing.B) {
			es := benchElems(tc.n)
			s := New()
			if tc.dense {
				_ = s.ToDense()
			}
			i := 0
			for b.Loop() {
				if i == len(es) {
					// Start over, so that a sparse sketch stays sparse.
					i, s = 0, New()
					if tc.dense {
						_ = s.ToDense()
					}
				}
				_, _ = s.Add(es[i])
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/add")
			b.ReportMetric(float64(len(s.Bytes())), "bytes")
		})
	}
}

// Counting (the estimator over the registers) of a sparse and a dense
// sketch, and of a union.
func BenchmarkCount(b *testing.B) {
	sparse, dense := New(), New()
	for _, e := range benchElems(300) {
		_, _ = sparse.Add(e)
	}
	for _, e := range benchElems(100_000) {
		_, _ = dense.Add(e)
	}
	regs, _, _ := Union([][]byte{sparse.Bytes(), dense.Bytes()})
	for _, tc := range []struct {
		name  string
		count func() (uint64, error)
	}{
		{"sparse", sparse.Count},
		{"dense", dense.Count},
		{"union", func() (uint64, error) { return regs.Count(), nil }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var n uint64
			for b.Loop() {
				n, _ = tc.count()
			}
			b.ReportMetric(float64(n), "cardinality")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "µs/count")
		})
	}
}
