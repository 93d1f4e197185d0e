package temporalstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// Control state: buckets, windows and aggregators, distinct values,
// families and idempotent set-and-get (across a restart), selections and
// quotas.
func TestControlState(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	dir := t.TempDir()
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	q := func(c Command) Response { t.Helper(); return exec(t, e, c) }
	now := clk.Now().UnixMilli()

	// Increments bucket by precision; reads by window.
	q(Command{Kind: KindCIncr, Key: b("c"), At: 1_500, Delta: 2, PrecisionMs: 1000})
	q(Command{Kind: KindCIncr, Key: b("c"), At: 1_999, Delta: 3, PrecisionMs: 1000})
	q(Command{Kind: KindCIncr, Key: b("c"), At: 5_000, Delta: -1})
	q(Command{Kind: KindCIncr, Key: b("c"), At: 9_000, Delta: 10})
	require.Equal(t, int64(14), q(Command{Kind: KindCCount, Key: b("c"), Start: 0, End: 10_000}).Int)
	require.Equal(t, int64(4), q(Command{Kind: KindCCount, Key: b("c"), Start: 1_000, End: 5_000}).Int)
	for agg, want := range map[string]int64{"sum": 14, "": 14, "count": 14, "events": 3, "len": 3, "min": -1, "max": 10, "first": 5, "last": 10} {
		require.Equal(t, want, q(Command{Kind: KindCQuery, Key: b("c"), Start: 0, End: 10_000, Aggregator: agg}).Int, agg)
	}
	require.Equal(t, int64(0), q(Command{Kind: KindCQuery, Key: b("c"), Start: 20_000, End: 30_000, Aggregator: "max"}).Int)
	d := q(Command{Kind: KindCDetail, Key: b("c"), Start: 0, End: 10_000, Count: 2, HasCount: true})
	require.Equal(t, []string{"1000=5", "5000=-1"}, render(d.Points))
	require.Equal(t, []byte("controlstate"), q(Command{Kind: KindType, Key: b("c")}).Value)
	_, err := e.Execute(ctx, Command{Kind: KindCQuery, Key: b("c"), End: 10, Aggregator: "p99"})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = e.Execute(ctx, Command{Kind: KindCIncr, Key: b("c"), At: -5, Delta: 1})
	require.ErrorIs(t, err, ErrInvalid)
	q(Command{Kind: KindSet, Key: b("str"), Value: b("v")})
	_, err = e.Execute(ctx, Command{Kind: KindCIncr, Key: b("str"), Delta: 1})
	require.ErrorIs(t, err, ErrWrongType)

	// Distinct values per bucket, counted over a window.
	for _, v := range []string{"a", "b", "a", "c"} {
		q(Command{Kind: KindCChange, Key: b("c"), At: 1_200, PrecisionMs: 1000, Value: b(v)})
	}
	q(Command{Kind: KindCChange, Key: b("c"), At: 7_000, Value: b("d")})
	require.Equal(t, int64(3), q(Command{Kind: KindCQuery, Key: b("c"), Start: 0, End: 5_000, Aggregator: "change"}).Int)
	require.Equal(t, int64(4), q(Command{Kind: KindCQuery, Key: b("c"), Start: 0, End: 10_000, Aggregator: "change"}).Int)

	// A TTL slides with each write.
	q(Command{Kind: KindCIncr, Key: b("t"), At: now, Delta: 1, TTL: time.Minute})
	clk.Advance(30 * time.Second)
	q(Command{Kind: KindCIncr, Key: b("t"), At: now, Delta: 1, TTL: time.Minute})
	require.Equal(t, int64(60_000), q(Command{Kind: KindPTTL, Key: b("t")}).Int)

	// Families: set-and-get returns the aggregate including its own
	// increment; a repeated request id adds nothing.
	sg := func(id string, delta int64) int64 {
		return q(Command{Kind: KindCSetAndGet, Family: "h", Key: b("u"), At: 2_000, Delta: delta, Start: 0, End: 10_000, Aggregator: "sum", RequestID: id}).Int
	}
	require.Equal(t, int64(5), sg("r1", 5))
	require.Equal(t, int64(8), sg("r2", 3))
	require.Equal(t, int64(8), sg("r1", 5), "a retried request is not applied twice")
	require.Equal(t, int64(8), q(Command{Kind: KindCFamilyQuery, Family: "counter", Key: b("u"), Start: 0, End: 10_000}).Int)
	require.Equal(t, int64(0), q(Command{Kind: KindCCount, Key: b("u"), Start: 0, End: 10_000}).Int, "the raw key is another state")
	require.Equal(t, []byte("controlstate"), q(Command{Kind: KindType, Key: FamilyKey("h", b("u"))}).Value)
	_, err = e.Execute(ctx, Command{Kind: KindCSetAndGet, Family: "x", Key: b("u")})
	require.ErrorIs(t, err, ErrInvalid)

	// Selections: first keeps the earliest, last the latest; 0 is now.
	q(Command{Kind: KindCSelect, Key: b("sel"), Value: b("b"), At: 20})
	q(Command{Kind: KindCSelect, Key: b("sel"), Value: b("a"), At: 10})
	q(Command{Kind: KindCSelect, Key: b("sel"), Value: b("c"), At: 30})
	require.Equal(t, "a", string(q(Command{Kind: KindCSelection, Key: b("sel")}).Value))
	q(Command{Kind: KindCSelect, Key: b("last"), Value: b("x"), SelectLast: true})
	q(Command{Kind: KindCSelect, Key: b("last"), Value: b("y"), At: 1, SelectLast: true})
	require.Equal(t, "x", string(q(Command{Kind: KindCSelection, Key: b("last")}).Value))
	require.False(t, q(Command{Kind: KindCSelection, Key: b("nosel")}).Found)

	// Quotas: at most 3 in the last 10 s.
	take := func(n int64) Response {
		return q(Command{Kind: KindCTake, Key: b("quota"), Delta: n, Limit: 3, Window: 10 * time.Second, PrecisionMs: 1000})
	}
	require.True(t, take(2).Applied)
	clk.Advance(4 * time.Second)
	require.True(t, take(1).Applied)
	r := take(1)
	require.False(t, r.Applied)
	require.Equal(t, int64(3), r.Int)
	require.Greater(t, r.RetryAfter, 5*time.Second)
	require.LessOrEqual(t, r.RetryAfter, 6*time.Second)
	clk.Advance(r.RetryAfter)
	require.True(t, take(1).Applied)
	_, err = e.Execute(ctx, Command{Kind: KindCTake, Key: b("quota"), Delta: 1, Limit: 3})
	require.ErrorIs(t, err, ErrInvalid)

	// A busy quota keeps its window's buckets only: each take drops those
	// before its window, in its record, so a restart agrees.
	busyTotal := func() int64 {
		return q(Command{Kind: KindCCount, Key: b("busy"), Start: 0, End: clk.Now().UnixMilli()}).Int
	}
	for range 50 {
		clk.Advance(100 * time.Millisecond)
		require.True(t, q(Command{Kind: KindCTake, Key: b("busy"), Delta: 1, Limit: 100, Window: time.Second}).Applied)
	}
	require.Equal(t, int64(10), busyTotal(), "ten takes a second, a second's window")
	require.NoError(t, e.Close())
	e = openEngine(t, dir, clk)
	require.Equal(t, int64(10), busyTotal())

	// A take with a request id counts once however often it is retried;
	// a refused one records no id, so its retry is judged afresh.
	idTake := func(id string, n int64) Response {
		return q(Command{Kind: KindCTake, Key: b("budget"), Delta: n, Limit: 10, Window: time.Minute, RequestID: id})
	}
	require.Equal(t, int64(6), idTake("r1", 6).Int)
	r = idTake("r1", 6)
	require.True(t, r.Applied)
	require.Equal(t, int64(6), r.Int, "the retry added nothing")
	require.False(t, idTake("r2", 5).Applied)
	require.True(t, idTake("r3", 4).Applied)
	require.False(t, idTake("r2", 5).Applied, "r2 was refused, not recorded: judged again")
	require.NoError(t, e.Close())
	e = openEngine(t, dir, clk)
	q = func(c Command) Response { return exec(t, e, c) }
	require.Equal(t, int64(10), idTake("r1", 6).Int, "ids survive a restart")

	// Pacing: 2 a second, evenly, then with a burst of 2.
	pace := func(key string, burst int) Response {
		c := Command{Kind: KindCPace, Key: b(key), Limit: 2, Window: time.Second}
		if burst > 0 {
			c.Count, c.HasCount = burst, true
		}
		return q(c)
	}
	require.True(t, pace("p", 0).Applied)
	r = pace("p", 0)
	require.False(t, r.Applied)
	require.Equal(t, 500*time.Millisecond, r.RetryAfter)
	clk.Advance(500 * time.Millisecond)
	require.True(t, pace("p", 0).Applied)
	require.True(t, pace("pb", 2).Applied)
	require.True(t, pace("pb", 2).Applied)
	require.False(t, pace("pb", 2).Applied)
	_, err = e.Execute(ctx, Command{Kind: KindCPace, Key: b("p"), Limit: 0, Window: time.Second})
	require.ErrorIs(t, err, ErrInvalid)
	// A cost above the burst never fits: refused, no wait suggested.
	r = q(Command{Kind: KindCPace, Key: b("pc"), Limit: 10, Window: time.Second, Delta: 3})
	require.False(t, r.Applied)
	require.Zero(t, r.RetryAfter)
	r = q(Command{Kind: KindCPace, Key: b("pc"), Limit: 10, Window: time.Second, Delta: 3, Count: 3, HasCount: true})
	require.True(t, r.Applied)

	// Everything survives a restart, the idempotency ledger included, and
	// an id is applied again once its window has passed.
	require.NoError(t, e.Close())
	e = openEngine(t, dir, clk)
	defer e.Close()
	require.Equal(t, int64(14), q(Command{Kind: KindCCount, Key: b("c"), Start: 0, End: 10_000}).Int)
	require.Equal(t, int64(8), sg("r1", 5))
	clk.Advance(ControlDedupWindow + time.Second)
	require.Equal(t, int64(13), sg("r1", 5))
	require.Equal(t, "a", string(q(Command{Kind: KindCSelection, Key: b("sel")}).Value))
}

