package matrixcache

import (
	"bytes"
	"context"
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/internal/fakeclock"
)

// testOptions is a one-shard cache with room for n 32-byte string values in
// DRAM, an SSD tier in a test directory, and a fake clock.
func testOptions(t *testing.T, n int) (Options, *fakeclock.Clock) {
	clk := fakeclock.New()
	return Options{
		DRAMCapacityBytes:  int64(n) * entryCost(cachekey.String(0, "k00"), 32),
		Shards:             1,
		Policy:             "slru",
		SSDPath:            t.TempDir(),
		SSDNoSync:          true,
		Clock:              clk,
		LatencySampleEvery: 1,
	}, clk
}

func newTestCache(t *testing.T, opts Options) *Cache {
	t.Helper()
	c, err := New(t.Context(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

func val(s string) []byte { return bytes.Repeat([]byte(s), 32/len(s)) }

func skey(i int) blockfmt.Key { return cachekey.String(0, fmt.Sprintf("k%02d", i)) }

func TestPutThenGetReturnsTheBytesAndTier(t *testing.T) {
	opts, _ := testOptions(t, 4)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	v, tier, ok, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierDRAM, tier)
	require.Equal(t, val("a"), v)

	v[0] = 'z' // Get returns a copy
	v, _, _, err = c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.Equal(t, val("a"), v)

	_, tier, ok, err = c.Get(ctx, skey(2))
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, TierNone, tier)
	st := c.Stats()
	require.EqualValues(t, 2, st.DRAM.Hits)
	require.EqualValues(t, 1, st.Misses)
	require.EqualValues(t, 1, st.SSD.Puts, "written through to SSD")
	require.EqualValues(t, 3, st.GetLatency.Samples)
	require.EqualValues(t, 1, st.PutLatency.Samples)
	require.EqualValues(t, 1, st.ReadThroughLatency.Samples, "only the miss read the SSD tier")
	require.Positive(t, st.GetLatency.Percentile(99))
}

func TestDRAMOverCapacityEvictsButTheSSDCopyRemains(t *testing.T) {
	opts, _ := testOptions(t, 1)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(2), val("b"), PutOptions{}))
	st := c.Stats()
	require.EqualValues(t, 1, st.DRAM.Entries)
	require.GreaterOrEqual(t, st.DRAM.Evictions, int64(1))

	v, tier, ok, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierSSD, tier)
	require.Equal(t, val("a"), v)
	require.EqualValues(t, 1, c.Stats().SSD.Hits)
}

func TestValueLargerThanADRAMBlockIsStoredOnSSDOnly(t *testing.T) {
	opts, _ := testOptions(t, 4)
	opts.MaxDRAMBlockBytes = 16
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	st := c.Stats()
	require.EqualValues(t, 0, st.DRAM.Entries)
	require.EqualValues(t, 1, st.SSD.Puts)

	v, tier, ok, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierSSD, tier)
	require.Equal(t, val("a"), v)
	require.EqualValues(t, 1, c.Stats().RefillFailures)
}

func TestValueNoTierAcceptsIsRefused(t *testing.T) {
	opts, _ := testOptions(t, 4)
	opts.MaxSSDBlockBytes = 16
	c := newTestCache(t, opts)
	err := c.Put(t.Context(), skey(1), val("a"), PutOptions{})
	require.ErrorIs(t, err, ErrTooLarge)
	_, _, ok, err := c.Get(t.Context(), skey(1))
	require.NoError(t, err)
	require.False(t, ok)
	st := c.Stats()
	require.EqualValues(t, 1, st.Rejected)
	require.Zero(t, st.DRAM.Entries, "a write no tier accepts leaves nothing behind")
	require.Zero(t, st.SSD.Entries)

	// Nor does the value it failed to replace survive it.
	require.NoError(t, c.Put(t.Context(), skey(2), []byte("old"), PutOptions{}))
	require.ErrorIs(t, c.Put(t.Context(), skey(2), val("a"), PutOptions{}), ErrTooLarge)
	_, _, ok, err = c.Get(t.Context(), skey(2))
	require.NoError(t, err)
	require.False(t, ok)
	st = c.Stats()
	require.Zero(t, st.DRAM.Entries)
	require.Zero(t, st.SSD.Entries)
}

func TestSSDDurabilityOnAndOffBothStoreAndServeEvictedEntries(t *testing.T) {
	require.False(t, Options{}.withDefaults().SSDNoSync, "SSD writes are flushed by default")
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("nosync=%v", noSync), func(t *testing.T) {
			opts, _ := testOptions(t, 4)
			opts.SSDNoSync = noSync
			c := newTestCache(t, opts)
			ctx := t.Context()
			items := make([]Item, 256)
			for i := range items {
				items[i] = Item{Key: cachekey.String(0, fmt.Sprintf("e%03d", i)), Value: []byte(fmt.Sprintf("value-%03d", i))}
			}
			require.NoError(t, c.PutBatch(ctx, items))
			require.Positive(t, c.Stats().DRAM.Evictions)
			for _, it := range items {
				v, _, ok, err := c.Peek(ctx, it.Key)
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, it.Value, v)
			}
		})
	}
}

