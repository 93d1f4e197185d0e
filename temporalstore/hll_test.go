package temporalstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/hll"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

func hllElems(prefix string, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, "%s%d", prefix, i)
	}
	return out
}

// The HyperLogLog kinds store Redis's string format, keep the key's TTL,
// check types and key groups, and survive a restart: the log replays the
// same bytes.
func TestHyperLogLogKinds(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	dir := t.TempDir()
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	exec := func(c Command) (Response, error) { return e.Execute(ctx, c) }
	must := func(c Command) Response {
		t.Helper()
		r, err := exec(c)
		require.NoError(t, err)
		return r
	}

	// The reference value, built by the package alone.
	want, changed, err := hll.PFAdd(nil, false, hllElems("a", 100))
	require.NoError(t, err)
	require.True(t, changed)

	require.EqualValues(t, 1, must(Command{Kind: KindPFAdd, Key: []byte("{h}a"), Args: hllElems("a", 100)}).Int)
	require.EqualValues(t, 0, must(Command{Kind: KindPFAdd, Key: []byte("{h}a"), Args: hllElems("a", 100)}).Int)
	require.EqualValues(t, 0, must(Command{Kind: KindPFAdd, Key: []byte("{h}a")}).Int)
	got, _ := get(t, e, Command{Key: []byte("{h}a")})
	require.Equal(t, string(want), got)
	require.Equal(t, "string", string(must(Command{Kind: KindType, Key: []byte("{h}a")}).Value))

	// PFCOUNT caches the cardinality in the value, once: only the first
	// logs a record; an unchanging PFADD or a union logs none.
	records := func() (n uint64) {
		st, err := e.Stats()
		require.NoError(t, err)
		for _, s := range st {
			n += s.LogRecords
		}
		return n
	}
	card, cached, err := hll.PFCount(want, true)
	require.NoError(t, err)
	before := records()
	require.EqualValues(t, card, must(Command{Kind: KindPFCount, Keys: [][]byte{[]byte("{h}a")}}).Int)
	require.Equal(t, before+1, records())
	got, _ = get(t, e, Command{Key: []byte("{h}a")})
	require.Equal(t, string(cached), got)
	require.EqualValues(t, card, must(Command{Kind: KindPFCount, Keys: [][]byte{[]byte("{h}a")}}).Int)
	must(Command{Kind: KindPFAdd, Key: []byte("{h}a"), Args: hllElems("a", 10)})
	must(Command{Kind: KindPFCount, Keys: [][]byte{[]byte("{h}a"), []byte("{h}none")}})
	require.Equal(t, before+1, records())
	require.EqualValues(t, 0, must(Command{Kind: KindPFCount, Keys: [][]byte{[]byte("{h}missing")}}).Int)

	// A TTL survives PFADD and PFMERGE.
	must(Command{Kind: KindExpire, Key: []byte("{h}a"), TTL: time.Hour})
	must(Command{Kind: KindPFAdd, Key: []byte("{h}a"), Args: hllElems("more", 5000)})
	must(Command{Kind: KindPFAdd, Key: []byte("{h}b"), Args: hllElems("b", 50)})
	require.True(t, must(Command{Kind: KindPFMerge, Dest: []byte("{h}a"), Keys: [][]byte{[]byte("{h}b"), []byte("{h}none")}}).Applied)
	require.EqualValues(t, time.Hour.Milliseconds(), must(Command{Kind: KindPTTL, Key: []byte("{h}a")}).Int)
	must(Command{Kind: KindPFMerge, Dest: []byte("{h}m"), Keys: [][]byte{[]byte("{h}a"), []byte("{h}b")}})
	union := must(Command{Kind: KindPFCount, Keys: [][]byte{[]byte("{h}a"), []byte("{h}b")}}).Int
	require.InDelta(t, 5150, union, 5150*0.03)
	require.Equal(t, union, must(Command{Kind: KindPFCount, Keys: [][]byte{[]byte("{h}m")}}).Int)

	// Errors change nothing.
	other := []byte("elsewhere-0")
	for i := 1; ShardOf(other, DefaultShards) == ShardOf([]byte("{h}a"), DefaultShards); i++ {
		other = fmt.Appendf(nil, "elsewhere-%d", i)
	}
	must(Command{Kind: KindSet, Key: []byte("{h}s"), Value: []byte("hello")})
	must(Command{Kind: KindHSet, Key: []byte("{h}hash"), Args: [][]byte{[]byte("f"), []byte("v")}})
	must(Command{Kind: KindSet, Key: []byte("{h}bad"), Value: append([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"), 0x7f, 0xfe)})
	for _, tc := range []struct {
		c    Command
		want error
	}{
		{Command{Kind: KindPFAdd, Key: []byte("{h}s"), Args: hllElems("x", 1)}, ErrNotHLL},
		{Command{Kind: KindPFAdd, Key: []byte("{h}hash"), Args: hllElems("x", 1)}, ErrWrongType},
		{Command{Kind: KindPFCount, Keys: [][]byte{[]byte("{h}bad")}}, ErrCorruptHLL},
		{Command{Kind: KindPFCount, Keys: [][]byte{[]byte("{h}a"), []byte("{h}bad"), []byte("{h}hash")}}, ErrCorruptHLL},
		{Command{Kind: KindPFCount, Keys: [][]byte{[]byte("{h}a"), []byte("{h}hash"), []byte("{h}bad")}}, ErrWrongType},
		{Command{Kind: KindPFMerge, Dest: []byte("{h}a"), Keys: [][]byte{[]byte("{h}s")}}, ErrNotHLL},
		{Command{Kind: KindPFMerge, Dest: []byte("{h}new"), Keys: [][]byte{[]byte("{h}bad")}}, ErrCorruptHLL},
		{Command{Kind: KindPFCount, Keys: [][]byte{[]byte("{h}a"), other}}, ErrCrossShard},
		{Command{Kind: KindPFMerge, Dest: []byte("{h}a"), Keys: [][]byte{other}}, ErrCrossShard},
		{Command{Kind: KindPFCount}, ErrInvalid},
		{Command{Kind: KindPFMerge}, ErrInvalid},
	} {
		before, _ := get(t, e, Command{Key: []byte("{h}a")})
		_, err := exec(tc.c)
		require.ErrorIs(t, err, tc.want, "%s %q %q", tc.c.Kind, tc.c.Key, tc.c.Keys)
		after, _ := get(t, e, Command{Key: []byte("{h}a")})
		require.Equal(t, before, after)
	}
	_, found := get(t, e, Command{Key: []byte("{h}new")})
	require.False(t, found)

	// A restart replays the same bytes.
	values := map[string]string{}
	for _, k := range []string{"{h}a", "{h}b", "{h}m"} {
		values[k], _ = get(t, e, Command{Key: []byte(k)})
	}
	require.NoError(t, e.Close())
	e = openEngine(t, dir, clk)
	defer e.Close()
	for k, v := range values {
		got, found := get(t, e, Command{Key: []byte(k)})
		require.True(t, found, k)
		require.Equal(t, v, got, k)
	}
	require.Equal(t, union, must(Command{Kind: KindPFCount, Keys: [][]byte{[]byte("{h}m")}}).Int)
}
