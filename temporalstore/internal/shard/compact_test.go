package shard

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// Overwrites leave garbage in the log; Compact moves the live values out
// of the old segments and drops them, so space amplification falls, and
// every key (strings, expiring strings, collections) reads the same before
// and after, and after a reopen from the post-compaction checkpoint.
func TestCompactReclaimsOverwrittenValues(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	opts := Options{Durable: false, Now: clk.Now, SegmentSize: 64 << 10}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	ctx := t.Context()
	val := func(i, round int) []byte { return fmt.Appendf(nil, "%d-%d-%s", i, round, noise(200)) }
	for round := range 10 {
		for i := range 200 {
			exp := time.Time{}
			if i%10 == 0 {
				exp = clk.Now().Add(time.Hour)
			}
			require.NoError(t, s.Set(ctx, fmt.Appendf(nil, "k%d", i), val(i, round), exp))
		}
		mutate(t, s, command.Command{Op: OpRPush, Key: []byte("list"), Args: args(fmt.Sprint(round))})
	}
	// Keys that expire before compaction are dropped by it.
	require.NoError(t, s.Set(ctx, []byte("short"), []byte("x"), clk.Now().Add(time.Second)))
	// Half the keys are rewritten once more: the other half's values are
	// live in old segments, and compaction must move them.
	for i := range 100 {
		require.NoError(t, s.Set(ctx, fmt.Appendf(nil, "k%d", i), val(i, 10), time.Time{}))
	}
	clk.Advance(2 * time.Second)
	before := s.Stats()
	require.Greater(t, before.SpaceAmp, 5.0, "ten rounds of overwrites")
	want := dump(t, s)

	var total ReclaimStats
	for range 100 {
		st, err := s.Compact(ctx, 4)
		require.NoError(t, err)
		total.Segments += st.Segments
		total.Moved += st.Moved
		if st.Segments == 0 {
			break
		}
	}
	after := s.Stats()
	t.Logf("space amplification %.2f -> %.2f; %d segments dropped, %d values moved; log %d -> %d bytes",
		before.SpaceAmp, after.SpaceAmp, total.Segments, total.Moved, before.LogBytes, after.LogBytes)
	require.Positive(t, total.Segments)
	require.Positive(t, total.Moved)
	require.Less(t, after.SpaceAmp, 3.0)
	require.Less(t, after.LogBytes, before.LogBytes/3)
	s = requireStateAcrossReopen(t, s, dir, opts, want)
	require.InDelta(t, after.LiveBytes, s.Stats().LiveBytes, 0)
}

// requireStateAcrossReopen checks that s holds want, closes it, and checks
// that the reopened shard, which it returns, does too.
func requireStateAcrossReopen(t *testing.T, s *Shard, dir string, opts Options, want map[string]string) *Shard {
	t.Helper()
	require.Equal(t, want, dump(t, s))
	require.NoError(t, s.Close())
	s, err := Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.Equal(t, want, dump(t, s))
	return s
}

// Once the log's front is reclaimed, the checkpoint is the only way back:
// an open without a usable one fails rather than start with data missing.
func TestReclaimedLogNeedsItsCheckpoint(t *testing.T) {
	dir, clk, opts := t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)), smallSegments()
	opts.Now = clk.Now
	s, err := Open(dir, opts)
	require.NoError(t, err)
	for round := range 5 {
		for i := range 50 {
			require.NoError(t, s.Set(t.Context(), fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "%d%s", round, noise(300)), time.Time{}))
		}
	}
	st, err := s.ReclaimLog(t.Context())
	require.NoError(t, err)
	require.Positive(t, st.Segments, "the first rounds' segments hold only overwritten values")
	require.NoError(t, s.Close())
	for _, img := range images(t, dir) {
		require.NoError(t, os.Remove(img))
	}
	_, err = Open(dir, opts)
	require.ErrorIs(t, err, ErrNoImage)
}

// noise is n incompressible bytes (the log compresses records).
func noise(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rand.IntN(26))
	}
	return string(b)
}

