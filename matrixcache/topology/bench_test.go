package topology

import (
	"fmt"
	"testing"
)

// benchKeys returns n distinct keys.
func benchKeys(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "table/%d/block/%08d", i%7, i)
	}
	return keys
}

// BenchmarkOwners places 3 copies of a key on 100 nodes in 5 zones.
func BenchmarkOwners(b *testing.B) {
	for _, nodes := range []int{10, 100, 1000} {
		r := mustNew(b, uniform(nodes, 5)...)
		keys := benchKeys(1024)
		b.Run(fmt.Sprintf("nodes=%d/Owners", nodes), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := r.Owners(keys[i%len(keys)], 3); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("nodes=%d/AppendOwners", nodes), func(b *testing.B) {
			b.ReportAllocs()
			dst := make([]NodeID, 0, 3)
			i := 0
			for b.Loop() {
				var err error
				if dst, err = r.AppendOwners(dst[:0], keys[i%len(keys)], 3); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("nodes=%d/Owner", nodes), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := r.Owner(keys[i%len(keys)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkBuild builds a ring of 100 nodes of the given weight.
func BenchmarkBuild(b *testing.B) {
	for _, weight := range []int{1, 4} {
		nodes := uniform(100, 5)
		for i := range nodes {
			nodes[i].Weight = weight
		}
		b.Run(fmt.Sprintf("nodes=100/weight=%d", weight), func(b *testing.B) {
			b.ReportAllocs()
			var r *Ring
			for b.Loop() {
				var err error
				if r, err = New(Options{}, nodes...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(r.PointCount()), "points")
		})
	}
}

// BenchmarkMembershipChange measures a node joining, and a node going down,
// on 100 nodes.
func BenchmarkMembershipChange(b *testing.B) {
	r := mustNew(b, uniform(100, 5)...)
	b.Run("Add", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Add(Node{ID: "joiner", Weight: 1}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SetState", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.SetState("node-42", Down); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDiff plans the handoffs of a node joining 100 nodes.
func BenchmarkDiff(b *testing.B) {
	r := mustNew(b, uniform(100, 5)...)
	joined, err := r.Add(Node{ID: "joiner", Weight: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var handoffs []Handoff
	for b.Loop() {
		handoffs = Diff(r, joined)
	}
	ranges := 0
	for _, ho := range handoffs {
		ranges += len(ho.Ranges)
	}
	b.ReportMetric(float64(ranges), "ranges")
	b.ReportMetric(MovedFraction(handoffs), "moved")
}

// BenchmarkDecode decodes the membership of 100 nodes, which rebuilds the
// ring.
func BenchmarkDecode(b *testing.B) {
	enc, err := mustNew(b, uniform(100, 5)...).MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		if _, err := Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}