// AggregatorName gives a known aggregator its own name in any case, and
// anything else as it is, for Execute to refuse.
func TestAggregatorName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"sum", "sum"}, {"SUM", "sum"}, {"Change", "change"}, {"events", "events"},
		{"", ""}, {"summ", "summ"}, {"su", "su"}, {"avg", "avg"},
	} {
		require.Equal(t, tc.want, AggregatorName([]byte(tc.in)), tc.in)
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = AggregatorName([]byte("Sum")) }))
}

// Concurrent set-and-get calls, combined into shared batches, each get the
// aggregate with their own event and nobody else's later one: over one key
// the sums returned are exactly 1..n, and a retried request id returns the
// current sum without adding. A call allocates at most three times (its
// stored key, its share of the log's batch and of the combiner's queue).
func TestCSetAndGetConcurrent(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	ctx := t.Context()
	now := clk.Now().UnixMilli()
	call := func(key, id string) (int64, error) {
		r, err := e.Execute(ctx, Command{
			Kind: KindCSetAndGet, Family: "h", Key: []byte(key), At: now, Delta: 1,
			Start: now - 3_599_999, End: now, Aggregator: "sum", PrecisionMs: 60_000, TTL: time.Hour, RequestID: id,
		})
		return r.Int, err
	}
	const keys, perKey, workers = 4, 200, 16
	sums := make([][]int64, keys)
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			errs[w] = func() error {
				for i := w; i < keys*perKey; i += workers {
					k := i % keys
					id := fmt.Sprintf("r%d", i)
					sum, err := call(fmt.Sprint("k", k), id)
					if err != nil {
						return err
					}
					if i%7 == 0 { // a retry: the same id adds nothing
						again, err := call(fmt.Sprint("k", k), id)
						if err != nil {
							return err
						}
						if again < sum {
							return fmt.Errorf("retry of %s saw %d after %d", id, again, sum)
						}
					}
					mu.Lock()
					sums[k] = append(sums[k], sum)
					mu.Unlock()
				}
				return nil
			}()
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	for k := range keys {
		slices.Sort(sums[k])
		want := make([]int64, perKey)
		for i := range want {
			want[i] = int64(i + 1)
		}
		require.Equal(t, want, sums[k], "key k%d", k)
		final, err := call(fmt.Sprint("k", k), fmt.Sprint("r", k)) // seen: no increment
		require.NoError(t, err)
		require.Equal(t, int64(perKey), final)
	}

	key := []byte("alloc")
	c := Command{Kind: KindCSetAndGet, Family: "h", Key: key, At: now, Delta: 1, Start: now - 3_599_999, End: now, Aggregator: "sum", PrecisionMs: 60_000}
	_, err := e.Execute(ctx, c)
	require.NoError(t, err)
	require.LessOrEqual(t, testing.AllocsPerRun(200, func() { _, _ = e.Execute(ctx, c) }), 3.0)
}

