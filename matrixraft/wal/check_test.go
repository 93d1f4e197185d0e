package wal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeCheckLog writes 40 records of 100 bytes, uncompressed, across
// several segments, closes the log and returns its segment files.
func writeCheckLog(t *testing.T, dir string) []string {
	t.Helper()
	l := openT(t, dir, Options{SegmentSize: 1024, Compression: CompressionNone})
	appendPayloads(t, l, 40, 100)
	require.NoError(t, l.Close())
	files := segmentFiles(t, dir)
	require.Greater(t, len(files), 3)
	return files
}

// dirState is every file's name and content in dir, to show Check
// changed nothing.
func dirState(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	m := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		m[e.Name()] = b
	}
	return m
}

func TestCheck(t *testing.T) {
	const recSize = frameHeaderSize + 100
	cases := []struct {
		name    string
		damage  func(t *testing.T, files []string)
		records int
		last    uint64
		torn    bool
		corrupt string // segment named by the first CorruptionError; "" for none
		offset  int64
		reason  string
	}{
		{name: "intact", records: 40, last: 40},
		{
			name: "torn tail", records: 39, last: 39, torn: true,
			damage: func(t *testing.T, files []string) {
				f := files[len(files)-1]
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				rep, _ := Check(filepath.Dir(f))
				end := rep.Segments[len(rep.Segments)-1].End
				clear(b[end-30 : end]) // the last record's payload half written
				require.NoError(t, os.WriteFile(f, b, 0o644))
			},
		},
		{
			name: "sealed segment damaged", corrupt: "first", offset: segmentHeaderSize + recSize, reason: "checksum",
			damage: func(t *testing.T, files []string) { flip(t, files[0], segmentHeaderSize+recSize+50) },
		},
		{
			name: "last segment damaged before a valid record", corrupt: "last", offset: segmentHeaderSize, reason: "not a torn final write",
			damage: func(t *testing.T, files []string) { flip(t, files[len(files)-1], segmentHeaderSize+20) },
		},
		{
			name: "segment header", corrupt: "second", reason: "header checksum",
			damage: func(t *testing.T, files []string) { flip(t, files[1], 17) }, // first index
		},
		{
			name: "gap between segments", corrupt: "third", reason: "starts at index",
			damage: func(t *testing.T, files []string) { require.NoError(t, os.Remove(files[1])) },
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			files := writeCheckLog(t, dir)
			if c.damage != nil {
				c.damage(t, files)
			}
			before := dirState(t, dir)
			rep, err := Check(dir)
			require.Equal(t, before, dirState(t, dir), "Check writes nothing, not even a LOCK")
			if c.corrupt == "" {
				require.NoError(t, err)
				require.Empty(t, rep.Corrupt)
				require.Equal(t, c.records, rep.Records)
				require.Equal(t, uint64(1), rep.First)
				require.Equal(t, c.last, rep.Last)
				require.Equal(t, c.torn, rep.TornTail != nil)
				// Open agrees.
				l := openT(t, dir, Options{SegmentSize: 1024, Compression: CompressionNone})
				require.Equal(t, c.last, l.LastIndex())
				return
			}
			want := map[string]string{"first": files[0], "second": files[1], "third": files[2], "last": files[len(files)-1]}[c.corrupt]
			require.ErrorIs(t, err, ErrCorrupt)
			var ce *CorruptionError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, filepath.Base(want), ce.Segment)
			require.Equal(t, c.offset, ce.Offset)
			require.Contains(t, ce.Reason, c.reason)
			require.Contains(t, err.Error(), filepath.Base(want))
			// Open refuses it too.
			_, err = Open(dir, Options{SegmentSize: 1024, Compression: CompressionNone})
			require.ErrorIs(t, err, ErrCorrupt)
		})
	}
}

func flip(t *testing.T, file string, off int) {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	b[off] ^= 0x40
	require.NoError(t, os.WriteFile(file, b, 0o644))
}

func TestCheckReport(t *testing.T) {
	dir := t.TempDir()
	files := writeCheckLog(t, dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, segmentName(99)+".tmp"), []byte("partial"), 0o644))
	rep, err := Check(dir)
	require.NoError(t, err)
	require.Len(t, rep.Segments, len(files))
	var size int64
	next := uint64(1)
	for i, s := range rep.Segments {
		require.Equal(t, filepath.Base(files[i]), s.Name)
		require.Equal(t, next, s.First, "contiguous")
		next += uint64(s.Records)
		fi, err := os.Stat(files[i])
		require.NoError(t, err)
		require.Equal(t, fi.Size(), s.Size)
		size += s.Size
		require.LessOrEqual(t, s.End, s.Size)
	}
	require.Equal(t, size, rep.Bytes)
	require.Equal(t, []string{segmentName(99) + ".tmp"}, rep.TempFiles)
	require.Nil(t, rep.TornTail)
	require.Zero(t, rep.DroppedGroup)
}

func TestCheckEmptyAndMissing(t *testing.T) {
	rep, err := Check(t.TempDir())
	require.NoError(t, err)
	require.Zero(t, rep.Records)
	require.Empty(t, rep.Segments)

	_, err = Check(filepath.Join(t.TempDir(), "absent"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NotErrorIs(t, err, ErrCorrupt)
}

// A log that ends inside an AppendGroup group: Check reports the records
// Open drops, and counts only those it keeps.
func TestCheckUnfinishedGroup(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 1 << 16, Compression: CompressionNone}
	l := openT(t, dir, opts)
	appendPayloads(t, l, 5, 100)
	_, err := l.AppendGroup(t.Context(), [][]byte{payload(6, 100, false), payload(7, 100, false), payload(8, 100, false)})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	file := segmentFiles(t, dir)[0]
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	// Cut the group's last frame: the two before it are marked "more".
	cut := segmentHeaderSize + 7*(frameHeaderSize+100)
	require.Equal(t, typeRecord|typeGroupMore, b[cut-(frameHeaderSize+100)+8])
	clear(b[cut:])
	require.NoError(t, os.WriteFile(file, b, 0o644))

	rep, err := Check(dir)
	require.NoError(t, err)
	require.Equal(t, 2, rep.DroppedGroup)
	require.Equal(t, 5, rep.Records)
	require.Equal(t, uint64(5), rep.Last)
	l = openT(t, dir, opts)
	require.Equal(t, uint64(5), l.LastIndex())
}

// Segments before one written by Reset are obsolete: their records are
// not counted, and the jump in indices is no gap.
func TestCheckAfterReset(t *testing.T) {
	dir := t.TempDir()
	files := writeCheckLog(t, dir)
	h := encodeSegmentHeader(segmentHeader{version: formatVersion, flags: flagReset, first: 1000})
	require.NoError(t, os.WriteFile(filepath.Join(dir, segmentName(1000)), h, 0o644))
	rep, err := Check(dir)
	require.NoError(t, err)
	require.Len(t, rep.Segments, len(files)+1)
	for _, s := range rep.Segments[:len(files)] {
		require.True(t, s.Obsolete)
	}
	last := rep.Segments[len(files)]
	require.True(t, last.Reset)
	require.False(t, last.Obsolete)
	require.Zero(t, rep.Records)
	require.Equal(t, uint64(1000), last.First)
	require.Equal(t, uint64(1000), rep.First, "as FirstIndex")
	require.Equal(t, uint64(999), rep.Last, "as LastIndex of an empty log")
	l := openT(t, dir, Options{SegmentSize: 1024, Compression: CompressionNone})
	require.Equal(t, rep.First, l.FirstIndex())
	require.Equal(t, rep.Last, l.LastIndex())
}
