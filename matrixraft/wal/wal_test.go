package wal

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func openT(t *testing.T, dir string, opts Options) *Log {
	t.Helper()
	l, err := Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l
}

// payload returns deterministic bytes for index i: incompressible unless
// compressible is set.
func payload(i uint64, n int, compressible bool) []byte {
	b := make([]byte, n)
	if compressible {
		for k := range b {
			b[k] = byte('a' + (k/7)%3)
		}
		binary.LittleEndian.PutUint64(b[:min(8, n)], i)
		return b
	}
	r := rand.New(rand.NewPCG(i, uint64(n)))
	for k := range b {
		b[k] = byte(r.Uint32())
	}
	return b
}

// appendPayloads appends payload(i, size, false) for i = 1..n to a log
// that starts empty at index 1.
func appendPayloads(t *testing.T, l *Log, n uint64, size int) {
	t.Helper()
	for i := uint64(1); i <= n; i++ {
		idx, err := l.Append(t.Context(), payload(i, size, false))
		require.NoError(t, err)
		require.Equal(t, i, idx)
	}
}

func readAll(t *testing.T, l *Log) map[uint64][]byte {
	t.Helper()
	out := map[uint64][]byte{}
	it := l.Iterator(l.FirstIndex())
	for it.Next() {
		out[it.Index()] = bytes.Clone(it.Value())
	}
	require.NoError(t, it.Err())
	return out
}

func TestAppendReadReopen(t *testing.T) {
	cases := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"one byte", []byte{7}},
		{"small", []byte("hello, log")},
		{"compressible", payload(1, 10000, true)},
		{"incompressible", payload(2, 10000, false)},
		{"zeros at threshold", make([]byte, DefaultCompressMinSize)},
	}
	for _, tc := range []struct {
		name          string
		write, reopen Compression
	}{
		{"zstd", CompressionDefault, CompressionDefault},
		{"s2", CompressionFast, CompressionFast},
		// A log's records stay readable whatever the options of a reopen.
		{"zstd then s2", CompressionDefault, CompressionFast},
		{"s2 then none", CompressionFast, CompressionNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := openT(t, dir, Options{Compression: tc.write})
			ctx := t.Context()
			for i, c := range cases {
				idx, err := l.Append(ctx, c.data)
				require.NoError(t, err, c.name)
				require.Equal(t, uint64(i+1), idx, c.name)
			}
			check := func(l *Log) {
				require.Equal(t, uint64(1), l.FirstIndex())
				require.Equal(t, uint64(len(cases)), l.LastIndex())
				for i, c := range cases {
					got, err := l.Read(uint64(i + 1))
					require.NoError(t, err, c.name)
					require.Equal(t, len(c.data), len(got), c.name)
					require.True(t, bytes.Equal(c.data, got), c.name)
				}
				all := readAll(t, l)
				for i, c := range cases {
					require.True(t, bytes.Equal(c.data, all[uint64(i+1)]), "iterator: %s", c.name)
				}
			}
			check(l)
			st := l.Stats()
			require.Less(t, st.Bytes, uint64(10000+10000), "the compressible record must be stored compressed")
			require.NoError(t, l.Close())
			l2 := openT(t, dir, Options{Compression: tc.reopen})
			check(l2)
		})
	}
}

func TestCompressionBacksOffOnIncompressibleData(t *testing.T) {
	l := openT(t, t.TempDir(), Options{Compression: CompressionDefault})
	appendPayloads(t, l, 200, 1000)
	require.GreaterOrEqual(t, l.compressMisses.Load(), uint32(compressGiveUp))
	before := l.Stats().Bytes
	for i := uint64(1); i <= 2*compressProbeEvery; i++ {
		_, err := l.Append(t.Context(), payload(i, 1000, true))
		require.NoError(t, err)
	}
	require.Less(t, l.compressMisses.Load(), uint32(compressGiveUp), "a compressible record turns compression back on")
	require.Less(t, l.Stats().Bytes-before, uint64(2*compressProbeEvery*1000/2), "compressible records are stored compressed again")
	for i := uint64(1); i <= 2*compressProbeEvery; i++ {
		got, err := l.Read(200 + i)
		require.NoError(t, err)
		require.Equal(t, payload(i, 1000, true), got)
	}
}