func TestSSDHitPromotesBackToDRAM(t *testing.T) {
	opts, _ := testOptions(t, 1)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(2), val("b"), PutOptions{}))
	_, tier, _, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.Equal(t, TierSSD, tier)
	_, tier, _, err = c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.Equal(t, TierDRAM, tier)
	st := c.Stats()
	require.EqualValues(t, 1, st.DRAM.Promotions)
	require.EqualValues(t, 1, st.DRAM.Hits)
}

func TestPeekNeverRefillsDRAMNorCountsHits(t *testing.T) {
	opts, _ := testOptions(t, 1)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(2), val("b"), PutOptions{}))
	before := c.Stats()
	for range 3 {
		v, tier, ok, err := c.Peek(ctx, skey(1))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, TierSSD, tier)
		require.Equal(t, val("a"), v)
	}
	v, tier, ok, err := c.Peek(ctx, skey(2))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierDRAM, tier)
	require.Equal(t, val("b"), v)
	after := c.Stats()
	require.Equal(t, before.DRAM, after.DRAM)
	require.Equal(t, before.SSD.Hits, after.SSD.Hits)
	require.Equal(t, before.Misses, after.Misses)
}

// batchFixture fills a cache with a resident key, an SSD-only key and an
// expired key, and returns the cache and a mixed key list.
func batchFixture(t *testing.T) (*Cache, []blockfmt.Key) {
	opts, clk := testOptions(t, 1)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))                 // SSD only after the next put
	require.NoError(t, c.Put(ctx, skey(3), val("c"), PutOptions{TTL: time.Second})) // expires
	require.NoError(t, c.Put(ctx, skey(2), val("b"), PutOptions{}))                 // resident
	clk.Advance(2 * time.Second)
	return c, []blockfmt.Key{skey(2), skey(1), skey(9), skey(2), skey(3), skey(1), skey(9)}
}

// bigFixture holds two values too large for a DRAM block (opts says so),
// so that every read of them reads a lower tier and fails to refill.
func bigFixture(t *testing.T, opts Options) (*Cache, []blockfmt.Key) {
	c := newTestCache(t, opts)
	require.NoError(t, c.Put(t.Context(), skey(1), val("a"), PutOptions{}))
	require.NoError(t, c.Put(t.Context(), skey(2), val("b"), PutOptions{}))
	return c, []blockfmt.Key{skey(1), skey(1), skey(2), skey(1), skey(2), skey(9), skey(9)}
}

// GetBatch gives the results and the hit and miss counters of a loop of
// Get, while each distinct key reads the SSD tier once and is refilled at
// most once.
func TestGetBatchIsALoopOfGetOnValuesAndCounters(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fixture func(*testing.T) (*Cache, []blockfmt.Key)
		// SSD reads and refills (successful or not) of the batch and the loop.
		batchReads, loopReads     int64
		batchRefills, loopRefills int64
		coalesced, residentReads  int64
	}{
		// 1 refills and evicts 2, 2 refills and evicts 1, 3 has expired,
		// 9 is absent: the loop reads 1 and 9 twice, and refills 1 twice.
		{"mixed", batchFixture, 4, 6, 2, 3, 2, 0},
		{"too large for DRAM", func(t *testing.T) (*Cache, []blockfmt.Key) {
			opts, _ := testOptions(t, 4)
			opts.MaxDRAMBlockBytes = 16
			return bigFixture(t, opts)
		}, 3, 7, 2, 5, 4, 0},
		// The resident tier answers 1 and 2; only 9 reaches the SSD tier.
		{"resident tier", func(t *testing.T) (*Cache, []blockfmt.Key) {
			opts, _ := residentOptions(t, 4)
			opts.ResidentHotnessThreshold = 2
			opts.MaxDRAMBlockBytes = 16
			return bigFixture(t, opts)
		}, 1, 2, 2, 5, 4, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			a, keys := tc.fixture(t)
			b, _ := tc.fixture(t)
			a0, b0 := a.Stats(), b.Stats()

			got, err := a.GetBatch(ctx, keys)
			require.NoError(t, err)
			require.Len(t, got, len(keys))
			var want []Result
			for _, k := range keys {
				v, tier, ok, err := b.Get(ctx, k)
				require.NoError(t, err)
				want = append(want, Result{Value: v, Tier: tier, Found: ok})
			}
			require.Equal(t, want, got)
			got[0].Value[0] = 'z'
			require.NotEqual(t, got[0].Value, got[1].Value, "each position has its own copy")

			sa, sb := a.Stats(), b.Stats()
			require.Equal(t, sb.DRAM.Hits, sa.DRAM.Hits)
			require.Equal(t, sb.DRAM.Misses, sa.DRAM.Misses)
			require.Equal(t, sb.Resident.Hits, sa.Resident.Hits)
			require.Equal(t, sb.Resident.Misses, sa.Resident.Misses)
			require.Equal(t, sb.SSD.Hits, sa.SSD.Hits)
			require.Equal(t, sb.SSD.Misses, sa.SSD.Misses)
			require.Equal(t, sb.Misses, sa.Misses)
			require.Equal(t, tc.batchReads, sa.SSDStore.Gets-a0.SSDStore.Gets, "one SSD read per distinct key")
			require.Equal(t, tc.loopReads, sb.SSDStore.Gets-b0.SSDStore.Gets)
			refills := func(s, s0 Stats) int64 {
				return s.DRAM.Promotions + s.RefillFailures - s0.DRAM.Promotions - s0.RefillFailures
			}
			require.Equal(t, tc.batchRefills, refills(sa, a0), "one refill per distinct key")
			require.Equal(t, tc.loopRefills, refills(sb, b0))
			require.Equal(t, tc.residentReads, sa.ResidentStore.Gets-a0.ResidentStore.Gets, "the resident tier, too, is read once per distinct key")
			require.Equal(t, tc.coalesced, sa.BatchReadsCoalesced)
			require.Zero(t, sb.BatchReadsCoalesced)
		})
	}
	a, keys := batchFixture(t)
	got, err := a.GetBatch(t.Context(), keys)
	require.NoError(t, err)
	require.Equal(t, val("b"), got[0].Value)
	require.True(t, got[3].Found, "a duplicate is answered at every position")
	require.False(t, got[4].Found, "an expired key is a miss")
}

