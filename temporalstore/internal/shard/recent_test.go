package shard

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// The buffer holds records up to its limit (each costing its bytes and
// its slot's), pushes the oldest still held out to its caller, keeps a
// record that alone is over the limit, forgets dropped ones, and keeps its
// span near the records it holds.
func TestRecentRecords(t *testing.T) {
	r := newRecentRecords(150, nil)
	var out []uint64
	push := func(idx uint64, _ recentSlot) { out = append(out, idx) }
	rec := func(n int) []byte { return bytes.Repeat([]byte{'r'}, n) }
	for idx := uint64(1); idx <= 4; idx++ {
		r.add(idx, rec(50-slotBytes), 1, push)
	}
	require.Equal(t, []uint64{1}, out, "the oldest goes once over 150 bytes")
	_, _, ok := r.get(1)
	require.False(t, ok)
	got, _, ok := r.get(4)
	require.True(t, ok)
	require.Len(t, got, 50-slotBytes)
	_, _, ok = r.get(5)
	require.False(t, ok, "not yet added")

	require.True(t, r.release(2))
	require.False(t, r.release(2), "released once")
	r.add(5, rec(50-slotBytes), 1, push)
	require.Equal(t, []uint64{1}, out, "dropped ones free their room")
	r.add(6, rec(500), 1, push)
	require.Equal(t, []uint64{1, 3, 4, 5}, out, "a record over the limit alone pushes out every other")
	got, _, ok = r.get(6)
	require.True(t, ok, "and stays")
	require.Len(t, got, 500)
	b, n := r.size()
	require.Equal(t, int64(500+slotBytes), b)
	require.Equal(t, 1, n)
	r.add(7, rec(50-slotBytes), 1, push)
	require.Equal(t, []uint64{1, 3, 4, 5, 6}, out, "and goes when the next comes")

	// A gap of indexes (records strings do not point at) costs its
	// slots, and one wider than the limit starts the span afresh.
	r.add(9, rec(50-slotBytes), 1, push)
	b, n = r.size()
	require.Equal(t, int64(50+slotBytes+50), b, "7, the empty slot of 8, and 9")
	require.Equal(t, 2, n)
	r.add(1000, rec(50-slotBytes), 1, push)
	require.Equal(t, []uint64{1, 3, 4, 5, 6, 7, 9}, out)
	b, n = r.size()
	require.Equal(t, int64(50), b)
	require.Equal(t, 1, n)

	// Records dropped as fast as they come never fill it, and the span
	// stays bounded.
	r = newRecentRecords(1<<20, nil)
	for idx := uint64(1); idx <= 100_000; idx++ {
		r.add(idx, rec(8), 1, push)
		require.True(t, r.release(idx))
	}
	require.Equal(t, r.recs.len(), r.head)
	require.LessOrEqual(t, len(r.recs.chunks), 1, "chunks before the span are let go")

	b, n = r.size()
	require.Zero(t, b)
	require.Zero(t, n)

	// A burst that held many records at once gives its array back once
	// they have gone.
	r = newRecentRecords(1<<30, nil)
	for idx := uint64(1); idx <= 200_000; idx++ {
		r.add(idx, rec(8), 1, push)
	}
	require.GreaterOrEqual(t, len(r.recs.chunks)*slotsPerChunk, 200_000)
	for idx := uint64(1); idx <= 199_990; idx++ {
		require.True(t, r.release(idx))
	}
	require.LessOrEqual(t, len(r.recs.chunks), 2)
	for idx := uint64(199_991); idx <= 200_000; idx++ {
		got, _, ok := r.get(idx)
		require.True(t, ok, idx)
		require.Len(t, got, 8)
	}
}

