package ferricstore

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The files HoldForBackup names, copied while writes go on (and
// snapshots would be due), open as the store as it was: every entry
// added before the hold, none torn. A directory a restore marks is
// refused.
func TestBackupFilesOpenAsTheStore(t *testing.T) {
	clk := &clock{}
	clk.ms.Store(1000)
	dir := t.TempDir()
	st, err := Open(Options{Dir: dir, Shards: 2, Now: clk.now, SnapshotEvery: 10})
	require.NoError(t, err)
	defer st.Close()
	ctx := t.Context()
	value := strings.Repeat("v", 100)
	for i := range 300 {
		_, _, err := st.Streams().Add(ctx, []string{"a", "b", "c"}[i%3], AddArgs{Fields: kv("f", value)})
		require.NoError(t, err)
	}
	files, release, err := st.HoldForBackup(ctx)
	require.NoError(t, err)
	var snaps int
	for _, f := range files {
		if strings.Contains(f.Path, "snapshot-") {
			snaps++
		}
	}
	require.Positive(t, snaps, "the shards had snapshots")
	// Writes go on while the files are copied; no snapshot is taken.
	before := st.Stats()
	for range 100 {
		_, _, err := st.Streams().Add(ctx, "a", AddArgs{Fields: kv("f", value)})
		require.NoError(t, err)
	}
	for i, s := range st.Stats() {
		require.Equal(t, before[i].Snapshots, s.Snapshots)
	}
	cp := t.TempDir()
	for _, f := range files {
		in, err := os.Open(filepath.Join(dir, filepath.FromSlash(f.Path)))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(cp, f.Path)), 0o755))
		out, err := os.Create(filepath.Join(cp, filepath.FromSlash(f.Path)))
		require.NoError(t, err)
		_, err = io.Copy(out, io.LimitReader(in, f.Size))
		require.NoError(t, err)
		in.Close()
		out.Close()
	}
	release()
	release() // idempotent
	restored, err := Open(Options{Dir: cp, Now: clk.now})
	require.NoError(t, err)
	defer restored.Close()
	for _, k := range []string{"a", "b", "c"} {
		n, err := restored.Streams().Len(ctx, k)
		require.NoError(t, err)
		require.Equal(t, 100, n, k)
	}

	marked := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(marked, RestoreMarker), nil, 0o644))
	_, err = Open(Options{Dir: marked})
	require.ErrorIs(t, err, ErrRestoreIncomplete)
}
