package shard

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/teststorage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// With a cache, reads are served from it (records written are put there),
// a record evicted from it is read from the log again, and what a key
// holds is the same either way, across a reopen too.
func TestReadsThroughTheCache(t *testing.T) {
	ctx := t.Context()
	c := newDRAMCache(t, 256<<10)
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	opts := Options{Durable: true, Now: clk.Now, Cache: c, CacheID: 7}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	want := map[string]string{}
	// Far more than the cache holds, so some reads miss it.
	for i := range 4000 {
		k, v := fmt.Sprintf("k%d", i%1000), fmt.Sprintf("%d-%s", i, noise(200))
		require.NoError(t, s.Set(ctx, []byte(k), []byte(v), time.Time{}))
		want[k] = v
	}
	check := func() {
		for k, v := range want {
			got, ok, err := s.Get([]byte(k))
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, v, string(got))
		}
	}
	check()
	check()
	st := c.Stats()
	require.Positive(t, st.Hits, "reads are served from the cache")
	require.Positive(t, st.Misses, "and the log serves what it evicted")
	require.NoError(t, s.Close())
	s, err = Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	check()
}

// A record stays in the cache while a key points at it and leaves it once
// none does: overwritten keys do not crowd out live records.
func TestDeadRecordsLeaveTheCache(t *testing.T) {
	ctx := t.Context()
	c := newDRAMCache(t, 64<<20)
	s, err := Open(t.TempDir(), Options{Now: testclock.New(time.Unix(1_764_460_800, 0)).Now, Cache: c, CacheID: 3})
	require.NoError(t, err)
	defer s.Close()
	entries := func() int64 { return c.Stats().Entries }

	// One record of four sets, two of them to the same key: three keys
	// point at it.
	batch := func(kv ...string) []command.Command {
		var cmds []command.Command
		for i := 0; i < len(kv); i += 2 {
			cmds = append(cmds, command.Command{Op: OpSet, Key: []byte(kv[i]), Args: [][]byte{[]byte(kv[i+1])}})
		}
		return cmds
	}
	require.NoError(t, s.SetBatch(ctx, batch("a", "1", "b", "1", "a", "2", "c", "1")))
	batchAt := s.log.LastIndex()
	cached := func(idx uint64) bool {
		_, ok := c.GetShared(s.opts.CacheID, idx)
		return ok
	}
	require.True(t, cached(batchAt))
	for i, k := range []string{"a", "b", "c"} {
		require.True(t, cached(batchAt), "the batch record stays while %d of its keys point at it", 3-i)
		require.NoError(t, s.Set(ctx, []byte(k), []byte("single"), time.Time{}))
	}
	require.False(t, cached(batchAt), "no key points at the batch record any more")
	require.Equal(t, int64(3), entries(), "the three single records are cached")
	aAt := s.log.LastIndex() - 2
	require.True(t, cached(aAt))
	require.NoError(t, s.Set(ctx, []byte("a"), []byte("again"), time.Time{}))
	require.False(t, cached(aAt), "an overwritten single record leaves")
	require.NoError(t, s.Delete(ctx, []byte("b")))
	require.Equal(t, int64(2), entries(), "and a deleted key's record too; a delete is not cached")
	for k, want := range map[string]string{"a": "again", "c": "single"} {
		got, ok, err := s.Get([]byte(k))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, want, string(got))
	}
	_, ok, err := s.Get([]byte("b"))
	require.NoError(t, err)
	require.False(t, ok)
	require.Empty(t, s.recordRefs)
}

// newDRAMCache is a record cache of capacity bytes (a DRAM tier on the
// disk storage), closed when tb ends.
func newDRAMCache(tb testing.TB, capacity int64) storage.RecordCache {
	return teststorage.Cache(tb, capacity)
}

func init() { testOpenLog = teststorage.OpenLog() }