// Writers add in about log order: an index inside the span fills its
// slot, one before the span goes straight out, and the accounting holds.
func TestRecentRecordsOutOfOrder(t *testing.T) {
	r := newRecentRecords(1000, nil)
	var out []uint64
	push := func(idx uint64, _ recentSlot) { out = append(out, idx) }
	r.add(10, []byte("ten"), 1, push)
	r.add(13, []byte("thirteen"), 7, push)
	r.add(11, []byte("eleven"), 1, push)
	for idx, want := range map[uint64]string{10: "ten", 11: "eleven", 13: "thirteen"} {
		got, _, ok := r.get(idx)
		require.True(t, ok, idx)
		require.Equal(t, want, string(got))
	}
	_, cmds, _ := r.get(13)
	require.Equal(t, 7, cmds, "a record's command count is kept with it")
	_, _, ok := r.get(12)
	require.False(t, ok)
	b, n := r.size()
	require.Equal(t, int64(3+6+8+4*slotBytes), b)
	require.Equal(t, 3, n)
	r.add(9, []byte("nine"), 1, push)
	require.Equal(t, []uint64{9}, out, "before the span: straight out")
	r.add(12, []byte("twelve"), 1, push)
	for _, idx := range []uint64{10, 11, 12, 13} {
		require.True(t, r.release(idx))
	}
	b, n = r.size()
	require.Zero(t, b)
	require.Zero(t, n)
}

// Buffers sharing a pool hold no more than its limit between them (plus
// each one's newest record): a buffer adding while the pool is full pushes
// out its own records, and a cleared one gives its bytes back.
func TestRecentPool(t *testing.T) {
	pool := NewRecentPool(1000)
	a, b := newRecentRecords(800, pool), newRecentRecords(800, pool)
	none := func(uint64, recentSlot) {}
	for idx := uint64(1); idx <= 8; idx++ {
		a.add(idx, make([]byte, 100-slotBytes), 1, none)
	}
	require.Equal(t, int64(800), pool.Used())
	var out []uint64
	for idx := uint64(1); idx <= 5; idx++ {
		b.add(idx, make([]byte, 100-slotBytes), 1, func(i uint64, _ recentSlot) { out = append(out, i) })
	}
	require.LessOrEqual(t, pool.Used(), int64(1000+100))
	require.Equal(t, []uint64{1, 2, 3}, out, "b pushes out its own once the pool is over")
	a.clear()
	bb, _ := b.size()
	require.Equal(t, bb, pool.Used(), "a's bytes are given back")
}

// Readers outside the shard's lock (compaction) read while writers add and
// drop: run under -race.
func TestRecentRecordsConcurrent(t *testing.T) {
	r := newRecentRecords(1<<10, nil)
	var wg sync.WaitGroup
	wg.Go(func() {
		for idx := uint64(1); idx <= 20_000; idx++ {
			r.add(idx, []byte{byte(idx)}, 1, func(uint64, recentSlot) {})
			if idx%3 == 0 {
				r.release(idx - 1)
			}
		}
	})
	for range 2 {
		wg.Go(func() {
			for idx := uint64(1); idx <= 20_000; idx++ {
				if rec, _, ok := r.get(idx); ok {
					require.Equal(t, []byte{byte(idx)}, rec)
				}
			}
		})
	}
	wg.Wait()
}

