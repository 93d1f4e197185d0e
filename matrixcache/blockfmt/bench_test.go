package blockfmt

import (
	"bytes"
	"fmt"
	"testing"
)

func BenchmarkEncode(b *testing.B) {
	for _, size := range []int{64, 4096} {
		for _, opts := range []Options{{}, {Compression: CompressionZstd}} {
			b.Run(fmt.Sprintf("%dB/%s", size, opts.Compression), func(b *testing.B) {
				blk := NewBlock(testPageKey(1, 2, 0, uint64(size)), bytes.Repeat([]byte("block value "), size/12+1)[:size])
				buf := make([]byte, 0, 2*size+128)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				var n int
				for b.Loop() {
					out, err := Encode(buf[:0], blk, opts)
					if err != nil {
						b.Fatal(err)
					}
					n = len(out)
				}
				b.ReportMetric(float64(n), "encoded-bytes")
			})
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, size := range []int{64, 4096} {
		for _, opts := range []Options{{}, {Compression: CompressionZstd}} {
			b.Run(fmt.Sprintf("%dB/%s", size, opts.Compression), func(b *testing.B) {
				blk := NewBlock(testPageKey(1, 2, 0, uint64(size)), bytes.Repeat([]byte("block value "), size/12+1)[:size])
				enc := mustEncode(blk, opts)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Decode(enc); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkAppendOrderedKey(b *testing.B) {
	k := testPageKeyWithSlot(3, 99, 4096, 4096, 7)
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendOrderedKey(buf[:0], k)
	}
}
