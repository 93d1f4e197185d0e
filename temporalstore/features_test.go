package temporalstore

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

func pts(kv ...any) []Point {
	var out []Point
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, Point{TS: int64(kv[i].(int)), Value: []byte(fmt.Sprint(kv[i+1]))})
	}
	return out
}

func render(ps []Point) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%d=%s", p.TS, p.Value))
	}
	return out
}

// The original's feature series semantics, case by case.
func TestFeatureSeriesSemantics(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	dir := t.TempDir()
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	require.NoError(t, e.CreateTable(ctx, "f", "small", TableOptions{FeatureMaxSize: 5}))
	q := func(c Command) Response { t.Helper(); return exec(t, e, c) }
	window := func(key string, start, end int64, count ...int) []string {
		t.Helper()
		c := Command{Kind: KindFQuery, Key: b(key), Start: start, End: end}
		if len(count) > 0 {
			c.Count, c.HasCount = count[0], true
		}
		return render(q(c).Points)
	}

	// Appends upsert per timestamp; the last of a batch wins; windows are
	// inclusive and ascending; count takes the first N.
	q(Command{Kind: KindFAppend, Key: b("f"), Points: pts(30, "c", 10, "a", 20, "b", 10, "A")})
	require.Equal(t, []string{"10=A", "20=b", "30=c"}, window("f", 0, 100))
	require.Equal(t, []string{"10=A", "20=b"}, window("f", 10, 20))
	require.Equal(t, []string{"20=b"}, window("f", 11, 29))
	require.Equal(t, []string{"10=A"}, window("f", 0, 100, 1))
	require.Equal(t, []string{}, window("f", 30, 10))
	require.Equal(t, []string{}, window("absent", 0, 100))
	require.Equal(t, []byte("series"), q(Command{Kind: KindType, Key: b("f")}).Value)

	// Write policies, with their change flag.
	r := q(Command{Kind: KindFAppend, Key: b("f"), Policy: PolicyInsertIfAbsent, Points: pts(10, "no", 40, "d", 40, "dup")})
	require.Equal(t, int64(1), r.Int)
	require.Equal(t, []string{"10=A", "20=b", "30=c", "40=d"}, window("f", 0, 100))
	r = q(Command{Kind: KindFAppend, Key: b("f"), Policy: PolicyInsertIfAbsent, Points: pts(10, "no")})
	require.Equal(t, int64(0), r.Int)
	r = q(Command{Kind: KindFAppend, Key: b("f"), Policy: PolicyReplaceExisting, Points: pts(20, "B", 50, "no")})
	require.Equal(t, int64(1), r.Int)
	require.Equal(t, []string{"10=A", "20=B", "30=c", "40=d"}, window("f", 0, 100))
	r = q(Command{Kind: KindFAppend, Key: b("f"), Policy: PolicyReplaceExisting, Points: pts(50, "no")})
	require.Equal(t, int64(0), r.Int)
	_, err := e.Execute(ctx, Command{Kind: KindFAppend, Key: b("f"), Policy: PolicyBlock, Points: pts(60, "x")})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = e.Execute(ctx, Command{Kind: KindFAppend, Key: b("f"), Points: []Point{{TS: -1, Value: b("x")}}})
	require.ErrorIs(t, err, ErrInvalid)

	// Replace: the window's points go, the new ones (even outside it)
	// come.
	q(Command{Kind: KindFReplace, Key: b("f"), Start: 15, End: 35, Points: pts(25, "r", 90, "z")})
	require.Equal(t, []string{"10=A", "25=r", "40=d", "90=z"}, window("f", 0, 100))

	// Retention: the table keeps 5, trimming the oldest, and a read count
	// above it is clamped.
	for i := range 8 {
		q(Command{Namespace: "f", Table: "small", Kind: KindFAppend, Key: b("s"), Points: pts(i, i)})
	}
	r = q(Command{Namespace: "f", Table: "small", Kind: KindFQuery, Key: b("s"), Start: 0, End: 100, Count: 50, HasCount: true})
	require.Equal(t, []string{"3=3", "4=4", "5=5", "6=6", "7=7"}, render(r.Points))

	// The hard cap refuses a write whole.
	big := make([]Point, MaxFeatureAppend-3)
	for i := range big {
		big[i] = Point{TS: int64(1000 + i), Value: b("1")}
	}
	_, err = e.Execute(ctx, Command{Kind: KindFAppend, Key: b("f"), Points: big})
	require.ErrorIs(t, err, ErrSeriesTooLarge)
	require.Len(t, window("f", 0, 1<<40), 4)

	// Types: a series is not a string, nor a string a series.
	_, err = e.Execute(ctx, Command{Kind: KindGet, Key: b("f")})
	require.ErrorIs(t, err, ErrWrongType)
	q(Command{Kind: KindSet, Key: b("str"), Value: b("v")})
	_, err = e.Execute(ctx, Command{Kind: KindFAppend, Key: b("str"), Points: pts(1, 1)})
	require.ErrorIs(t, err, ErrWrongType)
	_, err = e.Execute(ctx, Command{Kind: KindFQuery, Key: b("str"), End: 10})
	require.ErrorIs(t, err, ErrWrongType)

	// A series survives a reopen, with its TTL.
	require.Equal(t, int64(1), q(Command{Kind: KindExpire, Key: b("f"), TTL: time.Minute}).Int)
	require.NoError(t, e.Close())
	e = openEngine(t, dir, clk)
	defer e.Close()
	require.Equal(t, []string{"10=A", "25=r", "40=d", "90=z"}, window("f", 0, 100))
	require.Equal(t, int64(60_000), q(Command{Kind: KindPTTL, Key: b("f")}).Int)

	// Delete.
	require.Equal(t, int64(1), q(Command{Kind: KindFDelete, Key: b("f")}).Int)
	require.Equal(t, int64(0), q(Command{Kind: KindFDelete, Key: b("f")}).Int)
	require.Equal(t, []byte("none"), q(Command{Kind: KindType, Key: b("f")}).Value)
}

