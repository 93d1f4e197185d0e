package temporalstore

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// The string and key kinds against Redis's documented examples and edge
// cases, one step after another on one engine.
func TestStringKindsFollowRedis(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	ctx := t.Context()
	k := func(s string) []byte { return []byte(s) }
	steps := []struct {
		name string
		c    Command
		want Response
		err  error
	}{
		{"SET", Command{Kind: KindSet, Key: k("a"), Value: k("1")}, Response{Applied: true}, nil},
		{"SET NX on existing", Command{Kind: KindSet, Key: k("a"), Value: k("2"), Cond: IfAbsent}, Response{}, nil},
		{"GET after NX", Command{Kind: KindGet, Key: k("a")}, Response{Value: k("1"), Found: true}, nil},
		{"SET XX on missing", Command{Kind: KindSet, Key: k("b"), Value: k("x"), Cond: IfPresent}, Response{}, nil},
		{"EXISTS missing", Command{Kind: KindExists, Key: k("b")}, Response{}, nil},
		{"SET GET", Command{Kind: KindSet, Key: k("a"), Value: k("3"), ReturnOld: true}, Response{Value: k("1"), Found: true, Applied: true}, nil},
		{"SET NX GET on existing", Command{Kind: KindSet, Key: k("a"), Value: k("4"), Cond: IfAbsent, ReturnOld: true}, Response{Value: k("3"), Found: true}, nil},
		{"SET EX", Command{Kind: KindSet, Key: k("t"), Value: k("v"), TTL: 10 * time.Second}, Response{Applied: true}, nil},
		{"PTTL", Command{Kind: KindPTTL, Key: k("t")}, Response{Int: 10_000}, nil},
		{"SET KEEPTTL", Command{Kind: KindSet, Key: k("t"), Value: k("w"), KeepTTL: true}, Response{Applied: true}, nil},
		{"PTTL kept", Command{Kind: KindPTTL, Key: k("t")}, Response{Int: 10_000}, nil},
		{"PERSIST", Command{Kind: KindPersist, Key: k("t")}, Response{Int: 1}, nil},
		{"PTTL none", Command{Kind: KindPTTL, Key: k("t")}, Response{Int: -1}, nil},
		{"PERSIST again", Command{Kind: KindPersist, Key: k("t")}, Response{}, nil},
		{"PTTL missing", Command{Kind: KindPTTL, Key: k("nope")}, Response{Int: -2}, nil},
		{"EXPIRE", Command{Kind: KindExpire, Key: k("t"), TTL: 5 * time.Second}, Response{Int: 1}, nil},
		{"PTTL after EXPIRE", Command{Kind: KindPTTL, Key: k("t")}, Response{Int: 5_000}, nil},
		{"SET clears TTL", Command{Kind: KindSet, Key: k("t"), Value: k("z")}, Response{Applied: true}, nil},
		{"PTTL cleared", Command{Kind: KindPTTL, Key: k("t")}, Response{Int: -1}, nil},
		{"EXPIRE missing", Command{Kind: KindExpire, Key: k("nope"), TTL: time.Second}, Response{}, nil},
		{"EXPIRE non-positive deletes", Command{Kind: KindExpire, Key: k("t"), TTL: -time.Second}, Response{Int: 1}, nil},
		{"EXISTS deleted", Command{Kind: KindExists, Key: k("t")}, Response{}, nil},
		{"GETRANGE set up", Command{Kind: KindSet, Key: k("s"), Value: k("This is a string")}, Response{Applied: true}, nil},
		{"GETRANGE 0 3", Command{Kind: KindGetRange, Key: k("s"), Start: 0, End: 3}, Response{Value: k("This")}, nil},
		{"GETRANGE -3 -1", Command{Kind: KindGetRange, Key: k("s"), Start: -3, End: -1}, Response{Value: k("ing")}, nil},
		{"GETRANGE 0 -1", Command{Kind: KindGetRange, Key: k("s"), Start: 0, End: -1}, Response{Value: k("This is a string")}, nil},
		{"GETRANGE 10 100", Command{Kind: KindGetRange, Key: k("s"), Start: 10, End: 100}, Response{Value: k("string")}, nil},
		{"GETRANGE reversed", Command{Kind: KindGetRange, Key: k("s"), Start: 5, End: 2}, Response{Value: k("")}, nil},
		{"STRLEN", Command{Kind: KindStrLen, Key: k("s")}, Response{Int: 16}, nil},
		{"STRLEN missing", Command{Kind: KindStrLen, Key: k("nope")}, Response{}, nil},
		{"SETRANGE", Command{Kind: KindSet, Key: k("h"), Value: k("Hello World")}, Response{Applied: true}, nil},
		{"SETRANGE 6", Command{Kind: KindSetRange, Key: k("h"), Start: 6, Value: k("Redis")}, Response{Int: 11}, nil},
		{"GET SETRANGE", Command{Kind: KindGet, Key: k("h")}, Response{Value: k("Hello Redis"), Found: true}, nil},
		{"SETRANGE pads", Command{Kind: KindSetRange, Key: k("p"), Start: 6, Value: k("Redis")}, Response{Int: 11}, nil},
		{"GET padded", Command{Kind: KindGet, Key: k("p")}, Response{Value: k("\x00\x00\x00\x00\x00\x00Redis"), Found: true}, nil},
		{"SETRANGE negative", Command{Kind: KindSetRange, Key: k("p"), Start: -1, Value: k("x")}, Response{}, ErrInvalid},
		{"INCRBYFLOAT", Command{Kind: KindSet, Key: k("f"), Value: k("10.50")}, Response{Applied: true}, nil},
		{"INCRBYFLOAT 0.1", Command{Kind: KindIncrByFloat, Key: k("f"), Float: 0.1}, Response{Value: k("10.6"), Found: true}, nil},
		{"INCRBYFLOAT exp", Command{Kind: KindSet, Key: k("g"), Value: k("5.0e3")}, Response{Applied: true}, nil},
		{"INCRBYFLOAT 2e2", Command{Kind: KindIncrByFloat, Key: k("g"), Float: 2.0e2}, Response{Value: k("5200"), Found: true}, nil},
		{"INCRBYFLOAT on text", Command{Kind: KindIncrByFloat, Key: k("s"), Float: 1}, Response{}, ErrNotFloat},
		{"GETDEL", Command{Kind: KindGetDel, Key: k("h")}, Response{Value: k("Hello Redis"), Found: true}, nil},
		{"GETDEL gone", Command{Kind: KindGetDel, Key: k("h")}, Response{}, nil},
		{"DEL existing", Command{Kind: KindDelete, Key: k("a")}, Response{Int: 1}, nil},
		{"DEL missing", Command{Kind: KindDelete, Key: k("a")}, Response{}, nil},
		{"KEEPTTL with TTL", Command{Kind: KindSet, Key: k("x"), Value: k("v"), KeepTTL: true, TTL: time.Second}, Response{}, ErrInvalid},
	}
	for _, st := range steps {
		got, err := e.Execute(ctx, st.c)
		if st.err != nil {
			require.ErrorIs(t, err, st.err, st.name)
			continue
		}
		require.NoError(t, err, st.name)
		require.Equal(t, string(st.want.Value), string(got.Value), st.name)
		require.Equal(t, st.want.Found, got.Found, st.name)
		require.Equal(t, st.want.Int, got.Int, st.name)
		require.Equal(t, st.want.Applied, got.Applied, st.name)
	}
}