func TestReadErrors(t *testing.T) {
	l := openT(t, t.TempDir(), Options{FirstIndex: 10})
	require.Equal(t, uint64(10), l.FirstIndex())
	require.Equal(t, uint64(9), l.LastIndex())
	_, err := l.Read(10)
	require.ErrorIs(t, err, ErrNotFound)
	idx, err := l.Append(t.Context(), []byte("x"))
	require.NoError(t, err)
	require.Equal(t, uint64(10), idx)
	_, err = l.Read(9)
	require.ErrorIs(t, err, ErrCompacted)
	_, err = l.Read(11)
	require.ErrorIs(t, err, ErrNotFound)
}

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"defaults", Options{}, true},
		{"tiny segment", Options{SegmentSize: 10}, false},
		{"huge segment", Options{SegmentSize: 1 << 33}, false},
		{"record larger than segment", Options{SegmentSize: 1 << 20, MaxRecordSize: 1 << 20}, false},
		{"small segment shrinks default record limit", Options{SegmentSize: 1 << 16}, true},
		{"bad sync", Options{Sync: 9}, false},
		{"negative interval", Options{SyncInterval: -1}, false},
		{"bad compression", Options{Compression: 5}, false},
		{"negative compress min", Options{CompressMinSize: -1}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.opts.withDefaults().Validate()
			if c.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidOptions)
			_, err = Open(t.TempDir(), c.opts)
			require.ErrorIs(t, err, ErrInvalidOptions)
		})
	}
}

func TestRecordTooLargeChangesNothing(t *testing.T) {
	l := openT(t, t.TempDir(), Options{MaxRecordSize: 100})
	_, err := l.Append(t.Context(), make([]byte, 101))
	require.ErrorIs(t, err, ErrRecordTooLarge)
	_, err = l.AppendBatch(t.Context(), [][]byte{{1}, make([]byte, 101)})
	require.ErrorIs(t, err, ErrRecordTooLarge)
	require.Equal(t, uint64(0), l.LastIndex())
	idx, err := l.Append(t.Context(), make([]byte, 100))
	require.NoError(t, err)
	require.Equal(t, uint64(1), idx)
}

func TestUseAfterClose(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, Options{})
	require.NoError(t, err)
	_, err = l.Append(t.Context(), []byte("a"))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	ctx := t.Context()
	_, err = l.Append(ctx, []byte("b"))
	require.ErrorIs(t, err, ErrClosed)
	_, err = l.AppendBatch(ctx, [][]byte{{1}})
	require.ErrorIs(t, err, ErrClosed)
	_, err = l.Read(1)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, l.Sync(ctx), ErrClosed)
	require.ErrorIs(t, l.TruncateFront(ctx, 1), ErrClosed)
	require.ErrorIs(t, l.TruncateBack(ctx, 0), ErrClosed)
	require.ErrorIs(t, l.Reset(ctx, 5), ErrClosed)
	require.ErrorIs(t, l.Close(), ErrClosed)
	it := l.Iterator(1)
	require.False(t, it.Next())
	require.ErrorIs(t, it.Err(), ErrClosed)
}

func TestCanceledContextAppendsNothing(t *testing.T) {
	l := openT(t, t.TempDir(), Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := l.Append(ctx, []byte("a"))
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, uint64(0), l.LastIndex())
}

func TestDirectoryLock(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{})
	_, err := Open(dir, Options{})
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, l.Close())
	l2, err := Open(dir, Options{})
	require.NoError(t, err)
	require.NoError(t, l2.Close())
}

func TestSegmentsRollAndReopen(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 4096, Compression: CompressionNone}
	l := openT(t, dir, opts)
	const n = 500
	for i := uint64(1); i <= n; i++ {
		_, err := l.Append(t.Context(), payload(i, int(i%300), false))
		require.NoError(t, err)
	}
	require.Greater(t, l.Stats().Segments, 10)
	require.NoError(t, l.Close())
	l = openT(t, dir, opts)
	got := readAll(t, l)
	require.Len(t, got, n)
	for i := uint64(1); i <= n; i++ {
		require.Equal(t, payload(i, int(i%300), false), got[i])
	}
}