// Through a shard with a record cache: fresh keys are read from the recent
// records, keys whose records were pushed out from the cache (or the log),
// and every value reads back, before and after a reopen; an overwritten
// key's old record leaves the buffer.
func TestRecentRecordsServeReads(t *testing.T) {
	ctx := t.Context()
	c := newDRAMCache(t, 1<<20)
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	opts := Options{Now: clk.Now, Cache: c, CacheID: 9, RecentBytes: 4 << 10}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	val := func(i, gen int) []byte {
		return fmt.Appendf(nil, "value-%d-%d-%s", i, gen, bytes.Repeat([]byte{'x'}, 100))
	}
	const keys = 500
	for gen := range 2 {
		for i := 0; i < keys; i += 10 { // pipelines of 10 and single sets
			var cmds []command.Command
			for j := i; j < i+10; j++ {
				cmds = append(cmds, StringSet(fmt.Appendf(nil, "k%d", j), val(j, gen), time.Time{}))
			}
			if i%20 == 0 {
				require.NoError(t, s.SetBatch(ctx, cmds))
				continue
			}
			for _, cmd := range cmds {
				require.NoError(t, s.Set(ctx, cmd.Key, cmd.Args[0], time.Time{}))
			}
		}
	}
	b, n := s.recent.size()
	require.LessOrEqual(t, b, int64(4<<10)+2<<10, "held to its limit, give or take the newest record")
	require.Positive(t, n)
	check := func(s *Shard) {
		for i := range keys {
			v, ok, err := s.Get(fmt.Appendf(nil, "k%d", i))
			require.NoError(t, err)
			require.True(t, ok, "k%d", i)
			require.Equal(t, val(i, 1), v, "k%d", i)
		}
		// A batched read finds the same values, whether their records
		// are recent, in the record cache or in the log only; a batch
		// past stringBatch keys takes several rounds.
		const per = stringBatch + 36
		for lo := 0; lo < keys; lo += per {
			var batch [][]byte
			for i := lo; i < min(keys, lo+per); i++ {
				batch = append(batch, fmt.Appendf(nil, "k%d", i))
			}
			batch = append(batch, []byte("absent"))
			reads, coll := make([]StringRead, len(batch)), make([]bool, len(batch))
			out := s.AppendStrings(ctx, []byte("dst"), batch, reads, coll)
			for j, r := range reads {
				require.NoError(t, r.Err, "%s", batch[j])
				require.False(t, coll[j])
				if j == len(batch)-1 {
					require.False(t, r.Found)
					continue
				}
				require.True(t, r.Found, "%s", batch[j])
				require.Equal(t, string(val(lo+j, 1)), string(out[r.Start:r.End]), "%s", batch[j])
			}
		}
	}
	check(s)
	// Overwriting a key of a one-command record still held lets it go.
	last := s.applied
	_, _, held := s.recent.get(last)
	require.True(t, held)
	require.NoError(t, s.Set(ctx, []byte(fmt.Sprintf("k%d", keys-1)), val(keys-1, 1), time.Time{}))
	_, _, held = s.recent.get(last)
	require.False(t, held, "a record no key points at leaves")
	require.NoError(t, s.Close())
	s, err = Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	check(s)
}

// A recent record counts the keys that point at it in its slot: it stays
// while any does and goes with the last; pushed out to the record cache,
// its count goes to recordRefs and the cache keeps it until the last key
// goes.
func TestRecentRecordsCountTheirEntries(t *testing.T) {
	ctx := t.Context()
	c := newDRAMCache(t, 64<<20)
	s, err := Open(t.TempDir(), Options{Now: testclock.New(time.Unix(1_764_460_800, 0)).Now, Cache: c, CacheID: 5, RecentBytes: 1 << 20})
	require.NoError(t, err)
	defer s.Close()
	batch := func(kv ...string) []command.Command {
		var cmds []command.Command
		for i := 0; i < len(kv); i += 2 {
			cmds = append(cmds, StringSet([]byte(kv[i]), []byte(kv[i+1]), time.Time{}))
		}
		return cmds
	}
	cached := func(idx uint64) bool {
		_, ok := c.GetShared(s.opts.CacheID, idx)
		return ok
	}
	held := func(idx uint64) bool {
		_, _, ok := s.recent.get(idx)
		return ok
	}
	// Four sets, two to the same key: three keys point at the record.
	require.NoError(t, s.SetBatch(ctx, batch("a", "1", "b", "1", "a", "2", "c", "1")))
	at := s.log.LastIndex()
	require.True(t, held(at))
	for i, k := range []string{"a", "b", "c"} {
		require.True(t, held(at), "held while %d of its keys point at it", 3-i)
		require.NoError(t, s.Set(ctx, []byte(k), []byte("single"), time.Time{}))
	}
	require.False(t, held(at), "no key points at it any more")
	require.False(t, cached(at))
	require.Empty(t, s.recordRefs, "the count lived in the slot")

	// Pushed out while three keys point at it: the cache keeps it until
	// the last one goes.
	require.NoError(t, s.SetBatch(ctx, batch("x", "1", "y", "1", "z", "1")))
	at = s.log.LastIndex()
	for i := range 64 { // newer records push it out of the 1 MiB
		require.NoError(t, s.SetBatch(ctx, batch(fmt.Sprint("fill", i), strings.Repeat("v", 32<<10), fmt.Sprint("fill", i, "b"), "v")))
	}
	require.False(t, held(at))
	require.True(t, cached(at))
	require.Equal(t, int32(3), s.recordRefs[at])
	for _, k := range []string{"x", "y"} {
		require.NoError(t, s.Delete(ctx, []byte(k)))
		require.True(t, cached(at), "kept while a key points at it")
	}
	require.NoError(t, s.Delete(ctx, []byte("z")))
	require.False(t, cached(at), "gone with the last")
	_, ok := s.recordRefs[at]
	require.False(t, ok)
}

