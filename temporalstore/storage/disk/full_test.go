//go:build linux

package disk_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/disk"
)

// mountTmpfs mounts a tmpfs of size (mount's syntax, "8m") on a new
// directory, unmounted when t ends; it skips t where mounting is not
// permitted.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("a full disk needs a small tmpfs, and mounting one is not permitted here: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	return dir
}

// freeBytes is the space left on dir's filesystem.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &st))
	return int64(st.Bavail) * st.Bsize
}

// On a full disk the log fails where it creates its next segment, leaving
// no partial segment behind; it serves reads, and once space returns
// Recover cuts the failed appends' records and appends go on. A reopen
// finds every acknowledged record and none of the others.
func TestFullDiskSegmentRollover(t *testing.T) {
	const seg = 1 << 20
	mnt := mountTmpfs(t, "6m")
	dir := filepath.Join(mnt, "log")
	o := storage.LogOptions{Dir: dir, Durable: true, SegmentBytes: seg}
	l, err := disk.OpenLog(t.Context(), o)
	require.NoError(t, err)
	defer func() { l.Close() }()
	// Leave room for the active segment's records but not for another.
	filler := filepath.Join(mnt, "filler")
	require.NoError(t, os.WriteFile(filler, make([]byte, freeBytes(t, mnt)-seg/2), 0o644))

	ctx := t.Context()
	rng := rand.New(rand.NewPCG(1, 2))
	rec := func() []byte {
		b := make([]byte, 32<<10)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	var acked [][]byte
	var failure error
	for range 200 {
		r := rec()
		if _, err := l.Append(ctx, r); err != nil {
			failure = err
			break
		}
		acked = append(acked, r)
	}
	t.Logf("after %d appends: %v", len(acked), failure)
	require.ErrorIs(t, failure, syscall.ENOSPC)
	require.NotEmpty(t, acked)
	_, err = l.Append(ctx, rec())
	require.Error(t, err, "a failed log refuses appends")
	names, err := filepath.Glob(filepath.Join(dir, "*.tmp"))
	require.NoError(t, err)
	require.Empty(t, names, "no segment left half made")
	for i, want := range acked {
		got, err := l.Read(uint64(i + 1))
		require.NoError(t, err)
		require.Equal(t, want, got)
	}

	r := l.(storage.Recoverer)
	last := uint64(len(acked))
	err = r.Recover(ctx, last)
	require.ErrorIs(t, err, syscall.ENOSPC, "no room for a segment yet")
	require.Equal(t, last, l.LastIndex(), "the failed appends are cut")

	require.NoError(t, os.Remove(filler))
	require.NoError(t, r.Recover(ctx, last))
	more := rec()
	i, err := l.Append(ctx, more)
	require.NoError(t, err)
	require.Equal(t, last+1, i)
	acked = append(acked, more)
	for range 40 { // across a rollover
		r := rec()
		_, err := l.Append(ctx, r)
		require.NoError(t, err)
		acked = append(acked, r)
	}
	require.NoError(t, l.Close())

	l, err = disk.OpenLog(ctx, o)
	require.NoError(t, err)
	require.Equal(t, uint64(len(acked)), l.LastIndex())
	for i, want := range acked {
		got, err := l.Read(uint64(i + 1))
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}