// A value over the log's record limit is refused and changes nothing.
func TestOversizedValueIsRefused(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	ctx := t.Context()
	_, err := e.Execute(ctx, Command{Kind: KindSet, Key: []byte("big"), Value: make([]byte, 17<<20)})
	require.ErrorIs(t, err, ErrTooLarge)
	_, ok := get(t, e, Command{Key: []byte("big")})
	require.False(t, ok)
	// The shard still takes writes: a refused record is not a failed log.
	_, err = e.Execute(ctx, Command{Kind: KindIncrBy, Key: []byte("n"), Delta: 1})
	require.NoError(t, err)
}

// SCAN over a table of several shards returns every key present
// throughout, with keys written and deleted between calls, and ends; TYPE
// says string or none.
func TestScanAndType(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	ctx := t.Context()
	for i := range 300 {
		_, err := e.Execute(ctx, Command{Kind: KindSet, Key: fmt.Appendf(nil, "stable-%d", i), Value: []byte("v")})
		require.NoError(t, err)
	}
	_, err := e.Execute(ctx, Command{Kind: KindSet, Key: []byte("short"), Value: []byte("v"), TTL: time.Second})
	require.NoError(t, err)
	clk.Advance(2 * time.Second)
	seen := map[string]bool{}
	cursor, calls := uint64(0), 0
	for {
		r, err := e.Execute(ctx, Command{Kind: KindScan, Cursor: cursor, Count: 7})
		require.NoError(t, err)
		for _, k := range r.Keys {
			seen[string(k)] = true
		}
		_, err = e.Execute(ctx, Command{Kind: KindSet, Key: fmt.Appendf(nil, "churn-%d", calls), Value: []byte("v")})
		require.NoError(t, err)
		calls++
		require.Less(t, calls, 10_000)
		if cursor = r.Cursor; cursor == 0 {
			break
		}
	}
	for i := range 300 {
		require.True(t, seen[fmt.Sprintf("stable-%d", i)], "stable-%d", i)
	}
	require.False(t, seen["short"], "an expired key is not returned")

	r, err := e.Execute(ctx, Command{Kind: KindType, Key: []byte("stable-1")})
	require.NoError(t, err)
	require.Equal(t, "string", string(r.Value))
	r, err = e.Execute(ctx, Command{Kind: KindType, Key: []byte("nope")})
	require.NoError(t, err)
	require.Equal(t, "none", string(r.Value))
	// A cursor past the last shard ends the scan, as Redis ends one from
	// any cursor.
	r, err = e.Execute(ctx, Command{Kind: KindScan, Cursor: ^uint64(0)})
	require.NoError(t, err)
	require.Zero(t, r.Cursor)
	require.Empty(t, r.Keys)
}