// ExecuteInPlace runs a lent command as Execute runs a copy, and a
// cancelled context runs nothing.
func TestExecuteInPlace(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	now := clk.Now().UnixMilli()
	c := Command{Kind: KindCSetAndGet, Family: "h", Key: []byte("k"), At: now, Delta: 2, Start: now - 1000, End: now, Aggregator: "sum"}
	r, err := e.ExecuteInPlace(t.Context(), &c)
	require.NoError(t, err)
	require.Equal(t, int64(2), r.Int)
	c = Command{Kind: KindCSetAndGet, Family: "h", Key: []byte("k"), At: now, Delta: 3, Start: now - 1000, End: now, Aggregator: "sum"}
	r, err = e.Execute(t.Context(), c)
	require.NoError(t, err)
	require.Equal(t, int64(5), r.Int, "both reach the same family key")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	c = Command{Kind: KindCSetAndGet, Family: "h", Key: []byte("k"), At: now, Delta: 1, Start: now - 1000, End: now, Aggregator: "sum"}
	_, err = e.ExecuteInPlace(ctx, &c)
	require.ErrorIs(t, err, context.Canceled)
	r, err = e.Execute(t.Context(), Command{Kind: KindCFamilyQuery, Family: "h", Key: []byte("k"), Start: now - 1000, End: now, Aggregator: "sum"})
	require.NoError(t, err)
	require.Equal(t, int64(5), r.Int, "the cancelled call added nothing")
}
