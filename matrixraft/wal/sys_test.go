package wal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

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
