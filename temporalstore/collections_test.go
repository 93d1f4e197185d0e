package temporalstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

func exec(t *testing.T, e *Engine, c Command) Response {
	t.Helper()
	r, err := e.Execute(t.Context(), c)
	require.NoError(t, err, "%s %s", c.Kind, c.Key)
	return r
}

// Collections expire on the engine's clock, keep their TTL across writes
// (as Redis does), and everything survives a reopen.
func TestCollectionsTTLAndReopen(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, dir, clk)
	exec(t, e, Command{Kind: KindHSet, Key: b("h"), Args: bs("f", "v")})
	require.Equal(t, int64(1), exec(t, e, Command{Kind: KindExpire, Key: b("h"), TTL: 10 * time.Second}).Int)
	exec(t, e, Command{Kind: KindHSet, Key: b("h"), Args: bs("g", "w")})
	require.Equal(t, int64(10_000), exec(t, e, Command{Kind: KindPTTL, Key: b("h")}).Int)
	at := exec(t, e, Command{Kind: KindExpireTime, Key: b("h")}).Int
	require.Equal(t, clk.Now().Add(10*time.Second).UnixMilli(), at)
	exec(t, e, Command{Kind: KindRPush, Key: b("l"), Args: bs("1", "2", "3")})
	exec(t, e, Command{Kind: KindZAdd, Key: b("z"), Args: bs("a", "b"), Scores: []float64{1, 2}})
	exec(t, e, Command{Kind: KindSAdd, Key: b("s"), Args: bs("x")})
	require.NoError(t, e.Close())

	e = openEngine(t, dir, clk)
	defer e.Close()
	require.Equal(t, int64(10_000), exec(t, e, Command{Kind: KindPTTL, Key: b("h")}).Int)
	all := exec(t, e, Command{Kind: KindHGetAll, Key: b("h")}).Values
	require.ElementsMatch(t, bs("f", "v", "g", "w"), all)
	require.Equal(t, bs("1", "2", "3"), exec(t, e, Command{Kind: KindLRange, Key: b("l"), Start: 0, End: -1}).Values)

	clk.Advance(11 * time.Second)
	require.Equal(t, []byte("none"), exec(t, e, Command{Kind: KindType, Key: b("h")}).Value)
	require.Equal(t, int64(-2), exec(t, e, Command{Kind: KindPTTL, Key: b("h")}).Int)
	// A write to an expired collection starts a new one, without a TTL.
	require.Equal(t, int64(1), exec(t, e, Command{Kind: KindHSet, Key: b("h"), Args: bs("n", "1")}).Int)
	require.Equal(t, int64(-1), exec(t, e, Command{Kind: KindPTTL, Key: b("h")}).Int)
	require.Equal(t, int64(1), exec(t, e, Command{Kind: KindHLen, Key: b("h")}).Int)

	// PERSIST and GETEX.
	exec(t, e, Command{Kind: KindExpire, Key: b("z"), TTL: time.Second})
	require.Equal(t, int64(1), exec(t, e, Command{Kind: KindPersist, Key: b("z")}).Int)
	clk.Advance(2 * time.Second)
	require.Equal(t, int64(2), exec(t, e, Command{Kind: KindZCard, Key: b("z")}).Int)
	exec(t, e, Command{Kind: KindSet, Key: b("str"), Value: b("v")})
	r := exec(t, e, Command{Kind: KindGetEx, Key: b("str"), TTL: 5 * time.Second})
	require.Equal(t, "v", string(r.Value))
	require.Equal(t, int64(5000), exec(t, e, Command{Kind: KindPTTL, Key: b("str")}).Int)
	exec(t, e, Command{Kind: KindGetEx, Key: b("str"), Persist: true})
	require.Equal(t, int64(-1), exec(t, e, Command{Kind: KindPTTL, Key: b("str")}).Int)
	_, err := e.Execute(t.Context(), Command{Kind: KindGetEx, Key: b("s")})
	require.ErrorIs(t, err, ErrWrongType)
}

func TestSPopAndSRandMember(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	defer e.Close()
	var members []string
	for i := range 50 {
		members = append(members, fmt.Sprint(i))
	}
	exec(t, e, Command{Kind: KindSAdd, Key: b("s"), Args: bs(members...)})
	r := exec(t, e, Command{Kind: KindSRandMember, Key: b("s"), HasCount: true, Count: 10})
	require.Len(t, r.Values, 10)
	seen := map[string]bool{}
	for _, v := range r.Values {
		require.Contains(t, members, string(v))
		require.False(t, seen[string(v)], "distinct")
		seen[string(v)] = true
	}
	require.Len(t, exec(t, e, Command{Kind: KindSRandMember, Key: b("s"), HasCount: true, Count: -80}).Values, 80)
	popped := exec(t, e, Command{Kind: KindSPop, Key: b("s"), HasCount: true, Count: 20}).Values
	require.Len(t, popped, 20)
	require.Equal(t, int64(30), exec(t, e, Command{Kind: KindSCard, Key: b("s")}).Int)
	for _, p := range popped {
		require.Zero(t, exec(t, e, Command{Kind: KindSIsMember, Key: b("s"), Args: [][]byte{p}}).Int)
	}
	one := exec(t, e, Command{Kind: KindSPop, Key: b("s")})
	require.True(t, one.Found)
	require.Equal(t, int64(29), exec(t, e, Command{Kind: KindSCard, Key: b("s")}).Int)
	exec(t, e, Command{Kind: KindSPop, Key: b("s"), HasCount: true, Count: 100})
	require.Equal(t, []byte("none"), exec(t, e, Command{Kind: KindType, Key: b("s")}).Value)
}

