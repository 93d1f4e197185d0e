package matrixcache

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// eventLog collects eviction events; it is safe for concurrent use.
type eventLog struct {
	mu     sync.Mutex
	events []EvictionEvent
}

func (l *eventLog) add(ev EvictionEvent) {
	l.mu.Lock()
	l.events = append(l.events, ev)
	l.mu.Unlock()
}

// take returns the events so far and forgets them.
func (l *eventLog) take() []EvictionEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	evs := l.events
	l.events = nil
	return evs
}

// Room evictions report Evicted, expired entries Expired with their value,
// whether found as a victim, by a read or by PurgeExpired; the callback
// runs with no lock held (it reads the cache); clearing it silences it and
// setting it again brings it back.
func TestEvictionCallbackReportsRoomAndExpiry(t *testing.T) {
	var log eventLog
	opts, clk := testOptions(t, 1)
	var c *Cache
	opts.OnEvict = func(ev EvictionEvent) {
		// Reading the evicted key takes its shard's lock: this deadlocks
		// if the callback runs under it.
		_, _, _, err := c.Peek(t.Context(), ev.Key)
		require.NoError(t, err)
		log.add(ev)
	}
	c = newTestCache(t, opts)
	ctx := t.Context()

	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(2), val("b"), PutOptions{})) // evicts 1
	require.Equal(t, []EvictionEvent{
		{Key: skey(1), Value: val("a"), Tier: TierDRAM, Cause: EvictionEvicted, Demoted: true},
	}, log.take(), "a room eviction reports Evicted only; the SSD copy remains")

	require.NoError(t, c.Put(ctx, skey(3), val("c"), PutOptions{TTL: time.Second})) // evicts 2
	clk.Advance(2 * time.Second)
	require.NoError(t, c.Put(ctx, skey(4), val("d"), PutOptions{})) // evicts 3, expired
	require.Equal(t, []EvictionEvent{
		{Key: skey(2), Value: val("b"), Tier: TierDRAM, Cause: EvictionEvicted, Demoted: true},
		{Key: skey(3), Value: val("c"), Tier: TierDRAM, Cause: EvictionExpired},
	}, log.take())

	require.NoError(t, c.Put(ctx, skey(5), val("e"), PutOptions{TTL: time.Second})) // evicts 4
	clk.Advance(2 * time.Second)
	_, _, ok, err := c.Get(ctx, skey(5))
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, []EvictionEvent{
		{Key: skey(4), Value: val("d"), Tier: TierDRAM, Cause: EvictionEvicted, Demoted: true},
		{Key: skey(5), Value: val("e"), Tier: TierDRAM, Cause: EvictionExpired},
	}, log.take(), "an expired read reports the entry it drops")

	require.NoError(t, c.Put(ctx, skey(6), val("f"), PutOptions{TTL: time.Second}))
	clk.Advance(2 * time.Second)
	r, err := c.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, r.DRAM)
	require.Equal(t, []EvictionEvent{
		{Key: skey(6), Value: val("f"), Tier: TierDRAM, Cause: EvictionExpired},
	}, log.take(), "a purge reports what it drops from DRAM")
	require.EqualValues(t, 6, c.Stats().EvictionCallbacks)

	// Deletes and overwrites are not evictions.
	require.NoError(t, c.Put(ctx, skey(7), val("g"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(7), val("h"), PutOptions{}))
	_, err = c.Delete(ctx, skey(7))
	require.NoError(t, err)
	require.Empty(t, log.take())

	c.SetEvictionCallback(nil)
	for i := 10; i < 20; i++ {
		require.NoError(t, c.Put(ctx, skey(i), val("x"), PutOptions{}))
	}
	require.Empty(t, log.take(), "cleared, the callback hears nothing")
	require.EqualValues(t, 6, c.Stats().EvictionCallbacks)

	c.SetEvictionCallback(log.add)
	require.NoError(t, c.Put(ctx, skey(20), val("y"), PutOptions{}))
	require.Equal(t, []EvictionEvent{
		{Key: skey(19), Value: val("x"), Tier: TierDRAM, Cause: EvictionEvicted, Demoted: true},
	}, log.take(), "set again, it hears again")
}