func TestConcurrentAppendsGroupCommit(t *testing.T) {
	for _, policy := range []SyncPolicy{SyncAlways, SyncInterval, SyncNever} {
		t.Run(policy.String(), func(t *testing.T) {
			dir := t.TempDir()
			l := openT(t, dir, Options{Sync: policy, SegmentSize: 1 << 16})
			const workers, per = 16, 100
			var mu sync.Mutex
			seen := map[uint64][]byte{}
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for k := range per {
						data := []byte(fmt.Sprintf("w%d-k%d", w, k))
						idx, err := l.Append(t.Context(), data)
						require.NoError(t, err)
						mu.Lock()
						seen[idx] = data
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			require.Len(t, seen, workers*per)
			for i := uint64(1); i <= workers*per; i++ {
				got, err := l.Read(i)
				require.NoError(t, err)
				require.Equal(t, seen[i], got)
			}
			st := l.Stats()
			require.Equal(t, uint64(workers*per), st.Records)
			if policy == SyncAlways {
				require.Greater(t, st.RecordsPerFsync, 1.0, "concurrent appends must share fsyncs")
				require.Equal(t, st.Fsyncs, st.FsyncLatency.Total())
			}
			require.NoError(t, l.Close())
			l2 := openT(t, dir, Options{})
			require.Len(t, readAll(t, l2), workers*per)
		})
	}
}

func TestIntervalSyncs(t *testing.T) {
	l := openT(t, t.TempDir(), Options{Sync: SyncInterval, SyncInterval: time.Millisecond})
	_, err := l.Append(t.Context(), []byte("a"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return l.Stats().Fsyncs > 0 }, 5*time.Second, time.Millisecond)
	before := l.Stats().Fsyncs
	_, err = l.Append(t.Context(), []byte("b"))
	require.NoError(t, err)
	require.NoError(t, l.Sync(t.Context()))
	require.Greater(t, l.Stats().Fsyncs, before)
}

// Under SyncInterval, Sync fdatasyncs beside the appends that keep coming
// rather than as the flusher: every record appended before it returns is
// synced when it returns, and nothing appended meanwhile is lost.
func TestIntervalSyncCoversEarlierAppends(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{Sync: SyncInterval, SyncInterval: time.Hour})
	ctx := t.Context()
	var stop atomic.Bool
	var appended atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				if _, err := l.Append(ctx, []byte("background")); err != nil {
					t.Error(err)
					return
				}
				appended.Add(1)
			}
		})
	}
	for range 50 {
		idx, err := l.Append(ctx, []byte("mine"))
		require.NoError(t, err)
		require.NoError(t, l.Sync(ctx))
		l.mu.Lock()
		synced := l.synced
		l.mu.Unlock()
		require.GreaterOrEqual(t, synced, idx)
	}
	stop.Store(true)
	wg.Wait()
	require.NoError(t, l.Close())
	require.Len(t, readAll(t, openT(t, dir, Options{})), int(appended.Load())+50)
}

func TestAppendBatch(t *testing.T) {
	l := openT(t, t.TempDir(), Options{SegmentSize: 1024, Compression: CompressionNone})
	batch := [][]byte{[]byte("a"), nil, payload(3, 300, false), payload(4, 900, false)}
	first, err := l.AppendBatch(t.Context(), batch)
	require.NoError(t, err)
	require.Equal(t, uint64(1), first)
	first, err = l.AppendBatch(t.Context(), nil)
	require.NoError(t, err)
	require.Equal(t, uint64(5), first)
	for i, b := range batch {
		got, err := l.Read(uint64(i + 1))
		require.NoError(t, err)
		require.Equal(t, len(b), len(got))
		require.True(t, bytes.Equal(b, got))
	}
	require.GreaterOrEqual(t, l.Stats().Segments, 2)
}

func TestTruncateFront(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 1024, Compression: CompressionNone}
	l := openT(t, dir, opts)
	appendPayloads(t, l, 100, 100)
	segs := l.Stats().Segments
	require.ErrorIs(t, l.TruncateFront(t.Context(), 102), ErrInvalidIndex)
	require.NoError(t, l.TruncateFront(t.Context(), 50))
	first := l.FirstIndex()
	require.LessOrEqual(t, first, uint64(50))
	require.Greater(t, first, uint64(1))
	require.Less(t, l.Stats().Segments, segs)
	_, err := l.Read(first - 1)
	require.ErrorIs(t, err, ErrCompacted)
	require.NoError(t, l.TruncateFront(t.Context(), 101))
	require.Equal(t, 1, l.Stats().Segments)
	require.NoError(t, l.Close())

	l = openT(t, dir, opts)
	got := readAll(t, l)
	require.Equal(t, l.FirstIndex(), func() uint64 {
		m := uint64(1 << 62)
		for k := range got {
			m = min(m, k)
		}
		return m
	}())
	for i := l.FirstIndex(); i <= 100; i++ {
		require.Equal(t, payload(i, 100, false), got[i])
	}
}

