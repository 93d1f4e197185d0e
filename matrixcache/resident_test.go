package matrixcache

import (
	"bytes"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/internal/fakeclock"
)

// residentOptions is testOptions with a resident tier between DRAM and SSD.
func residentOptions(t *testing.T, n int) (Options, *fakeclock.Clock) {
	opts, clk := testOptions(t, n)
	opts.ResidentPath = t.TempDir()
	opts.ResidentCapacityBytes = 1 << 20
	return opts, clk
}

func getTier(t *testing.T, c *Cache, k blockfmt.Key) ([]byte, Tier) {
	t.Helper()
	v, tier, ok, err := c.Get(t.Context(), k)
	require.NoError(t, err)
	if !ok {
		return nil, TierNone
	}
	return v, tier
}

// A DRAM victim read often enough for the resident tier goes there (and its
// SSD copy stays); colder victims only keep their SSD copies. A resident hit
// refills DRAM.
func TestEvictionDemotesHotVictimsToTheResidentTier(t *testing.T) {
	opts, _ := residentOptions(t, 2)
	c := newTestCache(t, opts)
	ctx := t.Context()
	for i := range 5 { // never read: object hotness 2, below the resident threshold 4
		require.NoError(t, c.Put(ctx, skey(i), val("c"), PutOptions{}))
	}
	st := c.Stats()
	require.Positive(t, st.DRAM.Evictions)
	require.Zero(t, st.Resident.Demotions, "cold victims skip the resident tier")
	require.EqualValues(t, 5, st.SSD.Puts, "written through")

	require.NoError(t, c.Put(ctx, skey(10), val("a"), PutOptions{}))
	demoteToResident(t, c, skey(10))
	for i := 100; i < 120; i++ { // room in DRAM for the refill
		_, err := c.Delete(ctx, skey(i))
		require.NoError(t, err)
	}
	v, tier := getTier(t, c, skey(10))
	require.Equal(t, TierResident, tier)
	require.Equal(t, val("a"), v)
	_, tier = getTier(t, c, skey(10))
	require.Equal(t, TierDRAM, tier, "a resident hit refills DRAM")
	v, tier = getTier(t, c, skey(0))
	require.Equal(t, TierSSD, tier)
	require.Equal(t, val("c"), v)
	st = c.Stats()
	require.Positive(t, st.Resident.Hits)
	require.Positive(t, st.SSD.Hits)
}

// demoteToResident reads k until it is hot enough for the resident tier
// (object hotness 2 → 4), then writes and reads other keys until DRAM
// evicts k to the resident tier.
func demoteToResident(t *testing.T, c *Cache, k blockfmt.Key) {
	t.Helper()
	for range 2 {
		_, tier := getTier(t, c, k)
		require.Equal(t, TierDRAM, tier)
	}
	for i := 100; i < 120; i++ {
		if _, ok, err := c.res.Get(k); err == nil && ok {
			return
		}
		require.NoError(t, c.Put(t.Context(), skey(i), val("b"), PutOptions{}))
		for range 3 {
			getTier(t, c, skey(i))
		}
	}
	t.Fatalf("%v never reached the resident tier", k)
}

// A value DRAM does not take goes to the resident tier when its hotness
// admits it there; Peek serves it without refilling DRAM.
func TestAValueDRAMRefusesFallsBackToTheResidentTier(t *testing.T) {
	opts, _ := residentOptions(t, 4)
	opts.MaxDRAMBlockBytes = 16
	opts.ResidentHotnessThreshold = 2
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("big"), PutOptions{}))
	st := c.Stats()
	require.Zero(t, st.DRAM.Entries)
	require.EqualValues(t, 1, st.Resident.Puts)
	require.EqualValues(t, 1, st.SSD.Puts, "the resident tier's blocks have SSD copies")

	v, tier, ok, err := c.Peek(ctx, skey(1))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierResident, tier)
	require.Equal(t, val("big"), v)
	require.Zero(t, c.Stats().Resident.Hits, "Peek counts nothing")
	_, tier = getTier(t, c, skey(1))
	require.Equal(t, TierResident, tier, "too large for a DRAM block")
	require.EqualValues(t, 1, c.Stats().RefillFailures)
}

