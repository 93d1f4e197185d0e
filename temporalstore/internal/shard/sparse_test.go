package shard

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// Records of pipelined SETs whose keys later writes overwrite are queued as
// sparse once the recent records let them go; RelocateSparse rewrites
// their live values into new records (values and expiries unchanged,
// before and after a reopen), leaves records that are not sparse alone,
// and an expired value is deleted rather than moved.
func TestRelocateSparseRewritesMostlyDeadRecords(t *testing.T) {
	ctx := t.Context()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	dir := t.TempDir()
	opts := Options{Now: clk.Now, Cache: newDRAMCache(t, 16<<20), CacheID: 4, RecentBytes: 8 << 10}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	val := func(i, gen int) []byte { return fmt.Appendf(nil, "%04d-%d-%s", i, gen, bytes.Repeat([]byte{'v'}, 64)) }
	key := func(i int) []byte { return fmt.Appendf(nil, "k%04d", i) }
	// 64 records of 16 keys each; then keys 0..11 of every record are
	// overwritten one at a time, leaving each pipeline record 4 live keys
	// of 16 (sparse), except the first record's, which keeps 16.
	const records, per = 64, 16
	want := map[string][]byte{}
	expiring := string(key(per + 12)) // a live key of the second record
	for r := range records {
		var cmds []command.Command
		for j := range per {
			i := r*per + j
			exp := time.Time{}
			if string(key(i)) == expiring {
				exp = clk.Now().Add(time.Minute)
			}
			cmds = append(cmds, StringSet(key(i), val(i, 0), exp))
			want[string(key(i))] = val(i, 0)
		}
		require.NoError(t, s.SetBatch(ctx, cmds))
	}
	for r := 1; r < records; r++ {
		for j := range 12 {
			i := r*per + j
			require.NoError(t, s.Set(ctx, key(i), val(i, 1), time.Time{}))
			want[string(key(i))] = val(i, 1)
		}
	}
	require.NotEmpty(t, s.sparse)
	addrOf := func(k []byte) uint64 {
		e, ok := s.index.Get(hashKey(k), s.matcher(k))
		require.True(t, ok)
		return e.Addr
	}
	firstRecord, sparseRecord := addrOf(key(0)), addrOf(key(2*per+12))
	clk.Advance(2 * time.Minute) // the expiring key's value is now expired
	delete(want, expiring)
	// Writes landing between the reads and the rewrite keep their state:
	// a live key of a sparse record overwritten, another deleted.
	overwritten, deleted := key(3*per+13), key(3*per+14)
	once := false
	s.beforeRelocate = func() {
		if once {
			return
		}
		once = true
		require.NoError(t, s.Set(ctx, overwritten, []byte("new"), time.Time{}))
		require.NoError(t, s.Delete(ctx, deleted))
	}
	want[string(overwritten)] = []byte("new")
	delete(want, string(deleted))
	var moved int
	for len(s.sparse) > 0 {
		st, err := s.RelocateSparse(ctx, 100) // one batch of moves: the writes land inside it
		require.NoError(t, err)
		moved += st.Moved
	}
	require.True(t, once)
	require.Equal(t, (records-1)*4-1-2, moved, "4 live keys of each sparse record, but the expired, overwritten and deleted ones")
	require.Equal(t, firstRecord, addrOf(key(0)), "a record of live keys stays")
	require.NotEqual(t, sparseRecord, addrOf(key(2*per+12)), "a sparse record's live keys moved")
	check := func(s *Shard) {
		for k, v := range want {
			got, ok, err := s.Get([]byte(k))
			require.NoError(t, err)
			require.True(t, ok, k)
			require.Equal(t, v, got, k)
		}
		for _, k := range [][]byte{[]byte(expiring), deleted} {
			_, ok, err := s.Get(k)
			require.NoError(t, err)
			require.False(t, ok, "%s", k)
		}
	}
	check(s)
	require.NoError(t, s.Close())
	s, err = Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	check(s)
	_, err = s.RelocateSparse(ctx, 10)
	require.NoError(t, err)
}