// Aggregators follow the original: decimal values after leading spaces,
// non-numbers skipped by sum/avg/min/max and counted by count, first and
// last from the window's ends, 0 for an empty window; an unknown name is
// an error.
func TestFeatureAggregates(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	defer e.Close()
	exec(t, e, Command{Kind: KindFAppend, Key: b("a"), Points: pts(1, " 7", 2, "x", 3, "-3", 4, "10", 5, "2")})
	for _, tc := range []struct {
		agg        string
		start, end int64
		count      int
		want       int64
	}{
		{"sum", 0, 10, 0, 16}, {"SUM", 0, 10, 0, 16}, {"avg", 0, 10, 0, 4}, {"average", 0, 10, 0, 4},
		{"min", 0, 10, 0, -3}, {"max", 0, 10, 0, 10}, {"first", 0, 10, 0, 7}, {"last", 0, 10, 0, 2},
		{"count", 0, 10, 0, 5}, {"events", 0, 10, 0, 5}, {"", 0, 10, 0, 5},
		{"first", 2, 10, 0, 0}, // "x" is not a number
		{"sum", 0, 10, 2, 7},   // the first two points: 7 and x
		{"sum", 20, 30, 0, 0}, {"avg", 20, 30, 0, 0}, {"min", 20, 30, 0, 0},
		{"avg", 2, 3, 0, -3}, {"avg", 3, 4, 0, 3},
	} {
		c := Command{Kind: KindFAgg, Key: b("a"), Start: tc.start, End: tc.end, Aggregator: tc.agg}
		if tc.count > 0 {
			c.Count, c.HasCount = tc.count, true
		}
		require.Equal(t, tc.want, exec(t, e, c).Int, "%+v", tc)
	}
	_, err := e.Execute(t.Context(), Command{Kind: KindFAgg, Key: b("a"), End: 10, Aggregator: "median"})
	require.ErrorIs(t, err, ErrInvalid)
}

