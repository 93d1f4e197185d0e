package resp

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The control state verbs over go-redis: counters and windows, distinct
// changes, families with idempotent set-and-get, selections, quotas, and
// bad arguments refused without effect.
func TestControlVerbs(t *testing.T) {
	addr, _ := start(t, Options{})
	c := client(t, addr, 2)
	ctx := t.Context()
	must := func(args ...any) any {
		t.Helper()
		v, err := c.Do(ctx, args...).Result()
		require.NoError(t, err, "%v", args)
		return v
	}
	fail := func(prefix string, args ...any) {
		t.Helper()
		_, err := c.Do(ctx, args...).Result()
		require.Error(t, err, "%v", args)
		require.Contains(t, err.Error(), prefix, "%v", args)
	}
	require.Equal(t, "OK", must("CONTROLSTATEINCR", "k", 1500, 2))
	require.Equal(t, "OK", must("CONTROLSTATEINCROPT", "k", 1700, 3, 1000, 60000))
	require.Equal(t, int64(5), must("CONTROLSTATECOUNT", "k", 0, 2000))
	require.Equal(t, int64(3), must("CONTROLSTATEQUERY", "k", 0, 2000, "max"))
	require.Equal(t, []any{[]any{int64(1000), "3"}, []any{int64(1500), "2"}}, must("CONTROLSTATEDETAIL", "k", 0, 2000))
	require.Equal(t, []any{[]any{int64(1000), "3"}}, must("CONTROLSTATEDETAIL", "k", 0, 2000, 1))
	pttl := must("PTTL", "k").(int64)
	require.Greater(t, pttl, int64(59000))

	require.Equal(t, "OK", must("CONTROLSTATECHANGE", "k", 1500, "a"))
	require.Equal(t, "OK", must("CONTROLSTATECHANGE", "k", 1600, "b", 1000, 0))
	require.Equal(t, int64(2), must("CONTROLSTATEQUERY", "k", 0, 2000, "change"))
	require.Equal(t, "OK", must("HCHANGE", "k", 1500, "z"))
	require.Equal(t, int64(1), must("HQUERY", "k", 0, 2000, "change"))

	require.Equal(t, "OK", must("CONTROLSTATEHSET", "u", 10, 4))
	require.Equal(t, int64(5), must("HSETANDGET", "u", 10, 1, 0, 100, "sum"))
	require.Equal(t, int64(8), must("COUNTERSETANDGETOPT", "u", 20, 3, 0, 100, "sum", 0, 0, "req-1"))
	require.Equal(t, int64(8), must("COUNTERSETANDGETOPT", "u", 20, 3, 0, 100, "sum", 0, 0, "req-1"))
	require.Equal(t, int64(2), must("COUNTERQUERY", "u", 0, 100, "events"))
	require.Equal(t, int64(0), must("CPCQUERY", "u", 0, 100, "sum"))

	require.Equal(t, "OK", must("FOLSET", "s", "late", 20, 0, "FIRST"))
	require.Equal(t, "OK", must("SELECTIONSET", "s", "early", 10, 0, "first"))
	require.Equal(t, "early", must("FOLQUERY", "s"))
	_, err := c.Do(ctx, "SELECTIONQUERY", "none").Result()
	require.Error(t, err) // nil reply

	require.Equal(t, []any{int64(1), int64(2), int64(0)}, must("QUOTATAKE", "q", 3, 60000, 2))
	require.Equal(t, []any{int64(1), int64(3), int64(0)}, must("QUOTATAKE", "q", 3, 60000))
	r := must("QUOTATAKE", "q", 3, 60000).([]any)
	require.Equal(t, int64(0), r[0])
	require.Equal(t, int64(3), r[1])
	require.Positive(t, r[2])

	require.Equal(t, int64(1), must("PACE", "pc", 1, 60000).([]any)[0])
	paced := must("PACE", "pc", 1, 60000).([]any)
	require.Equal(t, int64(0), paced[0])
	require.Positive(t, paced[1])
	fail("ERR pacing needs", "PACE", "pc", 0, 1000)
	require.Equal(t, []any{"h_events", "2", "h_sum", "8", "cpc_events", "0", "cpc_sum", "0"}, must("CONTROLSTATEMANAGER", "u"))
	require.Equal(t, []any{"h_events", "0", "h_sum", "0", "cpc_events", "0", "cpc_sum", "0", "fol_value", "early", "fol_occur_time_ms", "10", "fol_type", "first"},
		must("CONTROLSTATEMANAGER", "s"))
	require.Equal(t, []any{"key_list", "10,20"}, must("CONTROLSTATEMANAGER", "u", 5, 0))
	require.Equal(t, []any{"size", "1"}, must("CONTROLSTATEMANAGER", "u", 6, 0, 15, 25))
	require.Equal(t, []any{"20", "3", "99", "0"}, must("CONTROLSTATEMANAGER", "u", 2, 0, 20, 99))
	require.Equal(t, []any{"1000", "3", "1500", "2", "change:1000", "1", "change:1500", "1"}, must("CONTROLSTATEDEBUG", "k", 0, 2000))
	fail("ERR field", "CONTROLSTATEMANAGER", "u", 2, 0, "x")
	fail("ERR timestamp_ms must be an unsigned integer", "CONTROLSTATEINCR", "k", "x", 1)
	fail("ERR amount must be an integer", "CONTROLSTATEINCR", "k", 1, "x")
	fail("ERR unknown aggregator", "CONTROLSTATEQUERY", "k", 0, 10, "median")
	fail("ERR selection type must be FIRST or LAST", "FOLSET", "s", "v", 1, 0, "MIDDLE")
	fail("ERR wrong number of arguments", "HQUERY", "k", 0, 10)
	fail("ERR wrong number of arguments", "CONTROLSTATECHANGE", "k", 1, "v", 1000)
	must("SET", "str", "v")
	fail("WRONGTYPE", "CONTROLSTATEINCR", "str", 1, 1)
	require.Equal(t, int64(5), must("CONTROLSTATECOUNT", "k", 0, 2000))
	require.Equal(t, "early", must("FOLQUERY", "s"))
}