// Compact reads the values it moves before it takes the shard's lock, so
// writes can land in between: a key overwritten or deleted there keeps its
// new state, and a value that expired there is deleted, not moved. The
// values it moves outgrow one record of the small segments, so the moves
// are split across records.
func TestCompactKeepsWritesMadeWhileItReads(t *testing.T) {
	dir, clk, opts := t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)), smallSegments()
	opts.Now = clk.Now
	s, err := Open(dir, opts)
	require.NoError(t, err)
	ctx := t.Context()
	for i := range 100 {
		exp := time.Time{}
		if i == 2 {
			exp = clk.Now().Add(time.Minute)
		}
		require.NoError(t, s.Set(ctx, fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "v%d-%s", i, noise(200)), exp))
	}
	for round := range 5 { // garbage, so the first segments are worth compacting
		for i := range 50 {
			require.NoError(t, s.Set(ctx, fmt.Appendf(nil, "f%d", i), fmt.Appendf(nil, "%d%s", round, noise(300)), time.Time{}))
		}
	}
	calls := 0
	s.beforeRelocate = func() {
		calls++
		if calls > 1 {
			return
		}
		require.NoError(t, s.Set(ctx, []byte("k0"), []byte("new"), time.Time{}))
		require.NoError(t, s.Delete(ctx, []byte("k1")))
		clk.Advance(2 * time.Minute)
	}
	st, err := s.Compact(ctx, 100)
	require.NoError(t, err)
	require.Positive(t, calls)
	require.Positive(t, st.Segments)
	require.Positive(t, st.Moved)

	check := func(s *Shard) {
		t.Helper()
		v, ok, err := s.Get([]byte("k0"))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "new", string(v))
		for _, k := range []string{"k1", "k2"} {
			_, ok, err := s.Get([]byte(k))
			require.NoError(t, err)
			require.False(t, ok, k)
		}
		for i := 3; i < 100; i++ {
			v, ok, err := s.Get(fmt.Appendf(nil, "k%d", i))
			require.NoError(t, err)
			require.True(t, ok, i)
			require.Equal(t, fmt.Sprintf("v%d-", i), string(v[:len(fmt.Sprintf("v%d-", i))]))
		}
	}
	check(s)
	require.NoError(t, s.Close())
	s, err = Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	check(s)
}

// smallSegments are the options of a shard whose log rolls every 16 KiB.
func smallSegments() Options { return Options{SegmentSize: 16 << 10} }

// Compact finds the values to move a chunk of the index at a time, letting
// writers in between: with keys over several chunks and a writer setting
// and deleting keys all along, every value survives the dropped segments
// and a reopen.
func TestCompactScansTheIndexInChunksUnderWrites(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	opts := Options{Now: clk.Now, SegmentSize: 256 << 10}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	ctx := t.Context()
	const keys = 3*compactScanChunk + 500
	model := map[string]string{}
	for i := range keys {
		k, v := fmt.Sprintf("k%05d", i), fmt.Sprintf("v%d-%s", i, noise(40))
		require.NoError(t, s.Set(ctx, []byte(k), []byte(v), time.Time{}))
		model[k] = v
	}
	for i := 0; i < keys; i += 2 { // half overwritten: the rest must move
		k, v := fmt.Sprintf("k%05d", i), fmt.Sprintf("w%d-%s", i, noise(40))
		require.NoError(t, s.Set(ctx, []byte(k), []byte(v), time.Time{}))
		model[k] = v
	}
	var mu sync.Mutex
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(11, 12))
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			k := fmt.Sprintf("k%05d", rng.IntN(keys))
			mu.Lock()
			if n%5 == 0 {
				err = s.Delete(ctx, []byte(k))
				delete(model, k)
			} else {
				v := fmt.Sprintf("x%d", n)
				err = s.Set(ctx, []byte(k), []byte(v), time.Time{})
				model[k] = v
			}
			mu.Unlock()
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var total ReclaimStats
	for range 20 {
		st, err := s.Compact(ctx, 2)
		require.NoError(t, err)
		total.Segments += st.Segments
		total.Moved += st.Moved
	}
	close(stop)
	<-done
	require.Positive(t, total.Segments)
	require.Positive(t, total.Moved)
	want := map[string]string{}
	for k, v := range model {
		want[k] = "string:" + v + fmt.Sprint(time.Time{}.UnixMilli())
	}
	requireStateAcrossReopen(t, s, dir, opts, want)
}
