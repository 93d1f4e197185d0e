package matrixcache

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// AcquireBatch answers like a loop of Acquire: a DRAM key repeated is pinned
// at every position, an SSD-only key repeated is read from the SSD tier
// once, a missing key is nil; releasing every handle balances the pins.
func TestAcquireBatchCoalescesAndBalancesPins(t *testing.T) {
	opts, _ := testOptions(t, 8)
	opts.MaxDRAMBlockBytes = 40 // "big" values stay on the SSD tier
	c := newTestCache(t, opts)
	ctx := t.Context()
	small, big := skey(1), skey(2)
	require.NoError(t, c.Put(ctx, small, []byte("small"), PutOptions{}))
	bigVal := append(val("b"), val("b")...)
	require.NoError(t, c.Put(ctx, big, bigVal, PutOptions{}))
	missing := skey(3)

	before := c.Stats()
	keys := []blockfmt.Key{small, big, small, missing, big, small}
	hs, err := c.AcquireBatch(ctx, keys)
	require.NoError(t, err)
	require.Len(t, hs, len(keys))
	require.Nil(t, hs[3])
	for i, k := range keys {
		if k == missing {
			continue
		}
		require.NotNil(t, hs[i], "position %d", i)
		require.Equal(t, k, hs[i].Key())
	}
	require.Equal(t, []byte("small"), hs[0].Value())
	require.Equal(t, TierDRAM, hs[0].Tier())
	require.Equal(t, bigVal, hs[1].Value())
	require.Equal(t, TierSSD, hs[1].Tier())
	require.Equal(t, bigVal, hs[4].Value())

	st := c.Stats()
	require.Equal(t, int64(2), st.SSDStore.Gets-before.SSDStore.Gets, "one SSD lookup each for the SSD-only key and the missing one")
	require.Equal(t, int64(1), st.BatchReadsCoalesced-before.BatchReadsCoalesced)
	require.Equal(t, int64(1), st.PinnedEntries)
	require.Equal(t, int64(3), st.Pins-before.Pins, "every DRAM position holds a pin")

	for _, h := range hs {
		if h != nil {
			h.Release()
		}
	}
	st = c.Stats()
	require.Zero(t, st.PinnedEntries)
	require.Equal(t, st.Pins, st.Unpins)
}

// A closed cache refuses the batch and pins nothing.
func TestAcquireBatchOnAClosedCache(t *testing.T) {
	opts, _ := testOptions(t, 8)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	require.NoError(t, c.Close())
	_, err := c.AcquireBatch(ctx, []blockfmt.Key{skey(1), skey(1)})
	require.ErrorIs(t, err, ErrClosed)
	require.Zero(t, c.Stats().PinnedEntries)
}