func TestTruncateBack(t *testing.T) {
	cases := []struct {
		name  string
		keep  uint64
		err   error
		first uint64
	}{
		{"middle of a segment", 37, nil, 1},
		{"segment boundary", 0, nil, 1},
		{"nothing to drop", 100, nil, 1},
		{"past the end", 500, nil, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{SegmentSize: 1024, Compression: CompressionNone}
			l := openT(t, dir, opts)
			appendPayloads(t, l, 100, 100)
			require.NoError(t, l.TruncateBack(t.Context(), c.keep))
			last := min(c.keep, 100)
			require.Equal(t, last, l.LastIndex())
			_, err := l.Read(last + 1)
			require.ErrorIs(t, err, ErrNotFound)
			// Appends continue after the cut with new contents.
			for i := last + 1; i <= last+30; i++ {
				idx, err := l.Append(t.Context(), payload(i+1000, 50, false))
				require.NoError(t, err)
				require.Equal(t, i, idx)
			}
			require.NoError(t, l.Close())
			l = openT(t, dir, opts)
			got := readAll(t, l)
			require.Len(t, got, int(last+30))
			for i := uint64(1); i <= last; i++ {
				require.Equal(t, payload(i, 100, false), got[i])
			}
			for i := last + 1; i <= last+30; i++ {
				require.Equal(t, payload(i+1000, 50, false), got[i])
			}
		})
	}
}

func TestTruncateBackAfterFront(t *testing.T) {
	l := openT(t, t.TempDir(), Options{SegmentSize: 1024, Compression: CompressionNone})
	appendPayloads(t, l, 100, 100)
	require.NoError(t, l.TruncateFront(t.Context(), 60))
	first := l.FirstIndex()
	require.ErrorIs(t, l.TruncateBack(t.Context(), first-2), ErrInvalidIndex)
	require.Equal(t, uint64(100), l.LastIndex(), "a refused truncation changes nothing")
	require.NoError(t, l.TruncateBack(t.Context(), first-1))
	require.Equal(t, first-1, l.LastIndex())
	idx, err := l.Append(t.Context(), []byte("again"))
	require.NoError(t, err)
	require.Equal(t, first, idx)
}

func TestReset(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 1024, Compression: CompressionNone}
	l := openT(t, dir, opts)
	appendPayloads(t, l, 50, 100)
	require.ErrorIs(t, l.Reset(t.Context(), 0), ErrInvalidIndex)
	require.NoError(t, l.Reset(t.Context(), 1000))
	require.Equal(t, uint64(1000), l.FirstIndex())
	require.Equal(t, uint64(999), l.LastIndex())
	idx, err := l.Append(t.Context(), []byte("after"))
	require.NoError(t, err)
	require.Equal(t, uint64(1000), idx)
	require.NoError(t, l.Close())
	l = openT(t, dir, opts)
	require.Equal(t, map[uint64][]byte{1000: []byte("after")}, readAll(t, l))
	// Reset to an index equal to the current first replaces that segment.
	require.NoError(t, l.Reset(t.Context(), 1000))
	require.Equal(t, uint64(999), l.LastIndex())
	require.NoError(t, l.Close())
	l = openT(t, dir, opts)
	require.Empty(t, readAll(t, l))
}

func TestResetInterruptedBeforeDelete(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 1024, Compression: CompressionNone}
	l := openT(t, dir, opts)
	appendPayloads(t, l, 50, 100)
	require.NoError(t, l.Close())
	// What Reset leaves behind if it stops after creating its segment.
	s, err := createSegmentFile(dir, segmentHeader{version: formatVersion, flags: flagReset, first: 7777}, opts.SegmentSize, true)
	require.NoError(t, err)
	s.f.Close()
	l = openT(t, dir, opts)
	require.Equal(t, uint64(7777), l.FirstIndex())
	require.Equal(t, uint64(7776), l.LastIndex())
	require.Equal(t, 1, l.Stats().Segments)
}