func TestParseIntIsRedisStrict(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"12", 12, true}, {"-7", -7, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"-9223372036854775808", -9223372036854775808, true},
		{"9223372036854775808", 0, false}, {"+1", 0, false}, {"01", 0, false},
		{"-0", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"", 0, false},
		{"-", 0, false}, {"1e3", 0, false}, {"0x10", 0, false},
	} {
		n, err := ParseInt([]byte(tc.in))
		if !tc.ok {
			require.ErrorIs(t, err, ErrNotInteger, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, n)
	}
}

// SETRANGE's offset may be anything a client sends: offsets whose sum with
// the value's length passes 512 MiB, or overflows int64, are refused with
// nothing changed, and an empty value at any offset changes nothing, as in
// Redis.
func TestSetRangeOffsetEdges(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	ctx := t.Context()
	_, err := e.Execute(ctx, Command{Kind: KindSet, Key: []byte("k"), Value: []byte("abc")})
	require.NoError(t, err)
	cases := []struct {
		name   string
		start  int64
		value  string
		err    error
		length int64
	}{
		{"max int64 offset", math.MaxInt64, "A", ErrTooLarge, 0},
		{"offset plus length overflows", math.MaxInt64 - 1, "AB", ErrTooLarge, 0},
		{"past 512 MiB", 5368709120, "x", ErrTooLarge, 0},
		{"exactly at the limit", 512<<20 - 1, "xy", ErrTooLarge, 0},
		{"negative", -1, "x", ErrInvalid, 0},
		{"min int64", math.MinInt64, "x", ErrInvalid, 0},
		{"empty value at max offset", math.MaxInt64, "", nil, 3},
		{"in range", 1, "Z", nil, 3},
	}
	for _, tc := range cases {
		r, err := e.Execute(ctx, Command{Kind: KindSetRange, Key: []byte("k"), Start: tc.start, Value: []byte(tc.value)})
		if tc.err != nil {
			require.ErrorIs(t, err, tc.err, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.length, r.Int, tc.name)
	}
	v, ok := get(t, e, Command{Key: []byte("k")})
	require.True(t, ok)
	require.Equal(t, "aZc", v)
	// Nothing was created by the refused or empty writes to a missing key.
	for _, start := range []int64{math.MaxInt64, 5368709120} {
		_, err := e.Execute(ctx, Command{Kind: KindSetRange, Key: []byte("missing"), Start: start, Value: []byte("v")})
		require.ErrorIs(t, err, ErrTooLarge)
	}
	_, ok = get(t, e, Command{Key: []byte("missing")})
	require.False(t, ok)
}