// Side by side, values above the threshold live in the resident tier and the
// rest in DRAM; an SSD hit DRAM cannot take is refilled into the resident
// tier.
func TestSideBySidePlacement(t *testing.T) {
	opts, _ := residentOptions(t, 4)
	opts.Placement = PlacementSideBySide
	opts.PlacementThresholdBytes = 16
	opts.MaxDRAMBlockBytes = 16
	c := newTestCache(t, opts)
	ctx := t.Context()
	small, large := []byte("small"), bytes.Repeat([]byte("L"), 64)
	require.NoError(t, c.Put(ctx, skey(1), small, PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(2), large, PutOptions{}))
	_, tier := getTier(t, c, skey(1))
	require.Equal(t, TierDRAM, tier)
	v, tier := getTier(t, c, skey(2))
	require.Equal(t, TierResident, tier)
	require.Equal(t, large, v)

	_, err := c.res.Delete(ctx, skey(2)) // as if the resident tier had evicted it
	require.NoError(t, err)
	v, tier = getTier(t, c, skey(2))
	require.Equal(t, TierSSD, tier)
	require.Equal(t, large, v)
	require.EqualValues(t, 1, c.Stats().Resident.Promotions)
	_, tier = getTier(t, c, skey(2))
	require.Equal(t, TierResident, tier)
}

// The last write wins across all three tiers: a write that does not reach
// the resident tier drops its older copy there.
func TestLastWriteWinsAcrossThreeTiers(t *testing.T) {
	opts, _ := residentOptions(t, 2)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("old"), PutOptions{}))
	demoteToResident(t, c, skey(1))
	require.NoError(t, c.Put(ctx, skey(1), []byte("new"), PutOptions{})) // DRAM and SSD only
	require.EqualValues(t, 1, c.Stats().Resident.StaleCopiesDropped)
	_, ok, err := c.res.Get(skey(1))
	require.NoError(t, err)
	require.False(t, ok)
	for i := 200; i < 220; i++ { // push the new value out of DRAM
		require.NoError(t, c.Put(ctx, skey(i), val("x"), PutOptions{}))
	}
	v, _ := getTier(t, c, skey(1))
	require.Equal(t, []byte("new"), v)
}

// An unflushed resident tier is emptied at start (values then come from the
// SSD tier); a durable one is recovered into DRAM, and an expired block is
// never served from it, before or after a restart.
func TestResidentTierAcrossRestarts(t *testing.T) {
	for _, durable := range []bool{false, true} {
		opts, clk := residentOptions(t, 4)
		opts.MaxDRAMBlockBytes = 16
		opts.ResidentHotnessThreshold = 2
		opts.ResidentDurable = durable
		c, err := New(t.Context(), opts)
		require.NoError(t, err)
		ctx := t.Context()
		require.NoError(t, c.Put(ctx, skey(1), val("keep"), PutOptions{}))
		require.NoError(t, c.Put(ctx, skey(2), val("gone"), PutOptions{TTL: time.Minute}))
		require.EqualValues(t, 2, c.Stats().Resident.Entries)
		clk.Advance(2 * time.Minute)
		_, tier := getTier(t, c, skey(2))
		require.Equal(t, TierNone, tier, "expired in the resident tier")
		require.NoError(t, c.Close())

		opts.MaxDRAMBlockBytes = 0
		opts.AutoRecoverOnStart = true
		c = newTestCache(t, opts)
		st := c.Stats()
		if durable {
			require.EqualValues(t, 1, st.ResidentStore.Entries)
			require.EqualValues(t, 1, st.Recovered)
		} else {
			require.Zero(t, st.ResidentStore.Entries)
		}
		v, tier := getTier(t, c, skey(1))
		require.Equal(t, val("keep"), v)
		if durable {
			require.Equal(t, TierDRAM, tier, "recovered")
		} else {
			require.Equal(t, TierDRAM, tier, "recovered from the SSD tier")
		}
		_, tier = getTier(t, c, skey(2))
		require.Equal(t, TierNone, tier, "expired after the restart")
	}
}

// Invalidation and expiry purges reach the resident tier.
func TestInvalidationAndPurgeReachTheResidentTier(t *testing.T) {
	opts, clk := residentOptions(t, 8)
	opts.ResidentHotnessThreshold = 2
	c := newTestCache(t, opts)
	ctx := t.Context()
	for i := range 4 {
		require.NoError(t, c.Put(ctx, cachekey.String(1, "user:"+string(rune('a'+i))), val("v"), PutOptions{}))
	}
	require.NoError(t, c.Put(ctx, cachekey.String(1, "post:a"), val("v"), PutOptions{TTL: time.Second}))
	r, err := c.DeletePrefix(ctx, 1, "user:")
	require.NoError(t, err)
	require.Equal(t, InvalidateReport{DRAM: 4, Resident: 4, SSD: 4}, r)
	clk.Advance(time.Minute)
	r, err = c.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, InvalidateReport{DRAM: 1, Resident: 1, SSD: 1}, r)
	found, err := c.Delete(ctx, cachekey.String(1, "user:a"))
	require.NoError(t, err)
	require.False(t, found)
	require.Zero(t, c.Stats().ResidentStore.Entries)
}