func TestIteratorSeesLiveTailAndBlocks(t *testing.T) {
	l := openT(t, t.TempDir(), Options{SegmentSize: 8 << 20, Compression: CompressionDefault})
	const n = 300
	for i := uint64(1); i <= n; i++ {
		_, err := l.Append(t.Context(), payload(i, 10000, i%2 == 0)) // > 1 MiB per block read
		require.NoError(t, err)
	}
	it := l.Iterator(5)
	var want uint64 = 5
	for it.Next() {
		require.Equal(t, want, it.Index())
		if want <= n {
			require.Equal(t, payload(want, 10000, want%2 == 0), it.Value())
		} else {
			require.Equal(t, []byte("tail"), it.Value())
		}
		want++
		if want == n+1 {
			_, err := l.Append(t.Context(), []byte("tail"))
			require.NoError(t, err)
		}
	}
	require.NoError(t, it.Err())
	require.Equal(t, uint64(n+2), want)
	require.NoError(t, it.Close())

	it = l.Iterator(0)
	require.False(t, it.Next())
	require.ErrorIs(t, it.Err(), ErrCompacted)
}

func TestStatsEnvelope(t *testing.T) {
	l := openT(t, t.TempDir(), Options{Compression: CompressionNone})
	const n = 1000
	appendPayloads(t, l, n, 64)
	st := l.Stats()
	require.Equal(t, uint64(n*64), st.PayloadBytes)
	require.Equal(t, uint64(n*(64+frameHeaderSize)), st.Bytes, "new segments are counted only when created by this Log")
	require.Equal(t, uint64(n), st.Fsyncs)
	require.Equal(t, 1.0, st.RecordsPerFsync)
	require.Greater(t, st.FsyncLatency.Quantile(0.99), time.Duration(0))
}

func TestHistogramQuantile(t *testing.T) {
	var h atomicHistogram
	for _, d := range []time.Duration{time.Microsecond, 3 * time.Microsecond, 100 * time.Microsecond, time.Hour} {
		h.observe(d)
	}
	s := h.snapshot()
	require.Equal(t, uint64(4), s.Total())
	require.Equal(t, time.Microsecond, s.Quantile(0.25))
	require.Equal(t, 4*time.Microsecond, s.Quantile(0.5))
	require.Equal(t, 128*time.Microsecond, s.Quantile(0.75))
	require.Equal(t, BucketBound(histogramBuckets-1), s.Quantile(1))
	require.Equal(t, time.Duration(0), Histogram{}.Quantile(0.5))
}

// segmentFiles lists the segment files in dir, oldest first.
func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+segmentExt))
	require.NoError(t, err)
	return m
}

func TestDamageBeforeTailRefusesToOpen(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 2048, Compression: CompressionNone}
	l := openT(t, dir, opts)
	appendPayloads(t, l, 60, 100)
	require.NoError(t, l.Close())
	files := segmentFiles(t, dir)
	require.Greater(t, len(files), 2)

	cases := []struct {
		name    string
		file    string
		offset  int64
		wantOff int64
	}{
		{"payload of a sealed segment", files[0], segmentHeaderSize + 2*(frameHeaderSize+100) + 50, segmentHeaderSize + 2*(frameHeaderSize+100)},
		{"length of a sealed segment", files[1], segmentHeaderSize + 5, segmentHeaderSize},
		{"first record of the last segment", files[len(files)-1], segmentHeaderSize + 20, segmentHeaderSize},
		{"segment header", files[1], 3, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			orig, err := os.ReadFile(c.file)
			require.NoError(t, err)
			defer func() { require.NoError(t, os.WriteFile(c.file, orig, 0o644)) }()
			bad := bytes.Clone(orig)
			bad[c.offset] ^= 0x40
			require.NoError(t, os.WriteFile(c.file, bad, 0o644))
			_, err = Open(dir, opts)
			var ce *CorruptionError
			require.ErrorAs(t, err, &ce)
			require.ErrorIs(t, err, ErrCorrupt)
			require.Equal(t, filepath.Base(c.file), ce.Segment)
			require.Equal(t, c.wantOff, ce.Offset)
			require.Contains(t, err.Error(), filepath.Base(c.file))
			after, err := os.ReadFile(c.file)
			require.NoError(t, err)
			require.Equal(t, bad, after, "a refused open must not change the file")
		})
	}
	// With the damage undone the log opens intact.
	l = openT(t, dir, opts)
	require.Len(t, readAll(t, l), 60)
}

