package wal

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWriteAtNoHandoff(t *testing.T) {
	tests := []struct {
		name string
		off  int64
		data []byte
	}{
		{"at the start", 0, []byte("first")},
		{"past the end", 4096, bytes.Repeat([]byte{0xab}, 3000)},
		{"largest short write", 100, bytes.Repeat([]byte{7}, maxNoHandoffWrite)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), "seg"))
			require.NoError(t, err)
			defer f.Close()
			require.NoError(t, writeAtNoHandoff(f, tc.data, tc.off))
			got := make([]byte, len(tc.data))
			_, err = f.ReadAt(got, tc.off)
			require.NoError(t, err)
			require.Equal(t, tc.data, got)
			fi, err := f.Stat()
			require.NoError(t, err)
			require.Equal(t, tc.off+int64(len(tc.data)), fi.Size())
		})
	}
}

func TestWriteAtNoHandoffFails(t *testing.T) {
	dir := t.TempDir()
	ro, err := os.Create(filepath.Join(dir, "ro"))
	require.NoError(t, err)
	require.NoError(t, ro.Close())
	ro, err = os.Open(ro.Name())
	require.NoError(t, err)
	defer ro.Close()
	require.Error(t, writeAtNoHandoff(ro, []byte("x"), 0), "a file opened read-only")

	closed, err := os.Create(filepath.Join(dir, "closed"))
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	require.Error(t, writeAtNoHandoff(closed, []byte("x"), 0), "a closed file")
}

func TestFdatasyncNoHandoff(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "seg"))
	require.NoError(t, err)
	_, err = f.Write([]byte("data"))
	require.NoError(t, err)
	require.NoError(t, fdatasyncNoHandoff(f))
	require.NoError(t, f.Close())
	require.Error(t, fdatasyncNoHandoff(f), "a closed file")
}

// TestDeviceIOKeepsItsProcessorOnlyWhenQuick checks when the flusher's
// device IO goes out as raw system calls: not before a sync has been
// timed, once syncs are quick, never with one processor, and not while
// syncs are slow; the records written either way read back after a
// reopen.
func TestDeviceIOKeepsItsProcessorOnlyWhenQuick(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	dir := t.TempDir()
	l := openT(t, dir, Options{Sync: SyncAlways})
	require.False(t, l.deviceNoHandoff(), "before any sync is timed")
	var want [][]byte
	for i := range 50 {
		p := payload(uint64(i), 100+i, false)
		_, err := l.Append(t.Context(), p)
		require.NoError(t, err)
		want = append(want, p)
	}
	if l.deviceNanos.Load() >= int64(maxNoHandoffDevice) {
		t.Skipf("fdatasync averages %v here, over the bound", time.Duration(l.deviceNanos.Load()))
	}
	require.True(t, l.deviceNoHandoff(), "after quick syncs")

	prev := runtime.GOMAXPROCS(1)
	require.False(t, l.deviceNoHandoff(), "with one processor")
	runtime.GOMAXPROCS(prev)

	l.deviceNanos.Store(int64(5 * time.Millisecond))
	require.False(t, l.deviceNoHandoff(), "after slow syncs")
	for i := 50; i < 60; i++ {
		p := payload(uint64(i), 100+i, false)
		_, err := l.Append(t.Context(), p)
		require.NoError(t, err)
		want = append(want, p)
	}
	require.NoError(t, l.Close())

	l = openT(t, dir, Options{Sync: SyncAlways})
	for i, p := range want {
		got, err := l.Read(uint64(i + 1))
		require.NoError(t, err)
		require.Equal(t, p, got)
	}
}
