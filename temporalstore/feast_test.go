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

// In TSNanos and TSProto, rows compare at nanosecond precision: a write
// 1 µs newer applies where TSMillis calls it stale; TSProto keeps Feast's
// serialized Timestamp, whose bytes are the spec's vectors.
func TestRowWriteFormats(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	defer e.Close()
	t0 := time.Unix(1646263500, 123456000)
	for _, tc := range []struct {
		format  TSFormat
		stored  string
		microOK bool
	}{
		{TSMillis, "1646263500123", false},
		{TSNanos, "1646263500123456000", true},
		{TSProto, "\x08\xcc\xf9\xff\x90\x06\x10\x80\x94\xef\x3a", true},
	} {
		key := b("row:" + string(tc.format))
		w := func(at time.Time) bool {
			return exec(t, e, Command{Kind: KindRowWrite, Key: key, Args: bs("f", "v"), EventTime: at, TSField: "_ts:fv", TSFormat: tc.format}).Applied
		}
		require.True(t, w(t0), tc.format)
		require.Equal(t, tc.stored, string(exec(t, e, Command{Kind: KindHGet, Key: key, Args: bs("_ts:fv")}).Value), tc.format)
		require.False(t, w(t0), "%s: equal is stale", tc.format)
		require.Equal(t, tc.microOK, w(t0.Add(time.Microsecond)), "%s: 1 µs newer", tc.format)
		// The batch form judges the same way.
		r := exec(t, e, Command{Kind: KindRowWriteBatch, TSField: "_ts:fv", TSFormat: tc.format, Rows: []Row{
			{Key: key, Args: bs("f", "a"), EventTime: t0.Add(time.Second)},
			{Key: key, Args: bs("f", "b"), EventTime: t0.Add(time.Second + time.Microsecond)},
		}})
		require.Equal(t, []int64{1, boolInt(tc.microOK)}, r.Ints, tc.format)
	}
	// A whole second and the epoch: the zero fields are left out.
	exec(t, e, Command{Kind: KindRowWrite, Key: b("p"), Args: bs("f", "v"), EventTime: time.Unix(1646263500, 0), TSFormat: TSProto})
	require.Equal(t, "\x08\xcc\xf9\xff\x90\x06", string(exec(t, e, Command{Kind: KindHGet, Key: b("p"), Args: bs(DefaultTSField)}).Value))
	exec(t, e, Command{Kind: KindRowWrite, Key: b("z"), Args: bs("f", "v"), EventTime: time.Unix(0, 0), TSFormat: TSProto})
	r := exec(t, e, Command{Kind: KindHGet, Key: b("z"), Args: bs(DefaultTSField)})
	require.True(t, r.Found)
	require.Empty(t, r.Value)
	require.False(t, exec(t, e, Command{Kind: KindRowWrite, Key: b("z"), Args: bs("f", "w"), EventTime: time.Unix(0, 0), TSFormat: TSProto}).Applied,
		"an empty Timestamp is the epoch, which an equal time does not beat")

	// A format that does not match what is stored, or none known, is an
	// error that changes nothing.
	for _, c := range []Command{
		{Kind: KindRowWrite, Key: b("row:"), Args: bs("f", "x"), EventTime: t0.Add(time.Hour), TSField: "_ts:fv", TSFormat: TSProto},
		{Kind: KindRowWrite, Key: b("row:proto"), Args: bs("f", "x"), EventTime: t0.Add(time.Hour), TSField: "_ts:fv", TSFormat: TSMillis},
		{Kind: KindRowWrite, Key: b("row:"), Args: bs("f", "x"), EventTime: t0.Add(time.Hour), TSFormat: "seconds"},
		{Kind: KindRowWriteBatch, TSFormat: "seconds", Rows: []Row{{Key: b("q"), Args: bs("f", "x"), EventTime: t0}}},
	} {
		_, err := e.Execute(t.Context(), c)
		require.ErrorIs(t, err, ErrInvalid, "%+v", c)
	}
	require.Equal(t, "a", string(exec(t, e, Command{Kind: KindHGet, Key: b("row:"), Args: bs("f")}).Value))
	require.Equal(t, []byte("none"), exec(t, e, Command{Kind: KindType, Key: b("q")}).Value)
}

func boolInt(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

// A scan with a suffix returns only the keys ending with it, bytes and
// all, across shards and pages.
func TestScanSuffix(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	defer e.Close()
	want := map[string]bool{}
	for i := range 300 {
		for _, project := range []string{"a", "ba", "a*"} {
			k := fmt.Sprintf("\x01\x00%d%s", i, project)
			exec(t, e, Command{Kind: KindSet, Key: b(k), Value: b("v")})
			if project == "a" || project == "ba" {
				want[k] = true
			}
		}
	}
	got := map[string]bool{}
	var cursor uint64
	for {
		r := exec(t, e, Command{Kind: KindScan, Cursor: cursor, Count: 50, Suffix: b("a")})
		require.LessOrEqual(t, len(r.Keys), 50)
		for _, k := range r.Keys {
			got[string(k)] = true
		}
		if cursor = r.Cursor; cursor == 0 {
			break
		}
	}
	require.Equal(t, want, got)
}

// decodeStamp never panics, and what it reads back encodes to a stamp
// that reads back the same.
func FuzzDecodeStamp(f *testing.F) {
	for _, s := range []string{"", "\x08\xcc\xf9\xff\x90\x06\x10\x80\x94\xef\x3a", "\x08\xff", "\x18\x01", "1646263500123", "-5"} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, v []byte, proto bool) {
		format := TSNanos
		if proto {
			format = TSProto
		}
		s, ok := decodeStamp(v, format)
		if !ok {
			return
		}
		again, ok := decodeStamp(s.encode(format), format)
		require.True(t, ok)
		require.Equal(t, s, again)
	})
}

// A batch read answers as an HMGET of each row would, row after row,
// across shards, whatever the order of the keys.
func TestRowReadBatch(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	defer e.Close()
	var keys [][]byte
	for i := range 40 {
		k := b(fmt.Sprintf("row:%d", i))
		keys = append(keys, k)
		exec(t, e, Command{Kind: KindHSet, Key: k, Args: bs("a", fmt.Sprint(i), "empty", "")})
	}
	keys = append(keys, b("missing"))
	fields := bs("empty", "nofield", "a")
	r := exec(t, e, Command{Kind: KindRowReadBatch, Keys: keys, Args: fields})
	require.Len(t, r.Values, len(keys)*len(fields))
	for i, k := range keys {
		want := exec(t, e, Command{Kind: KindHMGet, Key: k, Args: fields}).Values
		require.Equal(t, want, r.Values[i*3:i*3+3], "row %s", k)
	}
	require.NotNil(t, r.Values[0], "a present empty value is not nil")
	require.Nil(t, r.Values[1])

	for _, tc := range []struct {
		name string
		c    Command
		err  error
	}{
		{"no fields", Command{Kind: KindRowReadBatch, Keys: keys}, ErrInvalid},
		{"no keys", Command{Kind: KindRowReadBatch, Args: fields}, ErrInvalid},
		{"a string among the rows", Command{Kind: KindRowReadBatch, Keys: bs("row:1", "str"), Args: fields}, ErrWrongType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exec(t, e, Command{Kind: KindSet, Key: b("str"), Value: b("x")})
			_, err := e.Execute(t.Context(), tc.c)
			require.ErrorIs(t, err, tc.err)
		})
	}
}
