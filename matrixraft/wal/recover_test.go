package wal

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var errInjected = errors.New("injected: input/output error")

// failAfter puts l in the state a failed fdatasync leaves: the records
// after synced were written, and the log refuses appends.
func failAfter(l *Log, synced uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err = errInjected
	l.synced = min(l.synced, synced)
}

// A failed log refuses appends but serves reads; Recover cuts the records
// after the last acknowledged one, and appends resume there, with new
// contents that a reopen finds.
func TestRecoverCutsUnacknowledged(t *testing.T) {
	for _, sync := range []SyncPolicy{SyncAlways, SyncInterval} {
		t.Run(sync.String(), func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{SegmentSize: 1024, Compression: CompressionNone, Sync: sync, SyncInterval: 1 << 40}
			l := openT(t, dir, opts)
			appendPayloads(t, l, 30, 100) // several segments
			failAfter(l, 25)
			_, err := l.Append(t.Context(), []byte("refused"))
			require.ErrorIs(t, err, errInjected)
			rec, err := l.Read(30)
			require.NoError(t, err, "reads go on")
			require.Equal(t, payload(30, 100, false), rec)

			kept, err := l.Recover(t.Context(), 27)
			require.NoError(t, err)
			require.Equal(t, uint64(27), kept)
			require.Equal(t, uint64(27), l.LastIndex())
			_, err = l.Read(28)
			require.ErrorIs(t, err, ErrNotFound)
			for i := uint64(28); i <= 40; i++ {
				idx, err := l.Append(t.Context(), payload(i+1000, 60, false))
				require.NoError(t, err)
				require.Equal(t, i, idx)
			}
			require.NoError(t, l.Close())

			l = openT(t, dir, opts)
			got := readAll(t, l)
			require.Len(t, got, 40)
			for i := uint64(1); i <= 27; i++ {
				require.Equal(t, payload(i, 100, false), got[i])
			}
			for i := uint64(28); i <= 40; i++ {
				require.Equal(t, payload(i+1000, 60, false), got[i])
			}
		})
	}
}

// Records written but not synced when the log failed are read back: those
// that check out are kept, the first damaged one is cut with what follows
// (a group back to its start).
func TestRecoverChecksUnsyncedTail(t *testing.T) {
	cases := []struct {
		name   string
		damage uint64 // record whose frame is zeroed; 0: none
		kept   uint64
	}{
		{"intact", 0, 12},
		{"plain record damaged", 6, 5},
		{"group damaged", 10, 8}, // 9..11 are a group
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{SegmentSize: 1 << 20, Compression: CompressionNone, Sync: SyncInterval, SyncInterval: 1 << 40}
			l := openT(t, dir, opts)
			appendPayloads(t, l, 3, 100)
			require.NoError(t, l.Sync(t.Context()))
			for i := uint64(4); i <= 8; i++ {
				_, err := l.Append(t.Context(), payload(i, 100, false))
				require.NoError(t, err)
			}
			_, err := l.AppendGroup(t.Context(), [][]byte{payload(9, 100, false), payload(10, 100, false), payload(11, 100, false)})
			require.NoError(t, err)
			_, err = l.Append(t.Context(), payload(12, 100, false))
			require.NoError(t, err)
			failAfter(l, 3)
			if c.damage != 0 {
				// The kernel dropped the page: the frame reads as zeros.
				s, pos, err := l.locateLocked(c.damage)
				require.NoError(t, err)
				f, err := os.OpenFile(filepath.Join(dir, s.name), os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = f.WriteAt(make([]byte, 20), int64(s.offsets[pos]))
				require.NoError(t, err)
				require.NoError(t, f.Close())
			}
			kept, err := l.Recover(t.Context(), 12)
			require.NoError(t, err)
			require.Equal(t, c.kept, kept)
			require.Equal(t, c.kept, l.LastIndex())
			idx, err := l.Append(t.Context(), []byte("after"))
			require.NoError(t, err)
			require.Equal(t, c.kept+1, idx)
			require.NoError(t, l.Close())

			l = openT(t, dir, opts)
			got := readAll(t, l)
			require.Len(t, got, int(c.kept)+1)
			for i := uint64(1); i <= c.kept; i++ {
				require.Equal(t, payload(i, 100, false), got[i])
			}
			require.Equal(t, []byte("after"), got[c.kept+1])
		})
	}
}

// Recover of a healthy log at its end changes nothing; past its end it is
// refused.
func TestRecoverHealthyLog(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 1024, Compression: CompressionNone}
	l := openT(t, dir, opts)
	appendPayloads(t, l, 20, 100)
	kept, err := l.Recover(t.Context(), 20)
	require.NoError(t, err)
	require.Equal(t, uint64(20), kept)
	_, err = l.Recover(t.Context(), 21)
	require.ErrorIs(t, err, ErrInvalidIndex)
	idx, err := l.Append(t.Context(), payload(21, 100, false))
	require.NoError(t, err)
	require.Equal(t, uint64(21), idx)
	require.Len(t, readAll(t, l), 21)
	require.NoError(t, l.Close())
	_, err = l.Recover(t.Context(), 21)
	require.ErrorIs(t, err, ErrClosed)
}
