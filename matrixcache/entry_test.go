package matrixcache

import (
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// Keys whose namespace and selector pairs outnumber what a shard interns
// are still stored and answered exactly, and the interned set stays bounded.
func TestKeyNamesBeyondTheInternBound(t *testing.T) {
	c := oneShardDRAMCache(t)
	ctx := t.Context()
	n := maxInternedNames + 300
	key := func(i int) blockfmt.Key { return cachekey.Hash(0, "user-1", fmt.Sprintf("field-%04d", i)) }
	for i := range n {
		require.NoError(t, c.Put(ctx, key(i), fmt.Appendf(nil, "v%d", i), PutOptions{}))
	}
	for i := range n {
		v, tier, ok, err := c.Get(ctx, key(i))
		require.NoError(t, err)
		require.True(t, ok, "field %d", i)
		require.Equal(t, TierDRAM, tier)
		require.Equal(t, fmt.Sprintf("v%d", i), string(v))
	}
	// Same record and selector, other namespace: a different key.
	_, _, ok, err := c.Get(ctx, blockfmt.Key{Record: "user-1", Namespace: blockfmt.NamespaceSet, Selector: "field-0001"})
	require.NoError(t, err)
	require.False(t, ok)
	s := c.shards[0]
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Len(t, s.names, maxInternedNames)
}

// A pin's bookkeeping leaves with its last release: the shard's pin map
// does not grow with every key ever pinned.
func TestPinsMapEmptiesOnRelease(t *testing.T) {
	opts, _ := testOptions(t, 1<<14)
	c := newTestCache(t, opts)
	ctx := t.Context()
	for i := range 200 {
		require.NoError(t, c.Put(ctx, skey(i), val("p"), PutOptions{}))
		h1, err := c.Acquire(ctx, skey(i))
		require.NoError(t, err)
		h2, err := c.Acquire(ctx, skey(i))
		require.NoError(t, err)
		h1.Release()
		require.True(t, pinnedForTest(c, skey(i)), "one of two pins left")
		h2.Release()
		require.False(t, pinnedForTest(c, skey(i)))
	}
	for _, s := range c.shards {
		s.mu.Lock()
		require.Empty(t, s.pins)
		s.mu.Unlock()
	}
	require.Zero(t, c.Stats().PinnedEntries)
}

func pinnedForTest(c *Cache, k blockfmt.Key) bool {
	h := hashKey(k)
	s := c.shardFor(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pinnedLocked(h)
}

// An empty value round-trips as empty and non-nil, a nil one as empty.
func TestEmptyValues(t *testing.T) {
	opts, _ := testOptions(t, 1<<14)
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), []byte{}, PutOptions{}))
	v, tier, ok, err := c.GetShared(ctx, skey(1))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierDRAM, tier)
	require.NotNil(t, v)
	require.Empty(t, v)
	require.NoError(t, c.Put(ctx, skey(2), nil, PutOptions{}))
	v, _, ok, err = c.Get(ctx, skey(2))
	require.NoError(t, err)
	require.True(t, ok)
	require.Empty(t, v)
}

// hashKey separates keys that differ only in where one part ends and the
// next begins, or in any one byte of a part of any length.
func TestHashKeySeparatesParts(t *testing.T) {
	pairs := [][2]blockfmt.Key{
		{{Record: "r", Namespace: "ab", Selector: "c"}, {Record: "r", Namespace: "a", Selector: "bc"}},
		{{Record: "r", Namespace: "", Selector: "x"}, {Record: "r", Namespace: "x", Selector: ""}},
		{{Record: "r", Namespace: "abcdefgh", Selector: "i"}, {Record: "r", Namespace: "abcdefghi", Selector: ""}},
		{{Shard: 1, Record: "r"}, {Shard: 2, Record: "r"}},
		{{Record: "ab"}, {Record: "ba"}},
	}
	for _, p := range pairs {
		require.NotEqual(t, hashKey(p[0]), hashKey(p[1]), "%+v vs %+v", p[0], p[1])
	}
	// Every single-byte change of a name of length 0..24 changes the hash.
	for n := range 25 {
		name := []byte("abcdefghijklmnopqrstuvwxyz"[:n])
		base := hashKey(blockfmt.Key{Record: "r", Namespace: string(name), Selector: "s"})
		for i := range n {
			m := append([]byte(nil), name...)
			m[i] ^= 0x20
			require.NotEqual(t, base, hashKey(blockfmt.Key{Record: "r", Namespace: string(m), Selector: "s"}), "len %d byte %d", n, i)
			require.NotEqual(t, base, hashKey(blockfmt.Key{Record: "r", Namespace: "s", Selector: string(m)}), "len %d byte %d", n, i)
		}
	}
}