// PutBatch writes each key once, with its last item, to every tier: it is
// a loop of Put over the last item of each key.
func TestPutBatchIsALoopOfPutOverEachKeysLastItem(t *testing.T) {
	ctx := t.Context()
	oa, _ := testOptions(t, 2)
	ob, _ := testOptions(t, 2)
	a, b := newTestCache(t, oa), newTestCache(t, ob)
	// 4 and 5 are on SSD already: updating them writes once too.
	for _, c := range []*Cache{a, b} {
		require.NoError(t, c.Put(ctx, skey(4), val("o"), PutOptions{}))
		require.NoError(t, c.Put(ctx, skey(5), val("o"), PutOptions{}))
	}
	a0 := a.Stats()
	items := []Item{
		{Key: skey(1), Value: val("a")}, {Key: skey(4), Value: val("x")}, {Key: skey(2), Value: val("b")},
		{Key: skey(1), Value: val("c")}, {Key: skey(3), Value: val("d")}, {Key: skey(4), Value: val("y")},
		{Key: skey(5), Value: val("z")}, {Key: skey(1), Value: val("e"), Options: PutOptions{TTL: time.Hour}},
	}
	require.NoError(t, a.PutBatch(ctx, items))
	for _, i := range []int{2, 4, 5, 6, 7} { // the last item of each key
		it := items[i]
		require.NoError(t, b.Put(ctx, it.Key, it.Value, it.Options))
	}
	for i := 1; i <= 5; i++ {
		va, ta, _, err := a.Peek(ctx, skey(i))
		require.NoError(t, err)
		vb, tb, _, err := b.Peek(ctx, skey(i))
		require.NoError(t, err)
		require.Equal(t, vb, va)
		require.Equal(t, tb, ta)
	}
	v, _, _, err := a.Peek(ctx, skey(1))
	require.NoError(t, err)
	require.Equal(t, val("e"), v, "the last item of a key wins")
	v, _, _, err = a.Peek(ctx, skey(4))
	require.NoError(t, err)
	require.Equal(t, val("y"), v)

	sa, sb := a.Stats(), b.Stats()
	require.Equal(t, sb.DRAM.Puts, sa.DRAM.Puts)
	require.Equal(t, sb.DRAM.Evictions, sa.DRAM.Evictions)
	require.Equal(t, sb.SSD.Puts, sa.SSD.Puts)
	require.EqualValues(t, 5, sa.SSDStore.Puts-a0.SSDStore.Puts, "one SSD write per distinct key")
	require.Equal(t, a0.SSDStore.Deletes, sa.SSDStore.Deletes, "an update of an SSD key is one write, no delete")
	require.EqualValues(t, 3, sa.BatchWritesCoalesced)
	require.Zero(t, sb.BatchWritesCoalesced)

	// A skipped item is not even checked: only the last one counts.
	require.NoError(t, a.PutBatch(ctx, []Item{{Key: skey(6), Value: make([]byte, 64<<20)}, {Key: skey(6), Value: val("s")}}))
	v, _, _, err = a.Peek(ctx, skey(6))
	require.NoError(t, err)
	require.Equal(t, val("s"), v)
	require.ErrorIs(t, a.PutBatch(ctx, []Item{{Key: skey(6), Value: val("t")}, {Key: skey(6), Value: make([]byte, 64<<20)}}), ErrTooLarge)
}