// Filtered reads decode each value as a protobuf row; count limits the
// points scanned before filtering; rows missing a field are dropped.
func TestFeatureFilteredReads(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	defer e.Close()
	ps := []Point{
		{TS: 1, Value: EncodeRow(1, 10, 100, 7)},
		{TS: 2, Value: EncodeRow(2, 20, 200, 7)},
		{TS: 3, Value: []byte{0x08, 0x01}}, // gid only
		{TS: 4, Value: EncodeRow(4, 10, 400, 8)},
		{TS: 5, Value: []byte{0xff}}, // not protobuf
	}
	exec(t, e, Command{Kind: KindFAppend, Key: b("r"), Points: ps})
	ts := func(c Command) []int64 {
		c.Kind, c.Key = KindFQueryFiltered, b("r")
		var out []int64
		for _, p := range exec(t, e, c).Points {
			out = append(out, p.TS)
		}
		return out
	}
	require.Equal(t, []int64{1, 2, 4}, ts(Command{End: 10}))
	require.Equal(t, []int64{1, 4}, ts(Command{End: 10, Filters: []Filter{{Field: "action_type", Op: FilterEqual, Value: 10}}}))
	require.Equal(t, []int64{2, 4}, ts(Command{End: 10, Filters: []Filter{{Field: "duration", Op: FilterGreater, Value: 100}}}))
	require.Equal(t, []int64{4}, ts(Command{End: 10, Filters: []Filter{
		{Field: "author_id", Op: FilterNotEqual, Value: 7}, {Field: "gid", Op: FilterLessOrEqual, Value: 4},
	}}))
	// Count limits the scan: the first point does not match, so none.
	require.Empty(t, ts(Command{End: 10, Count: 1, HasCount: true, Filters: []Filter{{Field: "gid", Op: FilterGreaterOrEqual, Value: 2}}}))
	_, err := e.Execute(t.Context(), Command{Kind: KindFQueryFiltered, Key: b("r"), End: 10, Filters: []Filter{{Field: "nope"}}})
	require.ErrorIs(t, err, ErrInvalid)
	for _, tc := range []struct {
		s  string
		op FilterOp
	}{{"=", FilterEqual}, {"EQ", FilterEqual}, {"<>", FilterNotEqual}, {"gt", FilterGreater}, {"GTE", FilterGreaterOrEqual}, {"<", FilterLess}, {"le", FilterLessOrEqual}, {"less_or_equal", FilterLessOrEqual}} {
		op, ok := ParseFilterOp(tc.s)
		require.True(t, ok, tc.s)
		require.Equal(t, tc.op, op, tc.s)
	}
	_, ok := ParseFilterOp("~")
	require.False(t, ok)
}

// Random appends (every policy), replaces, deletes and reads agree with a
// naive model of the series, across a reopen.
func TestFeatureSeriesMatchesAModel(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	dir := t.TempDir()
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	const keep = 40
	require.NoError(t, e.CreateTable(ctx, "m", "t", TableOptions{FeatureMaxSize: keep, Shards: 2}))
	model := map[string]map[int64]string{}
	rng := rand.New(rand.NewPCG(1, 2))
	// Every other read goes into one reused buffer (Command.Into), as the
	// RESP server's do, and must read the same.
	var into PointBuffer
	trim := func(m map[int64]string) {
		tss := slices.Sorted(maps.Keys(m))
		for len(tss) > keep {
			delete(m, tss[0])
			tss = tss[1:]
		}
	}
	for step := range 3000 {
		key := fmt.Sprint("k", rng.IntN(4))
		m := model[key]
		if m == nil {
			m = map[int64]string{}
			model[key] = m
		}
		c := Command{Namespace: "m", Table: "t", Key: []byte(key)}
		var ps []Point
		for range rng.IntN(6) {
			ps = append(ps, Point{TS: int64(rng.IntN(100)), Value: []byte(fmt.Sprint(step, "-", rng.IntN(10)))})
		}
		switch op := rng.IntN(10); {
		case op < 5:
			c.Kind, c.Points, c.Policy = KindFAppend, ps, WritePolicy(rng.IntN(3))
			seen := map[int64]bool{}
			for _, p := range ps {
				_, has := m[p.TS]
				switch c.Policy {
				case PolicyInsertIfAbsent:
					if has || seen[p.TS] {
						continue
					}
					seen[p.TS] = true
				case PolicyReplaceExisting:
					if !has {
						continue
					}
				}
				m[p.TS] = string(p.Value)
			}
			trim(m)
		case op < 7:
			c.Kind, c.Points = KindFReplace, ps
			c.Start = int64(rng.IntN(100))
			c.End = c.Start + int64(rng.IntN(30))
			for ts := range m {
				if ts >= c.Start && ts <= c.End {
					delete(m, ts)
				}
			}
			for _, p := range ps {
				m[p.TS] = string(p.Value)
			}
			trim(m)
		case op < 8 && step%7 == 0:
			c.Kind = KindFDelete
			clear(m)
		default:
			c.Kind = KindFQuery
			c.Start, c.End = int64(rng.IntN(100)), int64(rng.IntN(100))
			if rng.IntN(2) == 0 {
				c.Count, c.HasCount = rng.IntN(10), true
			}
			if step%2 == 0 {
				c.Into = &into
			}
		}
		r := exec(t, e, c)
		if c.Kind != KindFQuery {
			continue
		}
		var want []string
		for _, ts := range slices.Sorted(maps.Keys(m)) {
			if ts >= c.Start && ts <= c.End && (!c.HasCount || len(want) < c.Count) {
				want = append(want, fmt.Sprintf("%d=%s", ts, m[ts]))
			}
		}
		require.Equal(t, append([]string{}, want...), render(r.Points), "step %d: %+v", step, c)
		if step == 1500 {
			require.NoError(t, e.Close())
			e = openEngine(t, dir, clk)
		}
	}
	require.NoError(t, e.Close())
}

