package matrixcache

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// Prefetch counts and changes nothing: present, absent and repeated keys,
// batches longer than it walks at once, and an empty one leave every
// counter, value and hotness as they were.
func TestPrefetchChangesNothing(t *testing.T) {
	c := oneShardDRAMCache(t)
	ctx := t.Context()
	for i := range 100 {
		require.NoError(t, c.Put(ctx, skey(i), val(fmt.Sprint(i)), PutOptions{}))
	}
	var keys []blockfmt.Key
	for i := range 3*prefetchBatch + 5 {
		keys = append(keys, skey(i%150)) // 100 present, 50 absent, repeats
	}
	before := c.Stats()
	hot := c.shardFor(hashKey(skey(7))).m.load(hashKey(skey(7))).hot()
	for _, batch := range [][]blockfmt.Key{keys, keys[:1], nil} {
		c.Prefetch(batch)
	}
	require.Equal(t, before, c.Stats())
	require.Equal(t, hot, c.shardFor(hashKey(skey(7))).m.load(hashKey(skey(7))).hot())
	for i := range 150 {
		v, tier, ok, err := c.GetShared(ctx, skey(i))
		require.NoError(t, err)
		require.Equal(t, i < 100, ok, "k%02d", i)
		if ok {
			require.Equal(t, TierDRAM, tier)
			require.Equal(t, val(fmt.Sprint(i)), v)
		}
	}
}

// Prefetch takes no lock: it runs beside writers replacing and deleting the
// keys it walks (run with the race detector), and after Close.
func TestPrefetchBesideWriters(t *testing.T) {
	c := oneShardDRAMCache(t)
	ctx := t.Context()
	var keys []blockfmt.Key
	for i := range 40 {
		keys = append(keys, skey(i))
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := range 2000 {
			k := keys[n%len(keys)]
			if n%3 == 0 {
				_, err := c.Delete(ctx, k)
				require.NoError(t, err)
				continue
			}
			require.NoError(t, c.Put(ctx, k, val(fmt.Sprint(n)), PutOptions{}))
		}
	}()
	for range 2000 {
		c.Prefetch(keys)
	}
	wg.Wait()
	require.NoError(t, c.Close())
	c.Prefetch(keys)
}
