package matrixcache

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/policy"
)

// dramOnlyOptions is a one-shard cache with room for n 32-byte values in
// DRAM and no lower tier, so an evicted key is gone.
func dramOnlyOptions(t *testing.T, n int, policy string) Options {
	opts, _ := testOptions(t, n)
	opts.Policy = policy
	opts.SSDCapacityBytes, opts.SSDPath = Disabled, ""
	return opts
}

// inDRAM reports whether DRAM holds key, without recording a hit.
func inDRAM(t *testing.T, c *Cache, k blockfmt.Key) bool {
	t.Helper()
	_, tier, ok, err := c.Peek(t.Context(), k)
	require.NoError(t, err)
	return ok && tier == TierDRAM
}

// The same sequence under each policy: four keys fill DRAM, the first is
// read most and overwritten, then a fifth key needs room. FIFO evicts the
// oldest insertion, the key read most; the others keep it.
func TestPolicyChoiceDecidesWhetherTheKeyReadMostSurvives(t *testing.T) {
	tests := []struct {
		policy       string
		hotSurvives  bool
		wantEvicted  []int // nil: not checked
		wantResident []int
	}{
		{policy: "fifo", hotSurvives: false, wantEvicted: []int{1}, wantResident: []int{2, 3, 4, 5}},
		{policy: "FIFO", hotSurvives: false, wantEvicted: []int{1}, wantResident: []int{2, 3, 4, 5}},
		{policy: "slru", hotSurvives: true, wantEvicted: []int{2}, wantResident: []int{1, 3, 4, 5}},
		{policy: "arc", hotSurvives: true, wantEvicted: []int{2}, wantResident: []int{1, 3, 4, 5}},
		{policy: "tinylfu", hotSurvives: true}, // may refuse the newcomer instead
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			c := newTestCache(t, dramOnlyOptions(t, 4, tt.policy))
			ctx := t.Context()
			for i := 1; i <= 4; i++ {
				require.NoError(t, c.Put(ctx, skey(i), val("v"), PutOptions{}))
			}
			for range 6 {
				_, tier := getTier(t, c, skey(1))
				require.Equal(t, TierDRAM, tier)
			}
			require.NoError(t, c.Put(ctx, skey(1), val("w"), PutOptions{}), "an overwrite")
			c.Stats() // hands the recorded hits to the policy

			require.NoError(t, c.Put(ctx, skey(5), val("n"), PutOptions{}))
			require.Equal(t, tt.hotSurvives, inDRAM(t, c, skey(1)))
			for _, k := range tt.wantEvicted {
				require.False(t, inDRAM(t, c, skey(k)), "key %d", k)
			}
			for _, k := range tt.wantResident {
				require.True(t, inDRAM(t, c, skey(k)), "key %d", k)
			}
			require.LessOrEqual(t, c.Stats().DRAM.Entries, int64(4))
		})
	}
}

// Under FIFO, DRAM evicts in insertion order however the keys are read, and
// an overwrite does not make a key younger.
func TestFIFOCacheEvictsInInsertionOrder(t *testing.T) {
	c := newTestCache(t, dramOnlyOptions(t, 4, "fifo"))
	ctx := t.Context()
	for i := 1; i <= 4; i++ {
		require.NoError(t, c.Put(ctx, skey(i), val("v"), PutOptions{}))
	}
	for i := 4; i >= 1; i-- { // read in reverse, the oldest most
		for range i {
			getTier(t, c, skey(i))
		}
	}
	require.NoError(t, c.Put(ctx, skey(2), val("w"), PutOptions{}))
	c.Stats()
	for next := 5; next <= 8; next++ {
		require.NoError(t, c.Put(ctx, skey(next), val("n"), PutOptions{}))
		gone := next - 4
		require.False(t, inDRAM(t, c, skey(gone)), "inserting %d evicts %d", next, gone)
		for k := gone + 1; k <= next; k++ {
			require.True(t, inDRAM(t, c, skey(k)), "inserting %d keeps %d", next, k)
		}
	}
	st := c.Stats()
	require.EqualValues(t, 4, st.DRAM.Entries)
	require.EqualValues(t, 4, st.DRAM.Evictions)
}

// ARC keeps keys read more than once over a scan of keys written once.
func TestARCCacheKeepsReusedKeysOverAScan(t *testing.T) {
	c := newTestCache(t, dramOnlyOptions(t, 16, "arc"))
	ctx := t.Context()
	for i := range 8 {
		require.NoError(t, c.Put(ctx, skey(i), val("h"), PutOptions{}))
		getTier(t, c, skey(i))
	}
	c.Stats()
	for i := 100; i < 400; i++ {
		require.NoError(t, c.Put(ctx, skey(i), val("s"), PutOptions{}))
	}
	for i := range 8 {
		require.True(t, inDRAM(t, c, skey(i)), "key %d", i)
	}
}

func TestPolicyNamesPickTheirPolicy(t *testing.T) {
	tests := []struct {
		name string
		want any
	}{
		{"", (*policy.TinyLFU)(nil)},
		{"TinyLFU", (*policy.TinyLFU)(nil)},
		{"slru", (*policy.SLRU)(nil)},
		{"fifo", (*policy.FIFO)(nil)},
		{" Fifo ", (*policy.FIFO)(nil)},
		{"arc", (*policy.ARC)(nil)},
		{"ARC", (*policy.ARC)(nil)},
		{"WeightedHotnessLru", (*policy.TinyLFU)(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCache(t, dramOnlyOptions(t, 4, tt.name))
			for _, s := range c.shards {
				require.IsType(t, tt.want, s.pol)
			}
		})
	}
}