func TestLastWriteWinsAcrossTiers(t *testing.T) {
	opts, _ := testOptions(t, 4)
	opts.MaxDRAMBlockBytes = 40
	c := newTestCache(t, opts)
	ctx := t.Context()
	k := skey(1)
	big := bytes.Repeat([]byte("B"), 64) // too large for DRAM: SSD only
	for i := range 20 {                  // across the hotness threshold
		small := []byte(fmt.Sprintf("value-%02d", i))
		require.NoError(t, c.Put(ctx, k, small, PutOptions{}))
		if i%3 == 0 {
			v, _, ok, err := c.Get(ctx, k)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, small, v)
		}
		require.NoError(t, c.Put(ctx, k, big, PutOptions{}))
		v, tier, ok, err := c.Get(ctx, k)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, TierSSD, tier)
		require.Equal(t, big, v, "the SSD-only write drops the older DRAM copy")
	}
	st := c.Stats()
	require.Positive(t, st.DRAM.StaleCopiesDropped)
	require.EqualValues(t, 0, st.DRAM.Entries)

	// A rewrite reaches the SSD copy too.
	require.NoError(t, c.Put(ctx, k, []byte("final"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(2), val("x"), PutOptions{}))
	for i := 3; i < 10; i++ { // push k out of DRAM
		require.NoError(t, c.Put(ctx, skey(i), val("y"), PutOptions{}))
	}
	v, _, ok, err := c.Get(ctx, k)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []byte("final"), v)
}

func TestDRAMOnlyWriteDropsTheOlderSSDCopy(t *testing.T) {
	opts, _ := testOptions(t, 4)
	c := newTestCache(t, opts)
	ctx := t.Context()
	k := blockfmt.Key{Shard: 0, Record: "r", Namespace: "other", Selector: "s"}       // hotness 0: memory only
	require.NoError(t, c.Put(ctx, k, bytes.Repeat([]byte("o"), 2<<20), PutOptions{})) // SSD only
	require.NoError(t, c.Put(ctx, k, []byte("new"), PutOptions{}))                    // DRAM only
	require.EqualValues(t, 1, c.Stats().SSD.StaleCopiesDropped)
	_, ok, err := c.ssd.Get(k)
	require.NoError(t, err)
	require.False(t, ok)
	v, tier, ok, err := c.Get(ctx, k)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierDRAM, tier)
	require.Equal(t, []byte("new"), v)
}

func TestEvictionDemotesVictimsTheAdmissionAdmitsToSSD(t *testing.T) {
	opts, _ := testOptions(t, 1)
	c := newTestCache(t, opts)
	ctx := t.Context()
	// Oplog blocks start at hotness 1, below the SSD threshold (2): memory only.
	warm := blockfmt.Key{Record: "warm", Namespace: blockfmt.NamespaceOplog, Selector: "s"}
	cold := blockfmt.Key{Record: "cold", Namespace: blockfmt.NamespaceOplog, Selector: "s"}
	require.NoError(t, c.Put(ctx, warm, []byte("w"), PutOptions{}))
	require.EqualValues(t, 0, c.Stats().SSD.Puts, "a cold block is memory only")
	_, _, _, err := c.Get(ctx, warm) // hotness 2: the SSD threshold
	require.NoError(t, err)
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{})) // evicts warm
	st := c.Stats()
	require.EqualValues(t, 1, st.DRAM.Demotions)
	v, tier, ok, err := c.Peek(ctx, warm)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierSSD, tier)
	require.Equal(t, []byte("w"), v)

	require.NoError(t, c.Put(ctx, cold, []byte("c"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(2), val("b"), PutOptions{})) // evicts cold, never read
	_, _, ok, err = c.Peek(ctx, cold)
	require.NoError(t, err)
	require.False(t, ok, "a victim the admission keeps out of SSD is dropped")
	require.EqualValues(t, 1, c.Stats().DRAM.Demotions)
}

func TestNoReadPathServesAnExpiredEntry(t *testing.T) {
	opts, clk := testOptions(t, 1)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{TTL: time.Second})) // then SSD only
	require.NoError(t, c.Put(ctx, skey(2), val("b"), PutOptions{TTL: time.Second})) // DRAM
	clk.Advance(time.Second)
	for _, k := range []blockfmt.Key{skey(1), skey(2)} {
		_, _, ok, err := c.Peek(ctx, k)
		require.NoError(t, err)
		require.False(t, ok)
		_, _, ok, err = c.Get(ctx, k)
		require.NoError(t, err)
		require.False(t, ok)
		_, err = c.Acquire(ctx, k)
		require.ErrorIs(t, err, ErrNotFound)
		rs, err := c.GetBatch(ctx, []blockfmt.Key{k, k})
		require.NoError(t, err)
		require.False(t, rs[0].Found)
		require.False(t, rs[1].Found)
	}
	require.Positive(t, c.Stats().DRAM.Expired)
}