// Batches larger than a touch round (stringBatch), replacing keys held in
// recent records and repeating keys within the batch, leave what single
// sets would: every value, the key count and the live bytes, the same
// again after a reopen replays them.
func TestLargeBatchesReplaceEntries(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name   string
		recent int64
		batch  int
	}{
		{"one round", 1 << 20, stringBatch},
		{"rounds and a remainder", 1 << 20, 3*stringBatch + 5},
		{"records pushed out", 4 << 10, 2*stringBatch + 1},
		{"no recent records", 0, 2*stringBatch + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{Now: testclock.New(time.Unix(1_764_460_800, 0)).Now, Cache: newDRAMCache(t, 1<<20), CacheID: 3, RecentBytes: tc.recent}
			s, err := Open(dir, opts)
			require.NoError(t, err)
			const keys = 300
			want := map[string]string{}
			rng := rand.New(rand.NewPCG(uint64(tc.batch), 7))
			for gen := range 6 {
				cmds := make([]command.Command, tc.batch)
				for i := range cmds {
					k := fmt.Sprint("k", rng.IntN(keys))
					if i > 0 && i%7 == 0 {
						k = string(cmds[i-1].Key) // the same key twice: the later wins
					}
					v := fmt.Sprintf("v%d-%d", gen, i)
					cmds[i] = StringSet([]byte(k), []byte(v), time.Time{})
					want[k] = v
				}
				require.NoError(t, s.SetBatch(ctx, cmds))
			}
			check := func(s *Shard) Stats {
				for k, v := range want {
					got, ok, err := s.Get([]byte(k))
					require.NoError(t, err)
					require.True(t, ok, k)
					require.Equal(t, v, string(got), k)
				}
				st := s.Stats()
				require.Equal(t, len(want), st.Keys)
				return st
			}
			before := check(s)
			require.NoError(t, s.Close())
			s, err = Open(dir, opts)
			require.NoError(t, err)
			defer s.Close()
			after := check(s)
			require.Equal(t, before.LiveBytes, after.LiveBytes, "replay accounts the same")
		})
	}
}

// A batched read of keys whose records the recent records have pushed out
// to the record cache looks each record up in the cache once, as single
// reads do, and finds every value.
func TestBatchedReadsLookUpCachedRecordsOnce(t *testing.T) {
	ctx := t.Context()
	c := newDRAMCache(t, 16<<20)
	s, err := Open(t.TempDir(), Options{Now: testclock.New(time.Unix(1_764_460_800, 0)).Now, Cache: c, CacheID: 3, RecentBytes: 1 << 10})
	require.NoError(t, err)
	defer s.Close()
	val := func(i int) []byte { return fmt.Appendf(nil, "%03d-%s", i, bytes.Repeat([]byte{'v'}, 100)) }
	const keys = 200
	for i := range keys {
		require.NoError(t, s.Set(ctx, fmt.Appendf(nil, "k%d", i), val(i), time.Time{}))
	}
	var batch [][]byte
	for i := range 2*stringBatch + 3 { // the oldest keys: their records are in the cache only
		batch = append(batch, fmt.Appendf(nil, "k%d", i))
		e, ok := s.index.Peek(hashKey(batch[i]))
		require.True(t, ok)
		_, _, recent := s.recent.get(e.Addr)
		require.False(t, recent, "k%d", i)
		_, cached := c.GetShared(3, e.Addr)
		require.True(t, cached, "k%d", i)
	}
	before := c.Stats()
	reads, coll := make([]StringRead, len(batch)), make([]bool, len(batch))
	out := s.AppendStrings(ctx, nil, batch, reads, coll)
	after := c.Stats()
	for i, r := range reads {
		require.NoError(t, r.Err)
		require.True(t, r.Found, "k%d", i)
		require.Equal(t, string(val(i)), string(out[r.Start:r.End]), "k%d", i)
	}
	require.Equal(t, int64(len(batch)), after.Hits-before.Hits)
	require.Equal(t, before.Misses, after.Misses)
}
