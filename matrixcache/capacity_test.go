package matrixcache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Shrinking DRAM evicts down to the new capacity in one call, demoting the
// live victims and dropping expired ones without demoting them; growing it
// again admits new values.
func TestSetDRAMCapacityShrinksAtOnce(t *testing.T) {
	opts, clk := testOptions(t, 8)
	opts.SSDCapacityBytes, opts.SSDPath = Disabled, ""
	c := newTestCache(t, opts)
	ctx := t.Context()
	for i := range 8 {
		var ttl time.Duration
		if i%2 == 0 {
			ttl = time.Second
		}
		require.NoError(t, c.Put(ctx, skey(i), val("v"), PutOptions{TTL: ttl}))
	}
	require.EqualValues(t, 8, c.Stats().DRAM.Entries)
	clk.Advance(time.Minute)
	one := entryCost(skey(0), 32)
	require.NoError(t, c.SetDRAMCapacity(ctx, 2*one))
	st := c.Stats()
	require.LessOrEqual(t, st.DRAM.Bytes, 2*one)
	require.EqualValues(t, 6, st.DRAM.Evictions, "one call evicted them all")
	require.GreaterOrEqual(t, st.DRAM.Expired, int64(3), "expired victims are counted, not demoted")
	require.Zero(t, st.DRAM.Demotions)

	require.NoError(t, c.SetDRAMCapacity(ctx, 8*one))
	for i := 10; i < 16; i++ {
		require.NoError(t, c.Put(ctx, skey(i), val("w"), PutOptions{}))
	}
	require.Greater(t, c.Stats().DRAM.Entries, int64(2))
	require.ErrorIs(t, c.SetDRAMCapacity(ctx, -1), ErrInvalidCapacity)
}

// A shrink never drops a pinned entry: it stays above the capacity until
// released, and the next shrink takes it.
func TestSetDRAMCapacityKeepsPins(t *testing.T) {
	opts, _ := testOptions(t, 4)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("p"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(2), val("q"), PutOptions{}))
	h, err := c.Acquire(ctx, skey(1))
	require.NoError(t, err)
	require.NoError(t, c.SetDRAMCapacity(ctx, 1))
	st := c.Stats()
	require.Greater(t, st.DRAM.Bytes, int64(1))
	require.EqualValues(t, 1, st.PinnedEntries)
	_, tier := getTier(t, c, skey(1))
	require.Equal(t, TierDRAM, tier)
	h.Release()
	require.NoError(t, c.SetDRAMCapacity(ctx, 1))
	st = c.Stats()
	require.LessOrEqual(t, st.DRAM.Bytes, int64(1))
	require.Zero(t, st.DRAM.Entries)
	v, tier := getTier(t, c, skey(1))
	require.Equal(t, TierSSD, tier, "the SSD copy remains")
	require.Equal(t, val("p"), v)
}
