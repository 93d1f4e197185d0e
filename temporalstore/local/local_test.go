package local

import (
	"bytes"
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
