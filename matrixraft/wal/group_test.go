package wal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAppendGroupReadsBackAndReopens(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 1 << 16}
	l := openT(t, dir, opts)
	appendPayloads(t, l, 3, 100)
	group := [][]byte{payload(4, 50, false), payload(5, 2000, true), nil}
	first, err := l.AppendGroup(t.Context(), group)
	require.NoError(t, err)
	require.Equal(t, uint64(4), first)
	check := func(l *Log) {
		for i, want := range group {
			got, err := l.Read(first + uint64(i))
			require.NoError(t, err)
			require.True(t, bytes.Equal(want, got), "record %d", first+uint64(i))
		}
		it := l.Iterator(first)
		defer it.Close()
		n := 0
		for it.Next() {
			require.True(t, bytes.Equal(group[n], it.Value()))
			n++
		}
		require.NoError(t, it.Err())
		require.Equal(t, len(group), n)
	}
	check(l)
	require.NoError(t, l.Close())
	l = openT(t, dir, opts)
	require.Equal(t, uint64(6), l.LastIndex())
	check(l)
	// An empty group appends nothing.
	next, err := l.AppendGroup(t.Context(), nil)
	require.NoError(t, err)
	require.Equal(t, uint64(7), next)
	require.Equal(t, uint64(6), l.LastIndex())
}

// TestUnfinishedGroupDropped cuts a log inside its last group, at every
// byte from the group's start to its end, and by zeroing instead: Open
// keeps the records before the group and none of it, and the next
// append takes the group's first index.
func TestUnfinishedGroupDropped(t *testing.T) {
	src := t.TempDir()
	opts := Options{SegmentSize: 1 << 16, Compression: CompressionNone}
	l := openT(t, src, opts)
	const before, size = 5, 40
	appendPayloads(t, l, before, size)
	group := [][]byte{payload(6, size, false), payload(7, size, false), payload(8, size, false)}
	_, err := l.AppendGroup(t.Context(), group)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	file := segmentFiles(t, src)[0]
	orig, err := os.ReadFile(file)
	require.NoError(t, err)
	frame := frameHeaderSize + size
	groupOff := segmentHeaderSize + before*frame
	groupEnd := groupOff + len(group)*frame
	for _, mode := range []string{"truncate", "zero"} {
		for cut := groupOff; cut < groupEnd; cut++ {
			dir := t.TempDir()
			b := orig[:cut]
			if mode == "zero" {
				b = bytes.Clone(orig)
				clear(b[cut:])
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(file)), b, 0o644))
			l, err := Open(dir, opts)
			require.NoError(t, err, "%s at %d", mode, cut)
			require.Equal(t, uint64(before), l.LastIndex(), "%s at %d", mode, cut)
			idx, err := l.Append(t.Context(), []byte("next"))
			require.NoError(t, err)
			require.Equal(t, uint64(before+1), idx)
			require.NoError(t, l.Close())
			l, err = Open(dir, opts)
			require.NoError(t, err)
			require.Equal(t, uint64(before+1), l.LastIndex(), "%s at %d", mode, cut)
			got, err := l.Read(before + 1)
			require.NoError(t, err)
			require.Equal(t, []byte("next"), got)
			require.NoError(t, l.Close())
		}
	}
	// Whole, the group survives.
	l = openT(t, src, opts)
	require.Equal(t, uint64(before+len(group)), l.LastIndex())
}

func TestAppendGroupStartsASegmentWhenItDoesNotFit(t *testing.T) {
	opts := Options{SegmentSize: 4096, Compression: CompressionNone}
	dir := t.TempDir()
	l := openT(t, dir, opts)
	appendPayloads(t, l, 10, 300) // the first segment has room for one record of the group, not two
	group := [][]byte{payload(11, 500, false), payload(12, 500, false)}
	first, err := l.AppendGroup(t.Context(), group)
	require.NoError(t, err)
	require.Equal(t, uint64(11), first)
	segs := l.Segments()
	require.Len(t, segs, 2)
	require.Equal(t, uint64(11), segs[1].First, "the group starts the new segment")
	require.NoError(t, l.Close())
	l = openT(t, dir, opts)
	require.Equal(t, uint64(12), l.LastIndex())
}

func TestAppendGroupTooLargeAppendsNothing(t *testing.T) {
	l := openT(t, t.TempDir(), Options{SegmentSize: 4096, Compression: CompressionNone})
	appendPayloads(t, l, 2, 10)
	group := [][]byte{payload(3, 2000, false), payload(4, 2000, false), payload(5, 100, false)}
	_, err := l.AppendGroup(t.Context(), group)
	require.ErrorIs(t, err, ErrGroupTooLarge)
	require.Equal(t, uint64(2), l.LastIndex())
	idx, err := l.Append(t.Context(), []byte("x"))
	require.NoError(t, err)
	require.Equal(t, uint64(3), idx)
	require.Equal(t, int64(4096-segmentHeaderSize), l.MaxGroupSize())
}