func TestEntriesNeverExpireWithoutATTL(t *testing.T) {
	opts, clk := testOptions(t, 2)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	clk.Advance(100 * 365 * 24 * time.Hour)
	_, _, ok, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.True(t, ok)
}

func TestAcquireReportsSourceTierRefillsAndPinsBytes(t *testing.T) {
	opts, _ := testOptions(t, 1)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(2), val("b"), PutOptions{})) // skey(1) now SSD only
	h, err := c.Acquire(ctx, skey(1))
	require.NoError(t, err)
	require.Equal(t, TierSSD, h.Tier())
	require.Equal(t, val("a"), h.Value())
	st := c.Stats()
	require.EqualValues(t, 1, st.PinnedEntries)
	require.EqualValues(t, 32, st.PinnedBytes)
	h2, err := c.Acquire(ctx, skey(1))
	require.NoError(t, err)
	require.Equal(t, TierDRAM, h2.Tier(), "the refilled copy answers next")
	h.Release()
	require.EqualValues(t, 1, c.Stats().PinnedEntries, "pinned until the last release")
	h2.Release()
	h2.Release() // idempotent
	st = c.Stats()
	require.EqualValues(t, 0, st.PinnedEntries)
	require.EqualValues(t, 0, st.PinnedBytes)
	require.EqualValues(t, 2, st.Pins)
	require.EqualValues(t, 2, st.Unpins)

	_, err = c.Acquire(ctx, skey(7))
	require.ErrorIs(t, err, ErrNotFound)
}

func TestPinnedEntrySurvivesCapacityEviction(t *testing.T) {
	opts, _ := testOptions(t, 2)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	h, err := c.Acquire(ctx, skey(1))
	require.NoError(t, err)
	for i := 2; i < 20; i++ {
		require.NoError(t, c.Put(ctx, skey(i), val("x"), PutOptions{}))
	}
	_, tier, ok, err := c.Peek(ctx, skey(1))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierDRAM, tier)
	h.Release()
	for i := 20; i < 30; i++ {
		require.NoError(t, c.Put(ctx, skey(i), val("x"), PutOptions{}))
	}
	_, tier, _, err = c.Peek(ctx, skey(1))
	require.NoError(t, err)
	require.Equal(t, TierSSD, tier, "evictable again after release")
}

func TestExpiredReadKeepsThePin(t *testing.T) {
	opts, clk := testOptions(t, 2)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{TTL: time.Second}))
	h, err := c.Acquire(ctx, skey(1))
	require.NoError(t, err)
	clk.Advance(2 * time.Second)
	_, _, ok, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.False(t, ok)
	require.EqualValues(t, 1, c.Stats().PinnedEntries)
	require.Equal(t, val("a"), h.Value())
	h.Release()
	require.EqualValues(t, 0, c.Stats().PinnedEntries)
}

func TestRemovingAPinnedEntryKeepsTheHandlesBytes(t *testing.T) {
	opts, _ := testOptions(t, 2)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	h, err := c.Acquire(ctx, skey(1))
	require.NoError(t, err)
	found, err := c.Delete(ctx, skey(1))
	require.NoError(t, err)
	require.True(t, found)
	_, _, ok, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, val("a"), h.Value())
	h.Release()
	require.NoError(t, c.Put(ctx, skey(1), val("b"), PutOptions{}))
	st := c.Stats()
	require.EqualValues(t, 1, st.DRAM.Entries)
	require.EqualValues(t, entryCost(skey(1), 32), st.DRAM.Bytes)
	require.EqualValues(t, 0, st.PinnedEntries)
}

func TestOverwriteLeavesAHeldHandlesBytesUnchanged(t *testing.T) {
	opts, _ := testOptions(t, 2)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	h, err := c.Acquire(ctx, skey(1))
	require.NoError(t, err)
	require.NoError(t, c.Put(ctx, skey(1), val("b"), PutOptions{}))
	require.Equal(t, val("a"), h.Value())
	v, _, _, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.Equal(t, val("b"), v)
	require.EqualValues(t, 1, c.Stats().PinnedEntries, "the pin follows the key")
	h.Release()
	require.EqualValues(t, 0, c.Stats().PinnedEntries)
}

func TestInvalidationClearsEveryTier(t *testing.T) {
	opts, _ := testOptions(t, 2)
	c := newTestCache(t, opts)
	ctx := t.Context()
	put := func(k blockfmt.Key) { require.NoError(t, c.Put(ctx, k, val("v"), PutOptions{})) }
	for i := range 4 {
		put(cachekey.String(1, fmt.Sprintf("user:%d", i)))
		put(cachekey.String(1, fmt.Sprintf("post:%d", i)))
		put(cachekey.String(2, fmt.Sprintf("user:%d", i)))
	}
	present := func(k blockfmt.Key) bool {
		_, _, ok, err := c.Peek(ctx, k)
		require.NoError(t, err)
		return ok
	}
	r, err := c.DeletePrefix(ctx, 1, "user:")
	require.NoError(t, err)
	require.Equal(t, 4, r.SSD)
	for i := range 4 {
		require.False(t, present(cachekey.String(1, fmt.Sprintf("user:%d", i))))
		require.True(t, present(cachekey.String(1, fmt.Sprintf("post:%d", i))))
	}
	r, err = c.DeleteShard(ctx, 2)
	require.NoError(t, err)
	require.Equal(t, 4, r.SSD)
	for i := range 4 {
		require.False(t, present(cachekey.String(2, fmt.Sprintf("user:%d", i))))
	}
	found, err := c.Delete(ctx, cachekey.String(1, "post:3"))
	require.NoError(t, err)
	require.True(t, found)
	require.False(t, present(cachekey.String(1, "post:3")))
	found, err = c.Delete(ctx, cachekey.String(1, "post:3"))
	require.NoError(t, err)
	require.False(t, found)
}

