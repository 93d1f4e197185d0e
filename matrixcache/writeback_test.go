package matrixcache

import (
	"encoding/binary"
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

func TestWriteBackCloseDrainsQueuedWrites(t *testing.T) {
	opts, _ := testOptions(t, 2)
	opts.WriteBack = true
	ctx := t.Context()
	c, err := New(ctx, opts)
	require.NoError(t, err)
	for i := range 50 {
		require.NoError(t, c.Put(ctx, skey(i), val(fmt.Sprint(i%10)), PutOptions{}))
	}
	require.NoError(t, c.Close())

	opts.WriteBack = false
	c = newTestCache(t, opts)
	for i := range 50 {
		v, tier, ok, err := c.Peek(ctx, skey(i))
		require.NoError(t, err)
		require.True(t, ok, "key %d", i)
		require.Equal(t, TierSSD, tier)
		require.Equal(t, val(fmt.Sprint(i%10)), v)
	}
}

func TestWriteBackQueueFullWritesDirectlyAndDuplicatesCoalesce(t *testing.T) {
	opts, _ := testOptions(t, 8)
	opts.WriteBack = true
	opts.WriteBackQueueLen = 1
	c := newTestCache(t, opts)
	ctx := t.Context()

	c.wb.commitMu.Lock() // hold the writer back
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(1), val("b"), PutOptions{})) // replaces the queued job
	require.NoError(t, c.Put(ctx, skey(2), val("c"), PutOptions{})) // queue full: direct
	require.NoError(t, c.Put(ctx, skey(3), val("d"), PutOptions{})) // queue full: direct
	st := c.Stats()
	require.EqualValues(t, 1, st.WritebackEnqueued)
	require.EqualValues(t, 1, st.WritebackCoalesced)
	require.EqualValues(t, 2, st.WritebackBackpressure)
	require.EqualValues(t, 1, st.WritebackQueueDepth)
	_, ok, err := c.ssd.Get(skey(1))
	require.NoError(t, err)
	require.False(t, ok, "still queued")
	_, ok, err = c.ssd.Get(skey(2))
	require.NoError(t, err)
	require.True(t, ok, "written directly")
	c.wb.commitMu.Unlock()

	require.NoError(t, c.Flush(ctx))
	b, ok, err := c.ssd.Get(skey(1))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, val("b"), b.Value, "the coalesced job carries the last write")
	st = c.Stats()
	require.EqualValues(t, 1, st.WritebackDrained)
	require.EqualValues(t, 0, st.WritebackQueueDepth)
}

func TestWriteBackReadsSeeQueuedWritesAndDeletes(t *testing.T) {
	opts, _ := testOptions(t, 1)
	opts.WriteBack = true
	opts.MaxDRAMBlockBytes = 16 // every value below is SSD only
	c := newTestCache(t, opts)
	ctx := t.Context()

	c.wb.commitMu.Lock()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	v, tier, ok, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierSSD, tier)
	require.Equal(t, val("a"), v)
	c.wb.commitMu.Unlock()
	require.NoError(t, c.Flush(ctx))

	// A DRAM-only write turns the queued write of the older value into a
	// delete. (Oplog blocks start below the SSD hotness threshold.)
	k := blockfmt.Key{Record: "log", Namespace: blockfmt.NamespaceOplog, Selector: "1"}
	c.wb.commitMu.Lock()
	require.NoError(t, c.Put(ctx, k, val("b"), PutOptions{})) // too large for DRAM: queued for SSD
	require.NoError(t, c.Put(ctx, k, []byte("small"), PutOptions{}))
	v, tier, ok, err = c.Get(ctx, k)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierDRAM, tier)
	require.Equal(t, []byte("small"), v)
	c.wb.commitMu.Unlock()
	require.NoError(t, c.Flush(ctx))
	_, ok, err = c.ssd.Get(k)
	require.NoError(t, err)
	require.False(t, ok)
	require.EqualValues(t, 1, c.Stats().SSD.StaleCopiesDropped)
}

func TestWriteBackDeleteOfAQueuedWriteWins(t *testing.T) {
	opts, _ := testOptions(t, 1)
	opts.WriteBack = true
	opts.MaxDRAMBlockBytes = 16
	c := newTestCache(t, opts)
	ctx := t.Context()
	for i := range 20 {
		k := skey(i)
		require.NoError(t, c.Put(ctx, k, val("a"), PutOptions{}))
		found, err := c.Delete(ctx, k)
		require.NoError(t, err)
		require.True(t, found)
	}
	r, err := c.DeletePrefix(ctx, 0, "k")
	require.NoError(t, err)
	require.Zero(t, r.DRAM)
	for i := range 20 {
		require.NoError(t, c.Put(ctx, skey(i), val("b"), PutOptions{}))
	}
	_, err = c.DeleteShard(ctx, 0)
	require.NoError(t, err)
	require.NoError(t, c.Flush(ctx))
	for i := range 20 {
		_, _, ok, err := c.Get(ctx, skey(i))
		require.NoError(t, err)
		require.False(t, ok, "key %d", i)
	}
}

// Each writer owns its keys and writes increasing versions; readers must
// never see a key's version go backwards, whichever tier answers.
func TestWriteBackLastWriteWinsUnderConcurrency(t *testing.T) {
	for _, wb := range []bool{false, true} {
		t.Run(fmt.Sprintf("writeback=%v", wb), func(t *testing.T) {
			opts, _ := testOptions(t, 4)
			opts.Shards = 2
			opts.WriteBack = wb
			opts.WriteBackQueueLen = 8
			c := newTestCache(t, opts)
			ctx := t.Context()
			key := func(w, i int) blockfmt.Key { return cachekey.String(uint64(w), fmt.Sprintf("k%d", i)) }
			var wg sync.WaitGroup
			for w := range 3 {
				wg.Go(func() {
					for ver := 1; ver <= 60; ver++ {
						v := make([]byte, 32)
						binary.BigEndian.PutUint64(v, uint64(ver))
						require.NoError(t, c.Put(ctx, key(w, ver%6), v, PutOptions{}))
					}
				})
				wg.Go(func() {
					seen := map[int]uint64{}
					for n := range 300 {
						i := n % 6
						v, _, ok, err := c.Get(ctx, key(w, i))
						require.NoError(t, err)
						if !ok {
							require.Zero(t, seen[i], "a written key never disappears")
							continue
						}
						ver := binary.BigEndian.Uint64(v)
						require.GreaterOrEqual(t, ver, seen[i], "key %d went backwards", i)
						seen[i] = ver
					}
				})
			}
			wg.Wait()
			require.NoError(t, c.Flush(ctx))
			for w := range 3 {
				for i := range 6 {
					v, _, ok, err := c.Get(ctx, key(w, i))
					require.NoError(t, err)
					require.True(t, ok)
					want := 60 - (60-i)%6
					if i == 0 {
						want = 60
					}
					require.EqualValues(t, want, binary.BigEndian.Uint64(v), "key %d/%d", w, i)
				}
			}
		})
	}
}