// The collection scans return every member present for the whole scan,
// even while members are added and removed between pages.
func TestCollectionScansCoverEveryMember(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	defer e.Close()
	var fields []string
	for i := range 300 {
		fields = append(fields, fmt.Sprintf("f%d", i), "v")
	}
	exec(t, e, Command{Kind: KindHSet, Key: b("h"), Args: bs(fields...)})
	got := map[string]int{}
	var cur uint64
	for page := 0; ; page++ {
		r := exec(t, e, Command{Kind: KindHScan, Key: b("h"), Cursor: cur, Count: 7})
		for i := 0; i < len(r.Values); i += 2 {
			got[string(r.Values[i])]++
		}
		// Churn: fields that come and go during the scan.
		exec(t, e, Command{Kind: KindHSet, Key: b("h"), Args: bs(fmt.Sprintf("tmp%d", page), "x")})
		exec(t, e, Command{Kind: KindHDel, Key: b("h"), Args: bs(fmt.Sprintf("tmp%d", page-1))})
		if cur = r.Cursor; cur == 0 {
			break
		}
	}
	for i := range 300 {
		require.Equal(t, 1, got[fmt.Sprintf("f%d", i)], "f%d", i)
	}
}

func TestCrossShardAndHashTags(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	defer e.Close()
	// Find two keys on different shards of the default 4-shard table.
	a, other := "a", ""
	for i := range 100 {
		if k := fmt.Sprint("b", i); ShardOf(b(k), DefaultShards) != ShardOf(b(a), DefaultShards) {
			other = k
			break
		}
	}
	exec(t, e, Command{Kind: KindSet, Key: b(a), Value: b("1")})
	_, err := e.Execute(t.Context(), Command{Kind: KindRename, Key: b(a), Dest: b(other)})
	require.ErrorIs(t, err, ErrCrossShard)
	// Keys with one hash tag share a shard, so they can be renamed.
	require.Equal(t, ShardOf(b("{user1}.a"), 4), ShardOf(b("{user1}.b"), 4))
	require.Equal(t, b("user1"), HashTag(b("x{user1}y")))
	require.Equal(t, b("x{}y"), HashTag(b("x{}y")))
	exec(t, e, Command{Kind: KindRPush, Key: b("{q}src"), Args: bs("1", "2")})
	require.Equal(t, "1", string(exec(t, e, Command{Kind: KindLMove, Key: b("{q}src"), Dest: b("{q}dst"), FromLeft: true}).Value))
	exec(t, e, Command{Kind: KindRename, Key: b("{q}dst"), Dest: b("{q}moved")})
	require.Equal(t, bs("1"), exec(t, e, Command{Kind: KindLRange, Key: b("{q}moved"), Start: 0, End: -1}).Values)
	_, err = e.Execute(t.Context(), Command{Kind: KindRename, Key: b("{n}ope"), Dest: b("{n}ope2")})
	require.ErrorIs(t, err, ErrNoSuchKey)
	// MGET and DEL fan out over shards.
	ks := bs("m1", "m2", "m3", "m4", "m5", "m6")
	exec(t, e, Command{Kind: KindMSet, Keys: ks, Args: bs("1", "2", "3", "4", "5", "6")})
	require.Equal(t, bs("1", "2", "3", "4", "5", "6"), exec(t, e, Command{Kind: KindMGet, Keys: ks}).Values)
	require.Equal(t, int64(6), exec(t, e, Command{Kind: KindDeleteKeys, Keys: append(ks, b("m1"))}).Int)
	require.Equal(t, make([][]byte, 6), exec(t, e, Command{Kind: KindMGet, Keys: ks}).Values)
}

// Bad input to a collection kind gets an error and changes nothing.
func TestCollectionBadInput(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	defer e.Close()
	for _, c := range []Command{
		{Kind: KindHSet, Key: b("h"), Args: bs("odd")},
		{Kind: KindZAdd, Key: b("z"), Args: bs("a"), Scores: nil},
		{Kind: KindZAdd, Key: b("z"), Args: bs("a"), Scores: []float64{1}, ZAdd: ZAddFlags{NX: true, XX: true}},
		{Kind: KindZAdd, Key: b("z"), Args: bs("a", "b"), Scores: []float64{1, 2}, ZAdd: ZAddFlags{Incr: true}},
		{Kind: KindZRange, Key: b("z"), Range: ZRange{HasLimit: true}},
		{Kind: KindSPop, Key: b("s"), HasCount: true, Count: -1},
		{Kind: KindMSet, Keys: bs("a", "b"), Args: bs("1")},
		{Kind: KindLSet, Key: b("l"), Value: b("v")},
		{Kind: KindHScan, Key: b("h"), Count: -1},
	} {
		_, err := e.Execute(t.Context(), c)
		require.Error(t, err, "%s", c.Kind)
	}
	for _, k := range []string{"h", "z", "s", "l", "a", "b"} {
		require.Equal(t, []byte("none"), exec(t, e, Command{Kind: KindType, Key: b(k)}).Value)
	}
}
