package matrixobject

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.CreateBucket(b.Context(), "bench", Quota{}); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkPutObject measures durable puts (fsync of file and directory)
// that overwrite one key.
func BenchmarkPutObject(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20, 16 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			s := benchStore(b)
			data := randBytes(1, size)
			r := bytes.NewReader(data)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				r.Reset(data)
				if _, err := s.PutObject(b.Context(), "bench", "key", r, PutOptions{}); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "puts/s")
		})
	}
}

// BenchmarkGetObject measures reads of a cached object through GetObject.
func BenchmarkGetObject(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20, 16 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			s := benchStore(b)
			if _, err := s.PutObject(b.Context(), "bench", "key", bytes.NewReader(randBytes(1, size)), PutOptions{}); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				r, err := s.GetObject(b.Context(), "bench", "key", GetOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.WriteTo(io.Discard); err != nil {
					b.Fatal(err)
				}
				r.Close()
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "gets/s")
		})
	}
}

// BenchmarkAppend measures durable appends (one fdatasync each) to one
// append blob.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{256, 64 << 10} {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			s := benchStore(b)
			p := randBytes(2, size)
			b.SetBytes(int64(size))
			n := 0
			for b.Loop() {
				if _, err := s.Append(b.Context(), "bench", "log", p); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "appends/s")
		})
	}
}

// BenchmarkList measures one page of 1000 keys out of 10,000 with a
// delimiter that groups none of them.
func BenchmarkList(b *testing.B) {
	s := benchStore(b)
	b2 := s.buckets["bench"]
	// Fill the index directly: listing reads only the index.
	for i := range 10000 {
		k := fmt.Sprintf("k/%05d", i)
		b2.objects[k] = entry{size: 1}
		b2.keys = append(b2.keys, k)
	}
	b.ReportAllocs()
	keys := 0
	for b.Loop() {
		res, err := s.ListObjects(b.Context(), "bench", ListOptions{Prefix: "k/", Delimiter: "/", StartAfter: "k/04000"})
		if err != nil {
			b.Fatal(err)
		}
		keys += len(res.Objects)
	}
	b.ReportMetric(float64(keys)/b.Elapsed().Seconds(), "keys/s")
}
