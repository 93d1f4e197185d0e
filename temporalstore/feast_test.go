package temporalstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

func staleRejects(t *testing.T, e *Engine) uint64 {
	t.Helper()
	st, err := e.Stats()
	require.NoError(t, err)
	var n uint64
	for _, s := range st {
		n += s.StaleRejects
	}
	return n
}

func TestRowWriteAppliesOnlyNewer(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	t0 := time.UnixMilli(1_700_000_000_000)
	w := func(at time.Time, v string) Response {
		return exec(t, e, Command{Kind: KindRowWrite, Key: b("driver:1"), Args: bs("conv_rate", v), EventTime: at, TTL: time.Hour})
	}
	require.True(t, w(t0, "0.5").Applied)
	clk.Advance(30 * time.Minute)
	require.False(t, w(t0, "0.6").Applied, "an equal event time is stale")
	require.False(t, w(t0.Add(-time.Second), "0.7").Applied)
	require.Equal(t, uint64(2), staleRejects(t, e))
	// A stale write neither changed the value nor renewed the TTL.
	require.Equal(t, "0.5", string(exec(t, e, Command{Kind: KindHGet, Key: b("driver:1"), Args: bs("conv_rate")}).Value))
	require.Equal(t, int64(30*60*1000), exec(t, e, Command{Kind: KindPTTL, Key: b("driver:1")}).Int)
	// A newer one does both.
	require.True(t, w(t0.Add(time.Second), "0.8").Applied)
	require.Equal(t, "0.8", string(exec(t, e, Command{Kind: KindHGet, Key: b("driver:1"), Args: bs("conv_rate")}).Value))
	require.Equal(t, int64(60*60*1000), exec(t, e, Command{Kind: KindPTTL, Key: b("driver:1")}).Int)
	require.Equal(t, fmt.Sprint(t0.Add(time.Second).UnixMilli()),
		string(exec(t, e, Command{Kind: KindHGet, Key: b("driver:1"), Args: bs(DefaultTSField)}).Value))

	// Bad rows are refused and change nothing.
	for _, c := range []Command{
		{Kind: KindRowWrite, Key: b("driver:2"), Args: bs("f", "v")},
		{Kind: KindRowWrite, Key: b("driver:2"), Args: bs("f"), EventTime: t0},
		{Kind: KindRowWriteBatch, Rows: []Row{{Key: b("driver:2"), Args: bs("f", "v"), EventTime: t0}, {Key: b("driver:3")}}},
	} {
		_, err := e.Execute(t.Context(), c)
		require.ErrorIs(t, err, ErrInvalid)
	}
	require.Equal(t, []byte("none"), exec(t, e, Command{Kind: KindType, Key: b("driver:2")}).Value)
	exec(t, e, Command{Kind: KindSet, Key: b("str"), Value: b("v")})
	_, err := e.Execute(t.Context(), Command{Kind: KindRowWrite, Key: b("str"), Args: bs("f", "v"), EventTime: t0})
	require.ErrorIs(t, err, ErrWrongType)
}

func TestRowWriteBatch(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, dir, clk)
	t0 := time.UnixMilli(1_700_000_000_000)
	var rows []Row
	for i := range 100 {
		rows = append(rows, Row{Key: fmt.Appendf(nil, "e%d", i), Args: bs("f", fmt.Sprint(i)), EventTime: t0})
	}
	// Within a batch, a later row of the same entity is judged against the
	// earlier one: newer applies, older is stale.
	rows = append(rows,
		Row{Key: b("e0"), Args: bs("f", "newer"), EventTime: t0.Add(time.Second)},
		Row{Key: b("e1"), Args: bs("f", "older"), EventTime: t0.Add(-time.Second)})
	r := exec(t, e, Command{Kind: KindRowWriteBatch, Rows: rows})
	require.Equal(t, int64(101), r.Int)
	require.Equal(t, int64(1), r.Ints[100])
	require.Zero(t, r.Ints[101])
	require.Equal(t, uint64(1), staleRejects(t, e))
	// Writing the same batch again: all stale.
	r = exec(t, e, Command{Kind: KindRowWriteBatch, Rows: rows[:100]})
	require.Zero(t, r.Int)
	require.Equal(t, uint64(101), staleRejects(t, e))
	require.NoError(t, e.Close())
	e = openEngine(t, dir, clk)
	defer e.Close()
	require.Equal(t, "newer", string(exec(t, e, Command{Kind: KindHGet, Key: b("e0"), Args: bs("f")}).Value))
	require.Equal(t, "1", string(exec(t, e, Command{Kind: KindHGet, Key: b("e1"), Args: bs("f")}).Value))
	require.Equal(t, "99", string(exec(t, e, Command{Kind: KindHGet, Key: b("e99"), Args: bs("f")}).Value))
}