func TestRepairTailOption(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Compression: CompressionNone}
	l := openT(t, dir, opts)
	appendPayloads(t, l, 10, 100)
	require.NoError(t, l.Close())
	file := segmentFiles(t, dir)[0]
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	b[segmentHeaderSize+5*(frameHeaderSize+100)+30] ^= 1 // record 6
	require.NoError(t, os.WriteFile(file, b, 0o644))
	_, err = Open(dir, opts)
	require.ErrorIs(t, err, ErrCorrupt)
	opts.RepairTail = true
	l = openT(t, dir, opts)
	require.Equal(t, uint64(5), l.LastIndex())
}

func TestGapBetweenSegmentsRefused(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 1024, Compression: CompressionNone}
	l := openT(t, dir, opts)
	appendPayloads(t, l, 40, 100)
	require.NoError(t, l.Close())
	files := segmentFiles(t, dir)
	require.NoError(t, os.Remove(files[1]))
	_, err := Open(dir, opts)
	var ce *CorruptionError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, filepath.Base(files[2]), ce.Segment)
}

func TestUnknownFormatVersionRefused(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{})
	_, err := l.Append(t.Context(), []byte("x"))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	file := segmentFiles(t, dir)[0]
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	binary.LittleEndian.PutUint16(b[8:10], formatVersion+1)
	binary.LittleEndian.PutUint32(b[24:28], crc32c(b[0:24]))
	require.NoError(t, os.WriteFile(file, b, 0o644))
	_, err = Open(dir, Options{})
	require.ErrorIs(t, err, ErrUnsupportedFormat)
	require.Contains(t, err.Error(), filepath.Base(file))
}

func TestLeftoverTempSegmentRemoved(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{})
	_, err := l.Append(t.Context(), []byte("x"))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	tmp := filepath.Join(dir, segmentName(2)+".tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("partial"), 0o644))
	l = openT(t, dir, Options{})
	require.Equal(t, uint64(1), l.LastIndex())
	_, err = os.Stat(tmp)
	require.True(t, errors.Is(err, os.ErrNotExist))
}

// TestTornTailEveryOffset cuts the last segment at every byte offset inside
// its last record, both by shortening the file and by zeroing the rest; each
// must reopen cleanly without that record and keep appending.
func TestTornTailEveryOffset(t *testing.T) {
	for _, mode := range []string{"truncate", "zero"} {
		t.Run(mode, func(t *testing.T) {
			src := t.TempDir()
			opts := Options{SegmentSize: 1 << 16, Compression: CompressionNone}
			l := openT(t, src, opts)
			const n = 20
			appendPayloads(t, l, n, 200)
			require.NoError(t, l.Close())
			file := segmentFiles(t, src)[0]
			orig, err := os.ReadFile(file)
			require.NoError(t, err)
			lastOff := segmentHeaderSize + (n-1)*(frameHeaderSize+200)
			lastEnd := lastOff + frameHeaderSize + 200
			for cut := lastOff; cut < lastEnd; cut++ {
				dir := t.TempDir()
				var b []byte
				if mode == "truncate" {
					b = orig[:cut]
				} else {
					b = bytes.Clone(orig)
					clear(b[cut:])
				}
				require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(file)), b, 0o644))
				l, err := Open(dir, opts)
				require.NoError(t, err, "cut at %d", cut)
				require.Equal(t, uint64(n-1), l.LastIndex(), "cut at %d", cut)
				idx, err := l.Append(t.Context(), []byte("next"))
				require.NoError(t, err)
				require.Equal(t, uint64(n), idx)
				got, err := l.Read(n - 1)
				require.NoError(t, err)
				require.Equal(t, payload(n-1, 200, false), got)
				require.NoError(t, l.Close())
				l, err = Open(dir, opts)
				require.NoError(t, err)
				got, err = l.Read(n)
				require.NoError(t, err)
				require.Equal(t, []byte("next"), got)
				require.NoError(t, l.Close())
			}
		})
	}
}

