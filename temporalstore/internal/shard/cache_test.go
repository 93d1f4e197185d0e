package shard

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// With a cache, reads are served from it (records written are put there),
// a record evicted from it is read from the log again, and what a key
// holds is the same either way, across a reopen too.
func TestReadsThroughTheCache(t *testing.T) {
	ctx := t.Context()
	c, err := matrixcache.New(ctx, matrixcache.Options{
		DRAMCapacityBytes: 256 << 10, SSDCapacityBytes: matrixcache.Disabled, ResidentCapacityBytes: matrixcache.Disabled,
	})
	require.NoError(t, err)
	defer c.Close()
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	opts := Options{Durable: true, Now: clk.Now, Cache: c, CacheID: 7}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	want := map[string]string{}
	// Far more than the cache holds, so some reads miss it.
	for i := range 4000 {
		k, v := fmt.Sprintf("k%d", i%1000), fmt.Sprintf("%d-%s", i, noise(200))
		require.NoError(t, s.Set(ctx, []byte(k), []byte(v), time.Time{}))
		want[k] = v
	}
	check := func() {
		for k, v := range want {
			got, ok, err := s.Get([]byte(k))
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, v, string(got))
		}
	}
	check()
	check()
	st := c.Stats()
	require.Positive(t, st.DRAM.Hits, "reads are served from the cache")
	require.Positive(t, st.Misses, "and the log serves what it evicted")
	require.NoError(t, s.Close())
	s, err = Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	check()
}
