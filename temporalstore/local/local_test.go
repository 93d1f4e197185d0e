package local

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// The default wiring takes a value past the wal's record size, and has it
// after a reopen.
func TestOpenTakesLargeValues(t *testing.T) {
	dir := t.TempDir()
	v := bytes.Repeat([]byte("0123456789abcdef"), 20<<20/16)
	e, err := Open(t.Context(), temporalstore.Options{Dir: dir})
	require.NoError(t, err)
	_, err = e.Execute(t.Context(), temporalstore.Command{Kind: temporalstore.KindSet, Key: []byte("big"), Value: v})
	require.NoError(t, err)
	require.NoError(t, e.Close())
	e, err = Open(t.Context(), temporalstore.Options{Dir: dir})
	require.NoError(t, err)
	defer e.Close()
	r, err := e.Execute(t.Context(), temporalstore.Command{Kind: temporalstore.KindGet, Key: []byte("big")})
	require.NoError(t, err)
	require.True(t, bytes.Equal(v, r.Value))
}

// OpenString hands a large value's file: WriteTo writes the value whole,
// and, the file damaged, stops short of its last byte with the check's
// error.
func TestOpenStringWriteTo(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	v := bytes.Repeat([]byte("0123456789abcdef"), 3<<20/16)
	e, err := Open(ctx, temporalstore.Options{Dir: dir})
	require.NoError(t, err)
	_, err = e.Execute(ctx, temporalstore.Command{Kind: temporalstore.KindSet, Key: []byte("big"), Value: v})
	require.NoError(t, err)
	require.NoError(t, e.Close())
	e, err = Open(ctx, temporalstore.Options{Dir: dir}) // the record out of memory
	require.NoError(t, err)
	defer e.Close()

	f, ok, err := e.OpenString(ctx, "", "", "", []byte("big"))
	require.NoError(t, err)
	require.True(t, ok)
	var got bytes.Buffer
	n, err := f.WriteTo(&got)
	require.NoError(t, err)
	require.Equal(t, int64(len(v)), n)
	require.True(t, bytes.Equal(v, got.Bytes()))
	require.NoError(t, f.Close())

	_, ok, err = e.OpenString(ctx, "", "", "", []byte("absent"))
	require.NoError(t, err)
	require.False(t, ok)

	files, err := filepath.Glob(filepath.Join(dir, "*", "*", "*", "large-*.rec"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	b[len(b)/2] ^= 1
	require.NoError(t, os.WriteFile(files[0], b, 0o644))
	f, ok, err = e.OpenString(ctx, "", "", "", []byte("big"))
	require.NoError(t, err)
	require.True(t, ok)
	defer f.Close()
	got.Reset()
	n, err = f.WriteTo(&got)
	require.Error(t, err, "a damaged file fails its check")
	require.Less(t, n, int64(len(v)), "the last byte is held back")
}