// TestReadsDuringDirectWrites reads every published record while concurrent
// appenders write, so reads of the partial block a direct write rewrites are
// exercised; each record must always read back intact.
func TestReadsDuringDirectWrites(t *testing.T) {
	for _, direct := range []bool{true, false} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			l := openT(t, t.TempDir(), Options{NoDirectIO: !direct, SegmentSize: 256 << 10, Compression: CompressionNone})
			if direct && !l.direct {
				t.Skip("filesystem refuses O_DIRECT")
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					for k := 0; ; k++ {
						select {
						case <-stop:
							return
						default:
						}
						_, err := l.Append(t.Context(), payload(uint64(w*1_000_000+k), 10+k%700, false))
						require.NoError(t, err)
					}
				})
			}
			deadline := time.Now().Add(2 * time.Second)
			reads := 0
			for time.Now().Before(deadline) {
				last := l.LastIndex()
				if last == 0 {
					continue
				}
				for _, i := range []uint64{last, last - min(last-1, 1), 1 + uint64(reads)%last} {
					v, err := l.Read(i)
					require.NoError(t, err, "index %d", i)
					require.NotEmpty(t, v)
					reads++
				}
			}
			close(stop)
			wg.Wait()
			require.Greater(t, reads, 100)
			it := l.Iterator(1)
			n := uint64(0)
			for it.Next() {
				n++
			}
			require.NoError(t, it.Err())
			require.Equal(t, l.LastIndex(), n)
		})
	}
}

func TestSegmentsDescribesTheFiles(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{SegmentSize: 64 << 10, Compression: CompressionNone})
	ctx := t.Context()
	for range 100 {
		_, err := l.Append(ctx, payload(3, 4000, false))
		require.NoError(t, err)
	}
	segs := l.Segments()
	require.Greater(t, len(segs), 3)
	require.Equal(t, l.FirstIndex(), segs[0].First)
	var total int64
	for i, s := range segs {
		if i > 0 {
			require.Greater(t, s.First, segs[i-1].First)
		}
		require.Positive(t, s.Bytes)
		total += s.Bytes
	}
	require.GreaterOrEqual(t, total, int64(100*4000))
	require.NoError(t, l.TruncateFront(ctx, segs[2].First))
	require.Equal(t, segs[2].First, l.Segments()[0].First)
	require.NoError(t, l.Close())
}

// A histogram's quantile is the bound of the bucket it falls in, and 0
// when empty; Merge adds counts and sums bucket by bucket, leaving the
// merged-from histogram as it was.
func TestHistogramMerge(t *testing.T) {
	var h Histogram
	h.Counts[0], h.Counts[1], h.Counts[2] = 90, 9, 1 // at most 1, 2, 4 µs
	h.Sum = 120 * time.Microsecond
	tests := []struct {
		q    float64
		want time.Duration
	}{
		{0.01, time.Microsecond},
		{0.5, time.Microsecond},
		{0.9, time.Microsecond},
		{0.95, 2 * time.Microsecond},
		{0.99, 2 * time.Microsecond},
		{1, 4 * time.Microsecond},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, h.Quantile(tc.q), "q=%v", tc.q)
	}
	require.Equal(t, uint64(100), h.Total())
	require.Zero(t, Histogram{}.Quantile(0.99), "empty")

	var m, o Histogram
	o.Counts[2], o.Sum = 100, time.Millisecond
	m.Merge(h)
	m.Merge(o)
	require.Equal(t, []uint64{90, 9, 101}, m.Counts[:3])
	require.Equal(t, uint64(200), m.Total())
	require.Equal(t, 1120*time.Microsecond, m.Sum)
	require.Equal(t, 4*time.Microsecond, m.Quantile(0.5))
	require.Equal(t, []uint64{90, 9, 1}, h.Counts[:3], "the merged-from histogram is untouched")
}

// SetBeforeSync's function runs before each fdatasync, under every policy
// that syncs, and its error fails the sync as the device's own would.
func TestBeforeSync(t *testing.T) {
	ctx := t.Context()
	for _, pol := range []SyncPolicy{SyncAlways, SyncInterval} {
		t.Run(fmt.Sprint(pol), func(t *testing.T) {
			l := openT(t, t.TempDir(), Options{Sync: pol, SyncInterval: time.Hour})
			var calls atomic.Int64
			l.SetBeforeSync(func() error { calls.Add(1); return nil })
			_, err := l.Append(ctx, []byte("a"))
			require.NoError(t, err)
			require.NoError(t, l.Sync(ctx))
			require.GreaterOrEqual(t, calls.Load(), int64(1))

			l.SetBeforeSync(func() error { return errors.New("files not synced") })
			_, err = l.Append(ctx, []byte("b"))
			if pol == SyncAlways {
				require.ErrorContains(t, err, "files not synced")
			} else {
				require.NoError(t, err)
				require.ErrorContains(t, l.Sync(ctx), "files not synced")
			}
			_, err = l.Append(ctx, []byte("c"))
			require.Error(t, err, "a failed sync makes the log refuse appends")

			l.SetBeforeSync(nil)
		})
	}
}
