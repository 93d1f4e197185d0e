package resp

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// The feature series verbs over go-redis: replies, and the errors of bad
// arguments, which change nothing.
func TestFeatureVerbs(t *testing.T) {
	addr, _ := start(t, Options{})
	c := client(t, addr, 2)
	ctx := t.Context()
	do := func(args ...any) (any, error) { return c.Do(ctx, args...).Result() }
	must := func(args ...any) any {
		t.Helper()
		v, err := do(args...)
		require.NoError(t, err, "%v", args)
		return v
	}
	fail := func(prefix string, args ...any) {
		t.Helper()
		_, err := do(args...)
		require.Error(t, err, "%v", args)
		require.Contains(t, err.Error(), prefix, "%v", args)
	}
	require.Equal(t, "OK", must("FAPPEND", "f", 20, "2"))
	require.Equal(t, "OK", must("FAPPEND", "f", 10, "1"))
	require.Equal(t, "OK", must("FAPPEND", "old", 1, "1"))
	require.Equal(t, "OK", must("FAPPEND", "old", time.Now().UnixMilli(), "2", "MAXAGE", 60000))
	require.Len(t, must("FQUERY", "old", 0, time.Now().UnixMilli()+1000), 1)
	fail("ERR syntax error", "FAPPEND", "old", 1, "1", "MAXAGE")
	require.Equal(t, int64(0), must("FAPPENDPOLICY", "f", 10, "x", "FIRST"))
	require.Equal(t, int64(1), must("FAPPENDPOLICY", "f", 30, "3", "nx"))
	require.Equal(t, int64(1), must("FAPPENDPOLICY", "f", 10, "5", "XX"))
	require.Equal(t, int64(0), must("FAPPENDPOLICY", "f", 40, "5", "update"))
	require.Equal(t, []any{
		[]any{int64(10), "5"}, []any{int64(20), "2"}, []any{int64(30), "3"},
	}, must("FQUERY", "f", 0, 100))
	require.Equal(t, []any{[]any{int64(20), "2"}}, must("FQUERY", "f", 15, 100, 1))
	require.Equal(t, []any{}, must("FQUERY", "f", 50, 10))
	require.Equal(t, int64(10), must("FAGG", "f", 0, 100, "sum"))
	require.Equal(t, int64(3), must("FAGG", "f", 0, 100, "count"))
	require.Equal(t, int64(5), must("FAGG", "f", 0, 100, "max", 1))
	require.Equal(t, "5", must("FAGG", "f", 0, 100, "maxf"))
	require.Equal(t, []any{int64(10), "3.3333333333333335", []any{[]any{"2", int64(1)}}, int64(3)},
		must("FAGGS", "f", 0, 100, "sum", "avgf", "top:1", "distinct"))
	fail("ERR unknown aggregator", "FAGGS", "f", 0, 100, "sum", "p200")
	require.Equal(t, "OK", must("FREPLACE", "f", 0, 15, 99, "9"))
	require.Equal(t, []any{[]any{int64(20), "2"}, []any{int64(30), "3"}, []any{int64(99), "9"}}, must("FQUERY", "f", 0, 100))
	require.Equal(t, "series", must("TYPE", "f"))

	row := func(gid, action, duration, author uint64) string {
		return string(temporalstore.EncodeRow(gid, action, duration, author))
	}
	must("FAPPEND", "r", 1, row(1, 10, 100, 7))
	must("FAPPEND", "r", 2, row(2, 20, 200, 7))
	must("FAPPEND", "r", 3, row(3, 10, 300, 8))
	ts := func(v any) []int64 {
		var out []int64
		for _, p := range v.([]any) {
			out = append(out, p.([]any)[0].(int64))
		}
		return out
	}
	require.Equal(t, []int64{1, 3}, ts(must("FQUERYFILTER", "r", 0, 10, 10, "action_type", "EQ", 10)))
	require.Equal(t, []int64{2, 3}, ts(must("FQUERYFILTER", "r", 0, 10, 10, "duration", ">", 100)))
	require.Equal(t, []int64{3}, ts(must("FQUERYFILTERSTR", "r", 0, 10, 10, "gid >= 2", "action_type = 10")))
	// A later filter of a field replaces the earlier one.
	require.Equal(t, []int64{1}, ts(must("FQUERYFILTERSTR", "r", 0, 10, 10, "gid >= 2", "gid = 1")))
	// Count limits the points scanned, before the filter.
	require.Nil(t, ts(must("FQUERYFILTER", "r", 0, 10, 1, "gid", "gt", 1)))

	require.Equal(t, "OK", must("FDEL", "r"))
	require.Equal(t, "none", must("TYPE", "r"))

	fail("ERR timestamp_ms must be an unsigned integer", "FAPPEND", "f", -1, "x")
	fail("ERR timestamp_ms must be an unsigned integer", "FAPPEND", "f", "abc", "x")
	fail("ERR unknown write policy", "FAPPENDPOLICY", "f", 1, "x", "sometimes")
	fail("ERR Invalid write policy", "FAPPENDPOLICY", "f", 1, "x", "BLOCK")
	fail("ERR unknown aggregator", "FAGG", "f", 0, 10, "median")
	fail("ERR unknown filter operator", "FQUERYFILTER", "f", 0, 10, 10, "gid", "~", 1)
	fail("ERR unknown filter field", "FQUERYFILTER", "f", 0, 10, 10, "colour", "=", 1)
	fail("ERR wrong number of arguments", "FAPPEND", "f", 1)
	fail("ERR syntax error", "FQUERY", "f", 0, 10, 1, 2)
	must("SET", "s", "v")
	fail("WRONGTYPE", "FAPPEND", "s", 1, "x")
	fail("WRONGTYPE", "GET", "f")
	// Nothing the errors touched changed.
	require.Equal(t, []any{[]any{int64(20), "2"}, []any{int64(30), "3"}, []any{int64(99), "9"}}, must("FQUERY", "f", 0, 100))
	require.Equal(t, "v", c.Get(ctx, "s").Val())
	_, err := c.Get(ctx, "f").Result()
	require.NotErrorIs(t, err, redis.Nil)
}