// A victim the admission keeps out of every lower tier leaves the cache:
// its event says it was not demoted. Shrinking DRAM reports its victims.
func TestEvictionCallbackSaysWhetherTheValueWasDemoted(t *testing.T) {
	var log eventLog
	opts, _ := testOptions(t, 2)
	opts.OnEvict = log.add
	c := newTestCache(t, opts)
	ctx := t.Context()
	// Oplog blocks start below the SSD hotness threshold: memory only.
	cold := blockfmt.Key{Record: "cold", Namespace: blockfmt.NamespaceOplog, Selector: "s"}
	require.NoError(t, c.Put(ctx, cold, []byte("c"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	require.NoError(t, c.SetDRAMCapacity(ctx, 0))
	evs := log.take()
	require.Len(t, evs, 2)
	byKey := map[blockfmt.Key]EvictionEvent{}
	for _, ev := range evs {
		require.Equal(t, EvictionEvicted, ev.Cause)
		byKey[ev.Key] = ev
	}
	require.False(t, byKey[cold].Demoted, "the cold block is gone from the cache")
	require.Equal(t, []byte("c"), byKey[cold].Value)
	require.True(t, byKey[skey(1)].Demoted, "written through to SSD")
}

// The resident tier's own victims are reported with their tier.
func TestEvictionCallbackHearsTheResidentTier(t *testing.T) {
	var log eventLog
	opts, _ := residentOptions(t, 2)
	opts.ResidentHotnessThreshold = 2 // string values go to the resident tier
	opts.ResidentCapacityBytes = 1024
	opts.OnEvict = log.add
	c := newTestCache(t, opts)
	ctx := t.Context()
	want := map[blockfmt.Key][]byte{}
	for i := range 40 {
		v := []byte(fmt.Sprintf("value-%02d-%s", i, val("r")))
		want[skey(i)] = v
		require.NoError(t, c.Put(ctx, skey(i), v, PutOptions{}))
	}
	require.Positive(t, c.Stats().Resident.Evictions)
	resident := 0
	for _, ev := range log.take() {
		require.Equal(t, EvictionEvicted, ev.Cause)
		require.Equal(t, want[ev.Key], ev.Value, "%v", ev.Key)
		if ev.Tier == TierResident {
			resident++
		}
	}
	require.EqualValues(t, c.Stats().Resident.Evictions, resident)
}

// Evictions of every DRAM shard reach the callback, and clearing it
// silences all of them, also under concurrent writers.
func TestEvictionCallbackHearsEveryShard(t *testing.T) {
	var log eventLog
	opts, _ := testOptions(t, 16)
	opts.Shards = 4
	opts.OnEvict = log.add
	c := newTestCache(t, opts)
	ctx := t.Context()
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := range 100 {
				require.NoError(t, c.Put(ctx, skey(w*1000+i), val("v"), PutOptions{}))
			}
		})
	}
	wg.Wait()
	shards := map[*shard]bool{}
	evs := log.take()
	for _, ev := range evs {
		shards[c.shardFor(hashKey(ev.Key))] = true
	}
	require.Greater(t, len(shards), 1)
	st := c.Stats()
	require.EqualValues(t, st.DRAM.Evictions, len(evs), "every eviction reported once")
	require.EqualValues(t, len(evs), st.EvictionCallbacks)

	c.SetEvictionCallback(nil)
	for i := range 100 {
		require.NoError(t, c.Put(ctx, skey(5000+i), val("v"), PutOptions{}))
	}
	require.Empty(t, log.take())
}

// The access recorder sees Put, Get and Delete with the original's codes,
// nothing for Peek, and can be cleared and set again while readers run.
func TestAccessRecorder(t *testing.T) {
	require.EqualValues(t, 1, AccessPut)
	require.EqualValues(t, 2, AccessGet)
	require.EqualValues(t, 3, AccessDelete)
	opts, _ := testOptions(t, 1)
	c := newTestCache(t, opts)
	ctx := t.Context()
	var mu sync.Mutex
	var recs []AccessRecord
	rec := func(r AccessRecord) {
		// No lock of the cache is held: reading it from here is fine.
		_, _, _, err := c.Peek(ctx, r.Key)
		require.NoError(t, err)
		mu.Lock()
		recs = append(recs, r)
		mu.Unlock()
	}
	take := func() []AccessRecord {
		mu.Lock()
		defer mu.Unlock()
		r := recs
		recs = nil
		return r
	}

	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	require.Empty(t, take(), "no recorder, no records")
	c.SetAccessRecorder(rec)
	require.NoError(t, c.Put(ctx, skey(1), val("b"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(2), val("c"), PutOptions{})) // skey(1) SSD only
	_, _, _, err := c.Get(ctx, skey(2))
	require.NoError(t, err)
	_, _, _, err = c.GetShared(ctx, skey(1))
	require.NoError(t, err)
	_, _, _, err = c.Get(ctx, skey(9))
	require.NoError(t, err)
	_, _, _, err = c.Peek(ctx, skey(2))
	require.NoError(t, err)
	h, err := c.Acquire(ctx, skey(2))
	require.NoError(t, err)
	h.Release()
	_, err = c.Delete(ctx, skey(2))
	require.NoError(t, err)
	_, err = c.Delete(ctx, skey(2))
	require.NoError(t, err)
	require.Equal(t, []AccessRecord{
		{Op: AccessPut, Key: skey(1), Found: true},
		{Op: AccessPut, Key: skey(2), Found: true},
		{Op: AccessGet, Key: skey(2), Found: true, Tier: TierDRAM},
		{Op: AccessGet, Key: skey(1), Found: true, Tier: TierSSD},
		{Op: AccessGet, Key: skey(9)},
		{Op: AccessGet, Key: skey(2), Found: true, Tier: TierSSD}, // the Acquire
		{Op: AccessDelete, Key: skey(2), Found: true},
		{Op: AccessDelete, Key: skey(2)},
	}, take())

	c.SetAccessRecorder(nil)
	_, _, _, err = c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.Empty(t, take(), "cleared")

	// Toggled while readers run (the race detector checks the handover).
	var n atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _, _, err := c.GetShared(ctx, skey(1))
				require.NoError(t, err)
			}
		})
	}
	for range 50 {
		c.SetAccessRecorder(func(AccessRecord) { n.Add(1) })
		c.SetAccessRecorder(nil)
	}
	c.SetAccessRecorder(func(AccessRecord) { n.Add(1) })
	for n.Load() == 0 {
		_, _, _, err := c.Get(ctx, skey(1))
		require.NoError(t, err)
	}
	close(stop)
	wg.Wait()
	require.Positive(t, n.Load())
}

// The callback runs after the operation has left the cache entirely: it
// may even close it (which waits for every call in the lower tiers).
func TestEvictionCallbackMayCloseTheCache(t *testing.T) {
	opts, _ := testOptions(t, 1)
	var c *Cache
	var once sync.Once
	opts.OnEvict = func(EvictionEvent) { once.Do(func() { require.NoError(t, c.Close()) }) }
	c = newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	require.NoError(t, c.Put(ctx, skey(2), val("b"), PutOptions{})) // evicts 1, closes
	require.ErrorIs(t, c.Put(ctx, skey(3), val("c"), PutOptions{}), ErrClosed)
}