// A reader alone has every hit recorded for the policy, hot entry or not,
// so the policy sees what a replay of it sees; every hit is counted.
func TestALoneReaderRecordsEveryHit(t *testing.T) {
	opts, _ := testOptions(t, 1<<14)
	opts.Shards = 1
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("h"), PutOptions{}))
	const hits = 1000
	for range hits {
		_, _, ok, err := c.GetShared(ctx, skey(1))
		require.NoError(t, err)
		require.True(t, ok)
	}
	var recorded, counted uint64
	for i := range c.shards[0].reads.stripes {
		st := &c.shards[0].reads.stripes[i]
		recorded += st.head.Load()
		counted += st.hits.Load()
	}
	require.Equal(t, uint64(hits), counted)
	require.Equal(t, uint64(hits), recorded)
	st := c.Stats()
	require.Equal(t, int64(hits), st.DRAM.Hits)
	require.Equal(t, int64(hits), st.DRAMHitsToPolicy)
	require.Equal(t, uint8(hotnessMask), c.shards[0].m.load(hashKey(skey(1))).hot(), "hits raise the hotness to its ceiling")
}

// A DRAM put allocates the value's copy and the entry, nothing else: the
// interned names are looked up without allocating.
func TestPutAllocatesTheValueCopyAndTheEntry(t *testing.T) {
	opts, _ := testOptions(t, 1<<14)
	opts.SSDCapacityBytes = Disabled
	c := newTestCache(t, opts)
	ctx := t.Context()
	k := cachekey.Hash(0, "user-1", "field")
	v := val("a")
	require.NoError(t, c.Put(ctx, k, v, PutOptions{}))
	allocs := testing.AllocsPerRun(200, func() {
		if err := c.Put(ctx, k, v, PutOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	require.LessOrEqual(t, allocs, 2.0)
}

// The names cachekey.String uses are interned as the constants themselves, so a
// lookup's comparison finds the caller's pointers; other names are copies.
func TestStaticNamesShareTheConstantsBytes(t *testing.T) {
	addr := func(s string) uintptr { return uintptr(unsafe.Pointer(unsafe.StringData(s))) }
	k := cachekey.String(0, "r")
	require.Equal(t, addr(k.Namespace), addr(staticName(string([]byte(k.Namespace)))))
	require.Equal(t, addr(k.Selector), addr(staticName(string([]byte(k.Selector)))))
	other := string([]byte("field-1"))
	require.NotEqual(t, addr(other), addr(staticName(other)))
	require.Equal(t, other, staticName(other))
}

// While goroutines read a shard at once, the policy is told of a sample of
// their hits, and the hit counter stays exact. Once one goroutine reads
// alone again, every hit of a cold entry reaches the policy. The readers
// take turns, a few hits each, so that their rings hold records at once
// however the machine schedules them.
func TestConcurrentHitsReachThePolicyAsASample(t *testing.T) {
	c := oneShardDRAMCache(t)
	ctx := t.Context()
	key := func(i int) blockfmt.Key { return cachekey.String(0, fmt.Sprintf("k%04d", i)) }
	const keys, readers, turns, perTurn = 256, 8, 250, 8
	for i := range keys {
		require.NoError(t, c.Put(ctx, key(i), []byte("v"), PutOptions{}))
	}
	hit := func(i int) {
		if _, _, ok, err := c.GetShared(ctx, key(i)); !ok || err != nil {
			t.Errorf("key %d: ok %v, err %v", i, ok, err)
		}
	}

	before := c.Stats()
	// Reader g waits for its turn on next[g], hits, and hands on.
	next := make([]chan struct{}, readers)
	for g := range next {
		next[g] = make(chan struct{}, 1)
	}
	var wg sync.WaitGroup
	for g := range readers {
		wg.Go(func() {
			for turn := range turns {
				<-next[g]
				for i := range perTurn {
					hit((turn*perTurn + i + g*31) % keys)
				}
				next[(g+1)%readers] <- struct{}{}
			}
		})
	}
	next[0] <- struct{}{}
	wg.Wait()
	<-next[0]
	after := c.Stats()
	hits := after.DRAM.Hits - before.DRAM.Hits
	told := after.DRAMHitsToPolicy - before.DRAMHitsToPolicy
	require.Equal(t, int64(readers*turns*perTurn), hits)
	require.Less(t, told, hits/4, "sampled")

	// Alone: aloneDrainsToExact drains in a row that find only this
	// goroutine's ring end the sampling (the first may still find the
	// others' records); from then on every hit of a cold entry is recorded.
	for i := range (aloneDrainsToExact + 2) * sampledDrainHits {
		hit(i % keys)
	}
	require.False(t, c.shards[0].sampled.Load())
	for i := keys; i < keys+100; i++ {
		require.NoError(t, c.Put(ctx, key(i), []byte("v"), PutOptions{}))
	}
	before = c.Stats()
	for i := keys; i < keys+100; i++ {
		hit(i)
	}
	after = c.Stats()
	require.Equal(t, int64(100), after.DRAM.Hits-before.DRAM.Hits)
	require.Equal(t, int64(100), after.DRAMHitsToPolicy-before.DRAMHitsToPolicy)
}

// oneShardDRAMCache is a cache of one 8 MiB DRAM shard and no lower tier.
func oneShardDRAMCache(t *testing.T) *Cache {
	return newTestCache(t, oneShardDRAMOptions(t))
}

// oneShardDRAMOptions are oneShardDRAMCache's options.
func oneShardDRAMOptions(t *testing.T) Options {
	opts, _ := testOptions(t, 1<<14)
	opts.Shards = 1
	opts.SSDCapacityBytes = Disabled
	opts.DRAMCapacityBytes = 8 << 20
	return opts
}

// While a shard samples, a hit does not write an entry whose hotness has
// reached the ceiling (minHotCeiling, or the highest tier threshold above
// it), so the cores reading a hot entry keep sharing its line; an entry
// below the ceiling still has its hotness raised.
func TestSampledHitsLeaveHotEntriesUnwritten(t *testing.T) {
	tests := []struct {
		name          string
		dramThreshold uint8
		hotness       uint32
		wantRaised    bool
	}{
		{"cold entry raised", 0, 3, true},
		{"just below the ceiling raised", 0, minHotCeiling - 1, true},
		{"at the ceiling unwritten", 0, minHotCeiling, false},
		{"hot entry unwritten", 0, 200, false},
		{"a higher tier threshold lifts the ceiling", 40, minHotCeiling + 4, true},
		{"at the lifted ceiling unwritten", 40, 40, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := oneShardDRAMOptions(t)
			opts.DRAMHotnessThreshold = tc.dramThreshold
			c := newTestCache(t, opts)
			ctx := t.Context()
			k := cachekey.String(0, "hot")
			require.NoError(t, c.Put(ctx, k, []byte("v"), PutOptions{}))
			s := c.shards[0]
			e := s.m.load(hashKey(k))
			require.NotNil(t, e)
			e.state.Store(tc.hotness)
			s.sampled.Store(true)
			before := c.Stats().DRAM.Hits
			for range 10 {
				_, _, ok, err := c.GetShared(ctx, k)
				require.NoError(t, err)
				require.True(t, ok)
			}
			require.Equal(t, int64(10), c.Stats().DRAM.Hits-before, "hits are counted either way")
			if tc.wantRaised {
				require.Greater(t, e.state.Load()&hotnessMask, tc.hotness)
			} else {
				require.Equal(t, tc.hotness, e.state.Load(), "the entry's line was written")
			}
		})
	}
}

// cachekey.String's names take a precomputed hash, equal to the computed one, and
// names of the same bytes hash alike wherever their bytes live.
func TestStringNamesHash(t *testing.T) {
	require.Equal(t, computeNamesHash(blockfmt.NamespaceString, stringSelector), uint64(stringNamesHash))
	k := cachekey.String(7, "rec")
	copied := blockfmt.Key{Shard: 7, Record: "rec", Namespace: string([]byte(k.Namespace)), Selector: string([]byte(k.Selector))}
	require.Equal(t, hashKey(k), hashKey(copied), "names copied elsewhere hash as the constants do")
	other := cachekey.Hash(7, "rec", "value")
	require.NotEqual(t, hashKey(k), hashKey(other))
	require.NotEqual(t, hashKey(k), hashKey(cachekey.String(8, "rec")))
}