func TestConcurrentReadersAndWritersSeeWholeValues(t *testing.T) {
	opts, _ := testOptions(t, 8)
	opts.Shards = 2
	opts.Policy = ""
	c := newTestCache(t, opts)
	ctx := t.Context()
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := range 200 {
				k := skey((i + w) % 24)
				require.NoError(t, c.Put(ctx, k, bytes.Repeat([]byte{byte('a' + (i+w)%24)}, 32), PutOptions{}))
			}
		})
	}
	for r := range 3 {
		wg.Go(func() {
			for i := range 300 {
				k := skey((i * (r + 1)) % 24)
				v, _, ok, err := c.Get(ctx, k)
				require.NoError(t, err)
				if ok {
					require.Len(t, v, 32)
					require.Equal(t, bytes.Repeat(v[:1], 32), v)
				}
				if i%10 == 0 {
					if h, err := c.Acquire(ctx, k); err == nil {
						require.Len(t, h.Value(), 32)
						h.Release()
					}
				}
			}
		})
	}
	wg.Wait()
	st := c.Stats()
	require.LessOrEqual(t, st.DRAM.Bytes, opts.DRAMCapacityBytes)
	require.EqualValues(t, 0, st.PinnedEntries)
	require.NoError(t, c.Put(ctx, skey(1), val("z"), PutOptions{}))
}

func TestAutoRecoverOnStartRefillsDRAMSkippingExpired(t *testing.T) {
	opts, clk := testOptions(t, 3)
	opts.SSDNoSync = false
	ctx := t.Context()
	c, err := New(ctx, opts)
	require.NoError(t, err)
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(2), val("b"), PutOptions{TTL: time.Second}))
	require.NoError(t, c.Put(ctx, skey(3), val("c"), PutOptions{}))
	require.NoError(t, c.Close())
	clk.Advance(2 * time.Second)

	opts.AutoRecoverOnStart = true
	c = newTestCache(t, opts)
	st := c.Stats()
	require.EqualValues(t, 2, st.Recovered)
	require.EqualValues(t, 2, st.DRAM.Entries)
	v, tier, ok, err := c.Get(ctx, skey(3))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierDRAM, tier)
	require.Equal(t, val("c"), v)
	_, _, ok, err = c.Get(ctx, skey(2))
	require.NoError(t, err)
	require.False(t, ok, "an expired entry does not come back after restart")
}

func TestWithoutAutoRecoverTheCacheStartsWithEmptyDRAM(t *testing.T) {
	opts, _ := testOptions(t, 3)
	ctx := t.Context()
	c, err := New(ctx, opts)
	require.NoError(t, err)
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	require.NoError(t, c.Close())
	c = newTestCache(t, opts)
	require.EqualValues(t, 0, c.Stats().DRAM.Entries)
	_, tier, ok, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierSSD, tier)
}

func TestNewRefusesCriticalFindingsAndBuildsOnWarnings(t *testing.T) {
	_, err := New(t.Context(), Options{AutoRecoverOnStart: true})
	require.ErrorIs(t, err, ErrInvalidOptions)
	require.Contains(t, err.Error(), "SSDPath")
	_, err = New(t.Context(), Options{DRAMCapacityBytes: Disabled, SSDCapacityBytes: Disabled})
	require.ErrorIs(t, err, ErrInvalidOptions)

	c := newTestCache(t, Options{Policy: "WeightedHotnessLru", SSDCapacityBytes: Disabled, DRAMCapacityBytes: 1 << 20, Shards: 1})
	require.NoError(t, c.Put(t.Context(), skey(1), val("a"), PutOptions{}))
}

// The zero Options are a DRAM-only cache: the SSD tier needs a path.
func TestZeroOptionsAreDRAMOnly(t *testing.T) {
	c, err := New(t.Context(), Options{})
	require.NoError(t, err)
	require.Nil(t, c.ssdSt, "no SSD tier")
	require.Nil(t, c.res, "no resident tier")
	require.Zero(t, c.tiering.SSDCapacityBytes)
	require.NoError(t, c.Put(t.Context(), skey(1), val("a"), PutOptions{}))
	v, tier, ok, err := c.Get(t.Context(), skey(1))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierDRAM, tier)
	require.Equal(t, val("a"), v)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
}

