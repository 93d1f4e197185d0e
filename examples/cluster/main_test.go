package main

import (
	"bytes"
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	c, err := parse([]string{"--keys", "7", "--shards", "2", "--keep"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, config{shards: 2, keys: 7, keep: true}, c)
	_, err = parse([]string{"--keys", "0"}, io.Discard)
	require.Error(t, err)
	_, err = parse([]string{"--help"}, io.Discard)
	require.ErrorIs(t, err, flag.ErrHelp)
}

// The demonstration runs whole: three members, a leader killed, every
// acknowledged write read back, the member restarted and caught up.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server and runs three processes")
	}
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"--keys", "100", "--shards", "2", "--dir", t.TempDir()}, &out, io.Discard))
	require.Contains(t, out.String(), "all 100 acknowledged writes read back")
	require.Contains(t, out.String(), "cluster: keys=100 failover_ms=")
	t.Log(out.String())
}
