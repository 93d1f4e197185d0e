package wal

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
)

var writeCorpus = flag.Bool("write-corpus", false, "rewrite the committed fuzz seed corpora under testdata/fuzz")

// seedFrames are encoded frames worth starting the fuzzers from.
func seedFrames() [][]byte {
	frameOf := func(typ byte, p []byte) []byte {
		b := make([]byte, frameHeaderSize+len(p))
		copy(b[frameHeaderSize:], p)
		putFrameHeader(b, typ, p)
		return b
	}
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		panic(err)
	}
	zstdHello := enc.EncodeAll(bytes.Repeat([]byte("hello "), 50), nil)
	valid := frameOf(typeRecord, []byte("hello"))
	badCRC := bytes.Clone(valid)
	badCRC[frameHeaderSize] ^= 1
	return [][]byte{
		valid,
		frameOf(typeRecord, nil),
		frameOf(typeRecordZstd, zstdHello),
		badCRC,
		valid[:5],
		make([]byte, frameHeaderSize),
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1},
	}
}

// seedSegments are whole segment images: header plus frames plus slack.
func seedSegments() [][]byte {
	hdr := encodeSegmentHeader(segmentHeader{version: formatVersion, first: 1})
	var out [][]byte
	frames := seedFrames()
	out = append(out, append(bytes.Clone(hdr), make([]byte, 64)...))
	good := bytes.Clone(hdr)
	good = append(good, frames[0]...)
	good = append(good, frames[1]...)
	good = append(good, frames[2]...)
	out = append(out, append(bytes.Clone(good), make([]byte, 32)...))
	out = append(out, good[:len(good)-3])
	mid := append(bytes.Clone(hdr), frames[3]...)
	mid = append(mid, frames[0]...)
	out = append(out, mid)
	out = append(out, hdr[:20])
	return out
}

func writeSeedCorpus(t *testing.T, name string, seeds [][]byte) {
	dir := filepath.Join("testdata", "fuzz", name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for i, s := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644))
	}
}

func TestWriteFuzzCorpus(t *testing.T) {
	if !*writeCorpus {
		t.Skip("pass -write-corpus to rewrite testdata/fuzz")
	}
	writeSeedCorpus(t, "FuzzDecodeFrame", seedFrames())
	writeSeedCorpus(t, "FuzzScanSegment", seedSegments())
	writeSeedCorpus(t, "FuzzOpenSegment", seedSegments())
}

// FuzzDecodeFrame checks the record decoder never panics, never reads past
// its input, and that whatever it accepts re-encodes to the same bytes.
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range seedFrames() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		typ, p, n, err := decodeFrame(b, 1<<20)
		if err != nil {
			return
		}
		require.LessOrEqual(t, n, len(b))
		require.Equal(t, frameHeaderSize+len(p), n)
		again := make([]byte, n)
		copy(again[frameHeaderSize:], p)
		putFrameHeader(again, typ, p)
		require.Equal(t, b[:n], again)
	})
}

// FuzzScanSegment checks the segment scanner and the torn-tail judgement on
// arbitrary bytes: no panics, offsets inside the data and increasing.
func FuzzScanSegment(f *testing.F) {
	for _, s := range seedSegments() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := scanSegment(b, len(b))
		if err != nil {
			return
		}
		prev := int64(-1)
		for _, o := range r.offsets {
			require.Greater(t, int64(o), prev)
			require.Less(t, int64(o), int64(len(b)))
			prev = int64(o)
		}
		require.LessOrEqual(t, r.end, int64(len(b)))
		if r.badErr != nil {
			tornTail(b, int(r.end), len(b))
		}
	})
}

// FuzzOpenSegment writes arbitrary bytes as a segment and opens it: Open
// either refuses with an error or yields a log it can iterate to the end (a
// frame whose checksum holds but whose zstd body does not decode reads as
// ErrCorrupt) and keep appending to.
func FuzzOpenSegment(f *testing.F) {
	for _, s := range seedSegments() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= segmentHeaderSize {
			// Keep the name and header in step so the frames get exercised.
			b = bytes.Clone(b)
			copy(b[0:8], segmentMagic[:])
			binary.LittleEndian.PutUint16(b[8:10], formatVersion)
			binary.LittleEndian.PutUint64(b[16:24], 1)
			binary.LittleEndian.PutUint32(b[24:28], crc32c(b[0:24]))
		}
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, segmentName(1)), b, 0o644))
		l, err := Open(dir, Options{NoPreallocate: true, SegmentSize: 1 << 16})
		if err != nil {
			return
		}
		defer l.Close()
		it := l.Iterator(l.FirstIndex())
		n := uint64(0)
		for it.Next() {
			n++
		}
		if err := it.Err(); err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
		} else {
			require.Equal(t, l.LastIndex()-l.FirstIndex()+1, n)
		}
		_, err = l.Append(t.Context(), []byte("after"))
		require.NoError(t, err)
	})
}