func TestClosedCacheRefusesCalls(t *testing.T) {
	opts, _ := testOptions(t, 2)
	c, err := New(t.Context(), opts)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	ctx := t.Context()
	require.ErrorIs(t, c.Put(ctx, skey(1), val("a"), PutOptions{}), ErrClosed)
	_, _, _, err = c.Get(ctx, skey(1))
	require.ErrorIs(t, err, ErrClosed)
	_, err = c.Acquire(ctx, skey(1))
	require.ErrorIs(t, err, ErrClosed)
	_, err = c.Delete(ctx, skey(1))
	require.ErrorIs(t, err, ErrClosed)
}

func TestDRAMOnlyCacheHoldsValuesWithoutSSD(t *testing.T) {
	c := newTestCache(t, Options{SSDCapacityBytes: Disabled, DRAMCapacityBytes: 1 << 20, Shards: 1})
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	v, tier, ok, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierDRAM, tier)
	require.Equal(t, val("a"), v)
	require.ErrorIs(t, c.Put(ctx, skey(2), make([]byte, 2<<20), PutOptions{}), ErrTooLarge)
}

func TestDefaultTTLAppliesToLaterWritesAndAnExplicitTTLWins(t *testing.T) {
	opts, clk := testOptions(t, 4)
	opts.DefaultTTL = time.Minute
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(2), val("b"), PutOptions{TTL: time.Hour}))
	clk.Advance(2 * time.Minute)
	_, _, ok, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.False(t, ok, "the default TTL applied")
	_, _, ok, err = c.Get(ctx, skey(2))
	require.NoError(t, err)
	require.True(t, ok, "the explicit TTL won")
}

func TestAHitIsCountedExactlyOncePerRead(t *testing.T) {
	opts, _ := testOptions(t, 4)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	for range 37 {
		_, _, ok, err := c.Get(ctx, skey(1))
		require.NoError(t, err)
		require.True(t, ok)
	}
	h, err := c.Acquire(ctx, skey(1))
	require.NoError(t, err)
	h.Release()
	st := c.Stats()
	require.EqualValues(t, 38, st.DRAM.Hits)
	require.EqualValues(t, 0, st.DRAM.Misses)
	require.EqualValues(t, 1, st.HotnessPromotions, "hotness crossed the DRAM threshold once")
}

func TestPurgeExpiredReclaimsEveryTierButKeepsPins(t *testing.T) {
	opts, clk := testOptions(t, 2)
	c := newTestCache(t, opts)
	ctx := t.Context()
	for i := range 6 { // two stay in DRAM, all six are on SSD
		require.NoError(t, c.Put(ctx, skey(i), val("a"), PutOptions{TTL: time.Second}))
	}
	require.NoError(t, c.Put(ctx, skey(9), val("z"), PutOptions{}))
	h, err := c.Acquire(ctx, skey(5))
	require.NoError(t, err)
	clk.Advance(time.Second)

	r, err := c.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 6, r.SSD)
	st := c.Stats()
	require.EqualValues(t, 1, st.PinnedEntries, "the pinned entry survives the sweep")
	require.Equal(t, val("a"), h.Value())
	r, err = c.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, InvalidateReport{}, r, "a second purge finds nothing")
	h.Release()
	r, err = c.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, r.DRAM, "released, the expired entry goes")
	_, _, ok, err := c.Get(ctx, skey(9))
	require.NoError(t, err)
	require.True(t, ok)
}

func TestStatsAndReleaseWorkAfterClose(t *testing.T) {
	opts, _ := testOptions(t, 2)
	c, err := New(t.Context(), opts)
	require.NoError(t, err)
	require.NoError(t, c.Put(t.Context(), skey(1), val("a"), PutOptions{}))
	h, err := c.Acquire(t.Context(), skey(1))
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.Equal(t, val("a"), h.Value())
	h.Release()
	st := c.Stats()
	require.EqualValues(t, 1, st.DRAM.Puts)
	require.EqualValues(t, 0, st.PinnedEntries)
	require.ErrorIs(t, c.Flush(t.Context()), ErrClosed)
}

func TestACanceledPutNeverLeavesAnOlderSSDCopy(t *testing.T) {
	opts, _ := testOptions(t, 1)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	err := c.Put(canceled, skey(1), val("b"), PutOptions{})
	if err != nil {
		require.ErrorIs(t, err, context.Canceled)
	}
	require.NoError(t, c.Put(ctx, skey(2), val("c"), PutOptions{})) // evict skey(1)
	v, _, ok, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	if ok {
		require.Equal(t, val("b"), v)
	}
}

