package ferricprom

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/ferricstore"
	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

func TestCollector(t *testing.T) {
	st, err := ferricstore.Open(ferricstore.Options{Dir: t.TempDir(), Shards: 1})
	require.NoError(t, err)
	defer st.Close()
	ctx := t.Context()
	x := st.Streams()
	for range 3 {
		_, _, err := x.Add(ctx, "s", ferricstore.AddArgs{Fields: [][]byte{[]byte("f"), []byte("v")}})
		require.NoError(t, err)
	}
	require.NoError(t, x.CreateGroup(ctx, "s", "g", "0", false, stream.UnknownEntriesRead))
	_, err = x.ReadGroup(ctx, "s", "g", "c", ">", 2, false)
	require.NoError(t, err)

	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(st))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP ferricstore_stream_entries Entries of the shard's streams.
# TYPE ferricstore_stream_entries gauge
ferricstore_stream_entries{shard="0"} 3
# HELP ferricstore_stream_pending_entries Entries in the pending lists of the shard's groups.
# TYPE ferricstore_stream_pending_entries gauge
ferricstore_stream_pending_entries{shard="0"} 2
# HELP ferricstore_stream_deliveries_total Entries XREADGROUP, XCLAIM and XAUTOCLAIM handed to consumers.
# TYPE ferricstore_stream_deliveries_total counter
ferricstore_stream_deliveries_total{shard="0"} 2
# HELP ferricstore_writes_total Writes the shard logged.
# TYPE ferricstore_writes_total counter
ferricstore_writes_total{shard="0"} 5
`), "ferricstore_stream_entries", "ferricstore_stream_pending_entries", "ferricstore_stream_deliveries_total", "ferricstore_writes_total"))
	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	require.Equal(t, 12, n)
}