// Sequences: rows live in the feature series as JSON; a sequence read
// sees only rows, a filtered feature read only protobuf values; count
// (required) limits the scan before filtering; a batch query answers one
// group per query, in order, across shards.
func TestSequences(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	defer e.Close()
	rows := []SeqRow{
		{TimestampMs: 1, GID: 1, ActionType: 10, Duration: 100, AuthorID: 7},
		{TimestampMs: 2, GID: 2, ActionType: 20, Duration: 200, AuthorID: 7},
		{TimestampMs: 3, GID: 3, ActionType: 10, Duration: 300, AuthorID: 8},
	}
	exec(t, e, Command{Kind: KindSeqAdd, Key: b("u1"), SeqRows: rows})
	exec(t, e, Command{Kind: KindSeqAdd, Key: b("u2"), SeqRows: rows[:1]})
	exec(t, e, Command{Kind: KindFAppend, Key: b("u1"), Points: []Point{{TS: 4, Value: EncodeRow(4, 10, 1, 1)}, {TS: 5, Value: b(`{"gid":1}`)}}})

	r := exec(t, e, Command{Kind: KindSeqQuery, Key: b("u1"), End: 10, Count: 10})
	require.Equal(t, rows, r.SeqRows)
	r = exec(t, e, Command{Kind: KindSeqQuery, Key: b("u1"), End: 10, Count: 10, Filters: []Filter{{Field: "action_type", Op: FilterEqual, Value: 10}}})
	require.Equal(t, []SeqRow{rows[0], rows[2]}, r.SeqRows)
	r = exec(t, e, Command{Kind: KindSeqQuery, Key: b("u1"), End: 10, Count: 1, Filters: []Filter{{Field: "gid", Op: FilterGreater, Value: 1}}})
	require.Equal(t, []SeqRow{}, r.SeqRows)
	// The protobuf point is the only one a filtered feature read decodes.
	fr := exec(t, e, Command{Kind: KindFQueryFiltered, Key: b("u1"), End: 10})
	require.Len(t, fr.Points, 1)
	require.Equal(t, int64(4), fr.Points[0].TS)

	_, err := e.Execute(t.Context(), Command{Kind: KindSeqQuery, Key: b("u1"), End: 10})
	require.ErrorIs(t, err, ErrInvalid, "count is required")
	_, err = e.Execute(t.Context(), Command{Kind: KindSeqAdd, Key: b("u1"), SeqRows: []SeqRow{{TimestampMs: -1}}})
	require.ErrorIs(t, err, ErrInvalid)

	br := exec(t, e, Command{Kind: KindSeqBatchQuery, SeqQueries: []SeqQuery{
		{Key: b("u2"), End: 10, Count: 5},
		{Key: b("u1"), Start: 2, End: 3, Count: 5},
		{Key: b("nobody"), End: 10, Count: 5},
	}})
	require.Equal(t, []SeqGroup{
		{Key: b("u2"), Rows: rows[:1]},
		{Key: b("u1"), Rows: rows[1:3]},
		{Key: b("nobody"), Rows: []SeqRow{}},
	}, br.SeqGroups)
	_, err = e.Execute(t.Context(), Command{Kind: KindSeqBatchQuery, SeqQueries: []SeqQuery{{Key: b("u1"), End: 1}}})
	require.ErrorIs(t, err, ErrInvalid)
}