// Hits taken without the lock are counted exactly, however many readers
// race, and the policy still learns of them: a key read often survives a
// flood of one-time writes.
func TestLockFreeHitsAreCountedExactlyAndReachThePolicy(t *testing.T) {
	opts, _ := testOptions(t, 8)
	opts.Policy = "tinylfu"
	opts.SSDCapacityBytes = Disabled
	opts.SSDPath = ""
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("hot"), PutOptions{}))
	const readers, reads = 4, 500
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() {
			for range reads {
				_, _, ok, err := c.GetShared(ctx, skey(1))
				if err != nil || !ok {
					t.Errorf("hot key missed: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	require.EqualValues(t, readers*reads, c.Stats().DRAM.Hits)
	for i := range 200 {
		require.NoError(t, c.Put(ctx, skey(1000+i), val("cold"), PutOptions{}))
	}
	_, tier, ok, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.True(t, ok, "the hot key was evicted by one-time writes")
	require.Equal(t, TierDRAM, tier)
}

// By default one in LatencySampleEvery calls is timed; 1 times every call.
func TestLatencyIsSampled(t *testing.T) {
	for _, tc := range []struct {
		every    int
		min, max int64
	}{
		{every: 1, min: 4096, max: 4096},
		{every: 0, min: 1, max: 4096 / 8},
	} {
		opts, _ := testOptions(t, 64)
		opts.SSDCapacityBytes, opts.SSDPath = Disabled, ""
		opts.LatencySampleEvery = tc.every
		c := newTestCache(t, opts)
		ctx := t.Context()
		for i := range 16 {
			require.NoError(t, c.Put(ctx, skey(i), val("v"), PutOptions{}))
		}
		for i := range 4096 {
			_, _, ok, err := c.GetShared(ctx, skey(i%16))
			require.NoError(t, err)
			require.True(t, ok)
		}
		n := c.Stats().GetLatency.Samples
		require.GreaterOrEqual(t, n, tc.min, "every=%d", tc.every)
		require.LessOrEqual(t, n, tc.max, "every=%d", tc.every)
	}
}

// Scan resistance: a working set read often survives a scan of ten
// thousand keys written once (the default policy's admission refuses
// one-hit wonders), and a Peek scan of lower tiers does not disturb DRAM.
func TestAHotSetSurvivesAScan(t *testing.T) {
	opts, _ := testOptions(t, 128)
	opts.Policy = "" // the default
	c := newTestCache(t, opts)
	ctx := t.Context()
	for i := range 64 {
		require.NoError(t, c.Put(ctx, skey(i), val("h"), PutOptions{}))
	}
	for range 4 {
		for i := range 64 {
			getTier(t, c, skey(i))
		}
	}
	for i := range 10_000 {
		k := cachekey.String(1, fmt.Sprintf("scan-%05d", i))
		require.NoError(t, c.Put(ctx, k, val("s"), PutOptions{}))
		_, _, _, err := c.Peek(ctx, k)
		require.NoError(t, err)
	}
	inDRAM := 0
	for i := range 64 {
		if _, tier := getTier(t, c, skey(i)); tier == TierDRAM {
			inDRAM++
		}
	}
	require.GreaterOrEqual(t, inDRAM, 58, "the scan flushed the hot set")
}

// GetShared returns the same bytes as Get without copying them; an
// overwrite leaves the bytes a reader holds unchanged and the next reader
// sees the new value; a miss is not found; a DRAM hit counts as one.
func TestGetSharedKeepsItsBufferAcrossOverwrites(t *testing.T) {
	opts, _ := testOptions(t, 4)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	held, tier, ok, err := c.GetShared(ctx, skey(1))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierDRAM, tier)
	copied, _, _, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.Equal(t, copied, held)
	again, _, _, err := c.GetShared(ctx, skey(1))
	require.NoError(t, err)
	require.Same(t, &held[0], &again[0], "no copy")

	require.NoError(t, c.Put(ctx, skey(1), val("b"), PutOptions{}))
	require.Equal(t, val("a"), held, "the held buffer did not change")
	next, _, _, err := c.GetShared(ctx, skey(1))
	require.NoError(t, err)
	require.Equal(t, val("b"), next)

	_, _, ok, err = c.GetShared(ctx, skey(9))
	require.NoError(t, err)
	require.False(t, ok)
	st := c.Stats()
	require.EqualValues(t, 4, st.DRAM.Hits)
	require.EqualValues(t, 1, st.Misses)
}

// DeleteBatch clears DRAM and SSD and counts every position of a key that
// was held, duplicates included.
func TestDeleteBatch(t *testing.T) {
	opts, _ := testOptions(t, 1) // one key in DRAM, the other on SSD only
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(2), val("b"), PutOptions{}))
	n, err := c.DeleteBatch(ctx, []blockfmt.Key{skey(1), skey(2), skey(1), skey(3)})
	require.NoError(t, err)
	require.Equal(t, 3, n)
	for _, k := range []blockfmt.Key{skey(1), skey(2)} {
		_, tier := getTier(t, c, k)
		require.Equal(t, TierNone, tier)
	}
	st := c.Stats()
	require.Zero(t, st.DRAM.Entries)
	require.Zero(t, st.SSD.Entries)
}
