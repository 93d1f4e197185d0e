package wal

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// RollNext starts a new segment with the next record, and only then: a
// second call before any record starts one segment, and a segment holding
// no record yet is not rolled.
func TestRollNext(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	l, err := Open(dir, Options{SegmentSize: 1 << 20, Sync: SyncAlways})
	require.NoError(t, err)
	l.RollNext()
	a, err := l.Append(ctx, []byte("a"))
	require.NoError(t, err)
	require.Len(t, l.Segments(), 1, "an empty segment is not rolled")
	l.RollNext()
	l.RollNext()
	b, err := l.AppendBatch(ctx, [][]byte{[]byte("b"), []byte("c")})
	require.NoError(t, err)
	segs := l.Segments()
	require.Len(t, segs, 2)
	require.Equal(t, b, segs[1].First)
	_, err = l.Append(ctx, []byte("d"))
	require.NoError(t, err)
	require.Len(t, l.Segments(), 2, "one roll a call")
	require.NoError(t, l.TruncateFront(ctx, b))
	require.Equal(t, b, l.FirstIndex())
	require.NoError(t, l.Close())

	l, err = Open(dir, Options{SegmentSize: 1 << 20, Sync: SyncAlways})
	require.NoError(t, err)
	defer l.Close()
	for i, want := range []string{"b", "c", "d"} {
		got, err := l.Read(b + uint64(i))
		require.NoError(t, err)
		require.Equal(t, want, string(got))
	}
	_, err = l.Read(a)
	require.ErrorIs(t, err, ErrCompacted)
}
