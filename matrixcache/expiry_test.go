package matrixcache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Eviction takes an expired entry before a live one: with DRAM full and one
// entry expired, a new write drops the expired entry and evicts nothing.
// With nothing expired, the same write evicts a live entry and counts no
// expiry.
func TestWritesReclaimExpiredEntriesBeforeEvictingLiveOnes(t *testing.T) {
	for _, policy := range []string{"slru", "tinylfu", "fifo", "arc"} {
		t.Run(policy, func(t *testing.T) {
			opts, clk := testOptions(t, 4)
			opts.Policy = policy
			opts.SSDCapacityBytes = Disabled
			c := newTestCache(t, opts)
			ctx := t.Context()
			require.NoError(t, c.Put(ctx, skey(0), val("x"), PutOptions{TTL: time.Second}))
			for i := 1; i < 4; i++ {
				require.NoError(t, c.Put(ctx, skey(i), val("l"), PutOptions{}))
			}
			clk.Advance(2 * time.Second)
			require.NoError(t, c.Put(ctx, skey(4), val("n"), PutOptions{}))
			st := c.Stats()
			require.Equal(t, int64(1), st.ExpiredReclaimed)
			require.Equal(t, int64(1), st.DRAM.Expired)
			require.Zero(t, st.DRAM.Evictions, "no live entry evicted")
			for i := 1; i <= 4; i++ {
				_, tier := getTier(t, c, skey(i))
				require.Equal(t, TierDRAM, tier, "key %d", i)
			}

			// Nothing expired now: room comes from a live entry.
			require.NoError(t, c.Put(ctx, skey(5), val("n"), PutOptions{}))
			st = c.Stats()
			require.Equal(t, int64(1), st.ExpiredReclaimed)
			require.Equal(t, int64(1), st.DRAM.Expired)
		})
	}
}

// A cache that is written but never read gives expired memory back: writes
// of other keys reclaim expired entries with no read, sweep or pressure.
func TestWritesReclaimExpiredMemoryWithoutPressure(t *testing.T) {
	opts, clk := testOptions(t, 1000)
	opts.SSDCapacityBytes = Disabled
	c := newTestCache(t, opts)
	ctx := t.Context()
	for i := range 40 {
		require.NoError(t, c.Put(ctx, skey(i), val("t"), PutOptions{TTL: time.Minute}))
	}
	require.Equal(t, int64(40), c.Stats().DRAM.Entries)
	clk.Advance(2 * time.Minute)
	for i := range 3 {
		require.NoError(t, c.Put(ctx, skey(100+i), val("w"), PutOptions{}))
	}
	st := c.Stats()
	require.Equal(t, int64(40), st.ExpiredReclaimed, "three writes reclaim up to %d each", reclaimPerWrite)
	require.Equal(t, int64(3), st.DRAM.Entries)
	require.Zero(t, st.DRAM.Evictions)
}

// A pinned expired entry is not reclaimed by writes: a pin keeps an entry
// until its release.
func TestWritesDoNotReclaimPinnedExpiredEntries(t *testing.T) {
	opts, clk := testOptions(t, 100)
	opts.SSDCapacityBytes = Disabled
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("p"), PutOptions{TTL: time.Second}))
	h, err := c.Acquire(ctx, skey(1))
	require.NoError(t, err)
	defer h.Release()
	clk.Advance(2 * time.Second)
	require.NoError(t, c.Put(ctx, skey(2), val("w"), PutOptions{}))
	require.Zero(t, c.Stats().ExpiredReclaimed)
	require.Equal(t, int64(1), c.Stats().PinnedEntries)
}

// Overwriting a key with a TTL again and again leaves stale heap items,
// which compaction keeps bounded by the live entries.
func TestExpiryHeapStaysBounded(t *testing.T) {
	opts, _ := testOptions(t, 100)
	opts.SSDCapacityBytes = Disabled
	c := newTestCache(t, opts)
	ctx := t.Context()
	for range 10_000 {
		require.NoError(t, c.Put(ctx, skey(1), val("o"), PutOptions{TTL: time.Hour}))
	}
	s := c.shards[0]
	s.mu.Lock()
	defer s.mu.Unlock()
	require.LessOrEqual(t, len(s.expiring), 65)
}