// A Go service reads the time-aware verbs through go-redis's typed
// commands, built for a verb go-redis has no method for and run with
// Process: FQUERY's points as key-value pairs (timestamp, value), a
// counter's total as an integer. Both protocols decode the same.
func TestFeatureVerbsTypedGoRedis(t *testing.T) {
	addr, _ := start(t, Options{})
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ctx := t.Context()
			c := client(t, addr, proto)
			key := fmt.Sprint("typed:", proto)
			for ts, v := range map[int]string{10: "1", 20: "2", 30: "3"} {
				st := redis.NewStatusCmd(ctx, "FAPPEND", key, ts, v)
				require.NoError(t, c.Process(ctx, st))
				require.Equal(t, "OK", st.Val())
			}
			points := redis.NewKeyValueSliceCmd(ctx, "FQUERY", key, 15, 100)
			require.NoError(t, c.Process(ctx, points))
			require.Equal(t, []redis.KeyValue{{Key: "20", Value: "2"}, {Key: "30", Value: "3"}}, points.Val())

			none := redis.NewKeyValueSliceCmd(ctx, "FQUERY", key, 40, 100)
			require.NoError(t, c.Process(ctx, none))
			require.Empty(t, none.Val())

			now := time.Now().UnixMilli()
			for want := int64(1); want <= 3; want++ {
				n := redis.NewIntCmd(ctx, "HSETANDGETOPT", "typed:e:"+key, now, 1, now-3_599_999, now, "sum", 60_000, 3_600_000, "")
				require.NoError(t, c.Process(ctx, n))
				require.Equal(t, want, n.Val())
			}

			bad := redis.NewKeyValueSliceCmd(ctx, "FQUERY", key, "x", 100)
			require.ErrorContains(t, c.Process(ctx, bad), "ERR")
		})
	}
}
