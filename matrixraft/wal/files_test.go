package wal

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// copyPrefixes copies the spans' prefixes from src into an empty dst.
func copyPrefixes(t *testing.T, src, dst string, spans []FileSpan) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dst, 0o755))
	for _, sp := range spans {
		in, err := os.Open(filepath.Join(src, sp.Name))
		require.NoError(t, err)
		out, err := os.Create(filepath.Join(dst, sp.Name))
		require.NoError(t, err)
		n, err := io.Copy(out, io.LimitReader(in, sp.Size))
		require.NoError(t, err)
		require.Equal(t, sp.Size, n)
		require.NoError(t, out.Close())
		require.NoError(t, in.Close())
	}
}

// The prefixes Files names, copied while appends go on, open as a log of
// exactly the records up to the index asked for, whatever segment it
// falls in, for preallocated and direct-IO segments alike.
func TestFilesCopyOpensAsThePrefix(t *testing.T) {
	ctx := context.Background()
	for _, opts := range []Options{
		{SegmentSize: 8 << 10, Sync: SyncAlways},
		{SegmentSize: 8 << 10, Sync: SyncAlways, NoDirectIO: true, NoPreallocate: true},
	} {
		src := t.TempDir()
		l := openT(t, src, opts)
		// Incompressible, so that 100 records span several segments.
		rec := func(i int) []byte {
			b := fmt.Appendf(nil, "record %05d ", i)
			r := rand.New(rand.NewPCG(uint64(i), 1))
			for range 300 {
				b = append(b, byte(r.Uint32()))
			}
			return b
		}
		for i := 1; i <= 100; i++ {
			_, err := l.Append(ctx, rec(i))
			require.NoError(t, err)
		}
		require.Greater(t, len(l.Segments()), 3)
		for _, last := range []uint64{1, 17, 40, 99, 100} {
			spans, err := l.Files(last)
			require.NoError(t, err)
			// Later appends do not change what the spans hold.
			_, err = l.Append(ctx, []byte("later"))
			require.NoError(t, err)
			dst := filepath.Join(t.TempDir(), "copy")
			copyPrefixes(t, src, dst, spans)
			c, err := Open(dst, opts)
			require.NoError(t, err, "last %d", last)
			require.Equal(t, uint64(1), c.FirstIndex())
			require.Equal(t, last, c.LastIndex())
			for i := uint64(1); i <= last; i++ {
				got, err := c.Read(i)
				require.NoError(t, err)
				require.Equal(t, rec(int(i)), got)
			}
			// The copy is a log to append to.
			idx, err := c.Append(ctx, []byte("next"))
			require.NoError(t, err)
			require.Equal(t, last+1, idx)
			require.NoError(t, c.Close())
		}
		_, err := l.Files(l.LastIndex() + 1)
		require.ErrorIs(t, err, ErrInvalidIndex)
		require.NoError(t, l.TruncateFront(ctx, 50))
		_, err = l.Files(10)
		require.ErrorIs(t, err, ErrInvalidIndex)
		require.NoError(t, l.Close())
		_, err = l.Files(1)
		require.ErrorIs(t, err, ErrClosed)
	}
}