// Aggregates over wide windows (which the rollup ladder answers) equal a
// naive scan, while the series keeps changing under overwrites, replaces
// and retention.
func TestFeatureAggregatesEqualAScan(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	const keep = 3000
	require.NoError(t, e.CreateTable(t.Context(), "r", "t", TableOptions{FeatureMaxSize: keep}))
	rng := rand.New(rand.NewPCG(4, 5))
	model := map[int64]string{}
	at := int64(0)
	for step := range 6000 {
		c := Command{Namespace: "r", Table: "t", Key: b("s")}
		switch r := rng.IntN(10); {
		case r < 7:
			at += int64(rng.IntN(90_000))
			v := fmt.Sprint(rng.IntN(1000) - 500)
			c.Kind, c.Points = KindFAppend, []Point{{TS: at, Value: b(v)}}
			model[at] = v
			tss := slices.Sorted(maps.Keys(model))
			for len(tss) > keep {
				delete(model, tss[0])
				tss = tss[1:]
			}
		case r < 8 && len(model) > 0:
			tss := slices.Sorted(maps.Keys(model))
			ts := tss[rng.IntN(len(tss))]
			c.Kind, c.Points = KindFAppend, []Point{{TS: ts, Value: b("x")}}
			model[ts] = "x"
		default:
			a := int64(rng.IntN(int(at + 1)))
			c.Kind, c.Start, c.End = KindFAgg, a, a+int64(rng.IntN(200_000_000))
			c.Aggregator = []string{"sum", "avg", "min", "max", "count"}[rng.IntN(5)]
			var sum, n, cnt, lo, hi int64
			for ts, v := range model {
				if ts < c.Start || ts > c.End {
					continue
				}
				cnt++
				x, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					continue
				}
				if n == 0 || x < lo {
					lo = x
				}
				if n == 0 || x > hi {
					hi = x
				}
				sum += x
				n++
			}
			want := map[string]int64{"sum": sum, "min": lo, "max": hi, "count": cnt, "avg": 0}
			if n > 0 {
				want["avg"] = sum / n
			}
			require.Equal(t, want[c.Aggregator], exec(t, e, c).Int, "step %d: %s %d..%d", step, c.Aggregator, c.Start, c.End)
			continue
		}
		exec(t, e, c)
	}
}

