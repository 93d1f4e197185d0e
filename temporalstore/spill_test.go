package temporalstore

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/teststorage"
)

// Collections far larger than the collection budget are all served, from
// the log, and the process's heap stays well below their size: 1,500
// hashes of 16 KiB (24 MiB of values) under a 2 MiB budget and a 1 MiB
// record cache, across writes, reads and a reopen.
func TestCollectionsLargerThanTheBudgetAreServed(t *testing.T) {
	teststorage.SkipOnMem(t, "the heap to hold the budget, which an in-memory log is part of")
	if testing.Short() {
		t.Skip("writes 24 MiB")
	}
	const (
		hashes, fields, valueSize = 1500, 16, 1024
		budget                    = 2 << 20
	)
	dir := t.TempDir()
	opts := Options{Dir: dir, CollectionBytes: budget, CacheBytes: 1 << 20, MaintenanceInterval: Disabled}
	e, err := testOpen(t.Context(), opts)
	require.NoError(t, err)
	require.NoError(t, e.CreateTable(t.Context(), "big", "t", TableOptions{Shards: 2, Async: true}))
	key := func(i int) []byte { return fmt.Appendf(nil, "h%05d", i) }
	value := func(i, f int) []byte {
		v := make([]byte, valueSize)
		for j := range v {
			v[j] = byte(i*31 + f*7 + j)
		}
		return v
	}
	q := func(e *Engine, c Command) Response {
		c.Namespace, c.Table = "big", "t"
		return exec(t, e, c)
	}
	for i := range hashes {
		var args [][]byte
		for f := range fields {
			args = append(args, fmt.Appendf(nil, "f%02d", f), value(i, f))
		}
		q(e, Command{Kind: KindHSet, Key: key(i), Args: args})
	}
	check := func(e *Engine) {
		t.Helper()
		for i := range hashes {
			require.Equal(t, int64(fields), q(e, Command{Kind: KindHLen, Key: key(i)}).Int)
			f := i % fields
			require.Equal(t, value(i, f), q(e, Command{Kind: KindHGet, Key: key(i), Args: [][]byte{fmt.Appendf(nil, "f%02d", f)}}).Value)
		}
		var spilled int
		stats, err := e.Stats()
		require.NoError(t, err)
		for _, s := range stats {
			spilled += s.Spilled
		}
		require.Greater(t, spilled, hashes/2, "most hashes live in the log")
		require.LessOrEqual(t, e.collections.Used(), int64(budget+budget/4))
	}
	check(e)
	// A write to a spilled hash loads it, changes it, and may spill it
	// again; the change is kept either way.
	q(e, Command{Kind: KindHSet, Key: key(0), Args: [][]byte{[]byte("extra"), []byte("x")}})
	require.Equal(t, []byte("x"), q(e, Command{Kind: KindHGet, Key: key(0), Args: [][]byte{[]byte("extra")}}).Value)
	q(e, Command{Kind: KindHDel, Key: key(0), Args: [][]byte{[]byte("extra")}})

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap %d MiB", ms.HeapAlloc>>20)
	require.Less(t, ms.HeapAlloc, uint64(hashes*fields*valueSize/2),
		"the heap holds the budget, not the collections")
	require.NoError(t, e.Close())

	e, err = testOpen(t.Context(), opts)
	require.NoError(t, err)
	defer e.Close()
	check(e)
}

// A series' rollup ladder, built by a read, counts against the collection
// budget from the series' next write, and leaves the count exactly when
// the series goes.
func TestRollupCountsAgainstTheCollectionBudget(t *testing.T) {
	e, err := testOpen(t.Context(), Options{Dir: t.TempDir(), MaintenanceInterval: Disabled})
	require.NoError(t, err)
	defer e.Close()
	base := e.collections.Used()
	// 5 points a second over 1,600 s: dense enough to keep the 1 s level.
	const n = 8000
	points := make([]Point, n)
	for i := range points {
		points[i] = Point{TS: int64(i) * 200, Value: []byte("1")}
	}
	exec(t, e, Command{Kind: KindFAppend, Key: []byte("f"), Points: points})
	before := e.collections.Used()
	r := exec(t, e, Command{Kind: KindFAgg, Key: []byte("f"), Start: 0, End: n * 200, Aggregator: "sum"})
	require.Equal(t, int64(n), r.Int)
	require.Equal(t, before, e.collections.Used(), "a read counts nothing")
	exec(t, e, Command{Kind: KindFAppend, Key: []byte("f"), Points: []Point{{TS: n * 200, Value: []byte("1")}}})
	// 1,600 cells of 1 s, 27 of 1 min, one of 1 h and of 1 d.
	require.GreaterOrEqual(t, e.collections.Used()-before, int64(1600*72))
	exec(t, e, Command{Kind: KindFDelete, Key: []byte("f")})
	require.Equal(t, base, e.collections.Used(), "all that was counted is freed")
	// A series whose rollup a read built goes before any write counted
	// it: no more is freed than was counted.
	exec(t, e, Command{Kind: KindFAppend, Key: []byte("g"), Points: points})
	exec(t, e, Command{Kind: KindFAgg, Key: []byte("g"), Start: 0, End: n * 200, Aggregator: "sum"})
	exec(t, e, Command{Kind: KindFDelete, Key: []byte("g")})
	require.Equal(t, base, e.collections.Used())
}