// The aggregators beyond the original's, several in one request over one
// read: floats, percentiles, distinct, top-k and decay.
func TestExtendedAggregates(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	now := clk.Now().UnixMilli()
	var ps []Point
	for i := 1; i <= 100; i++ {
		ps = append(ps, Point{TS: now - int64(100-i)*1000, Value: b(fmt.Sprint(i))})
	}
	ps = append(ps, Point{TS: now + 1, Value: b("2.5")}, Point{TS: now + 2, Value: b("x")}, Point{TS: now + 3, Value: b("7")})
	exec(t, e, Command{Kind: KindFAppend, Key: b("a"), Points: ps})
	r := exec(t, e, Command{Kind: KindFAgg, Key: b("a"), Start: 0, End: now + 10,
		Aggregators: []string{"sum", "sumf", "avgf", "minf", "maxf", "p50", "P99", "distinct", "top:2", "count", "decay:1000"}})
	require.Len(t, r.Aggregates, 11)
	got := map[string]Aggregate{}
	for _, a := range r.Aggregates {
		got[a.Name] = a
	}
	require.Equal(t, int64(5050+7), got["sum"].Int)
	require.InDelta(t, 5050+7+2.5, got["sumf"].Float, 1e-9)
	require.InDelta(t, (5050+7+2.5)/102, got["avgf"].Float, 1e-9)
	require.Equal(t, 1.0, got["minf"].Float)
	require.Equal(t, 100.0, got["maxf"].Float)
	require.InDelta(t, 50, got["p50"].Float, 2)
	require.InDelta(t, 99, got["P99"].Float, 2)
	require.Equal(t, int64(102), got["distinct"].Int) // 1..100, 2.5, x; 7 twice
	require.Equal(t, []TopValue{{Value: b("7"), Count: 2}, {Value: b("1"), Count: 1}}, got["top:2"].Top)
	require.Equal(t, int64(103), got["count"].Int)
	// decay: the newest points weigh most; 7 at now+3 and 2.5 at now+1
	// count about fully, 100 at now fully, 99 a second old half, ...
	require.InDelta(t, 7*math.Exp2(3.0/1000)+2.5*math.Exp2(1.0/1000)+100+99.0/2+98.0/4, got["decay:1000"].Float, 30)

	// One extended aggregator through Aggregator: Float, Int truncated.
	r = exec(t, e, Command{Kind: KindFAgg, Key: b("a"), Start: 0, End: now + 10, Aggregator: "maxf"})
	require.Equal(t, 100.0, r.Float)
	require.Equal(t, int64(100), r.Int)

	// An empty window, and unknown names.
	r = exec(t, e, Command{Kind: KindFAgg, Key: b("none"), End: 10, Aggregators: []string{"p90", "top:3", "distinct"}})
	require.Equal(t, []Aggregate{{Name: "p90", IsFloat: true}, {Name: "top:3", Top: []TopValue{}}, {Name: "distinct"}}, r.Aggregates)
	for _, bad := range []string{"p101", "top:0", "decay:-1", "decay:x", "median"} {
		_, err := e.Execute(t.Context(), Command{Kind: KindFAgg, Key: b("a"), End: 10, Aggregators: []string{"sum", bad}})
		require.ErrorIs(t, err, ErrInvalid, bad)
	}
}

// Age retention: a table's FeatureMaxAge hides older points from reads and
// drops them at the next write; a write's MaxAge applies to its key.
func TestFeatureAgeRetention(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	dir := t.TempDir()
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	require.NoError(t, e.CreateTable(ctx, "a", "t", TableOptions{FeatureMaxAge: time.Hour}))
	now := clk.Now().UnixMilli()
	q := func(c Command) Response { c.Namespace, c.Table = "a", "t"; return exec(t, e, c) }
	q(Command{Kind: KindFAppend, Key: b("s"), Points: pts(int(now-7_200_000), 1, int(now-1_800_000), 2)})
	require.Equal(t, []string{fmt.Sprintf("%d=2", now-1_800_000)}, render(q(Command{Kind: KindFQuery, Key: b("s"), End: now}).Points))
	require.Equal(t, int64(2), q(Command{Kind: KindFAgg, Key: b("s"), End: now, Aggregator: "sum"}).Int)
	clk.Advance(time.Hour)
	q(Command{Kind: KindFAppend, Key: b("s"), Points: pts(int(now+10), 3)})
	require.Equal(t, []string{fmt.Sprintf("%d=3", now+10)}, render(q(Command{Kind: KindFQuery, Key: b("s"), End: now + 100}).Points))

	// Per key, on the default table (no table age): this write's MaxAge.
	exec(t, e, Command{Kind: KindFAppend, Key: b("k"), Points: pts(int(now-600_000), 1, int(now), 2)})
	exec(t, e, Command{Kind: KindFAppend, Key: b("k"), Points: pts(int(now+3_600_000), 3), MaxAge: 30 * time.Minute})
	require.Equal(t, []string{fmt.Sprintf("%d=3", now+3_600_000)}, render(exec(t, e, Command{Kind: KindFQuery, Key: b("k"), End: now + 4_000_000}).Points))
	_, err := e.Execute(ctx, Command{Kind: KindFAppend, Key: b("k"), Points: pts(1, 1), MaxAge: -time.Second})
	require.ErrorIs(t, err, ErrInvalid)

	// The drop is in the log: a reopen replays it.
	require.NoError(t, e.Close())
	e = openEngine(t, dir, clk)
	defer e.Close()
	require.Equal(t, []string{fmt.Sprintf("%d=3", now+3_600_000)}, render(exec(t, e, Command{Kind: KindFQuery, Key: b("k"), End: now + 4_000_000}).Points))
}
