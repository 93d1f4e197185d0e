package resp

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// The monitor keeps one sample a second (the worst), at most 160, and the
// worst ever; calls under the threshold, or with the monitor off, leave
// nothing.
func TestLatencyMonitorSamples(t *testing.T) {
	m := newLatencyMonitor(0)
	now := time.Unix(1_764_460_800, 0)
	m.now = func() time.Time { return now }

	m.record(latencyEventCommand, time.Hour)
	require.Empty(t, m.latest(), "off by default")

	m.thresholdMs.Store(5)
	m.record(latencyEventCommand, 4*time.Millisecond)
	require.Empty(t, m.latest(), "under the threshold")

	m.record(latencyEventCommand, 7*time.Millisecond)
	m.record(latencyEventCommand, 9*time.Millisecond) // same second: the worst stays
	m.record(latencyEventCommand, 6*time.Millisecond)
	require.Equal(t, []latencySample{{at: now, ms: 9}}, m.history("COMMAND"))

	for i := range 200 {
		now = now.Add(time.Second)
		m.record(latencyEventCommand, time.Duration(5+i%3)*time.Millisecond)
	}
	h := m.history(latencyEventCommand)
	require.Len(t, h, latencyHistoryLen)
	require.Equal(t, now, h[len(h)-1].at)
	require.Equal(t, []latestEntry{{event: latencyEventCommand, at: now, ms: 5 + 199%3, max: 9}}, m.latest())

	require.Zero(t, m.reset([]string{"fast-command"}))
	require.Equal(t, 1, m.reset([]string{"Command"}))
	require.Empty(t, m.latest())
	require.Empty(t, m.history(latencyEventCommand))
}

// CONFIG SET changes the slow log's and the latency monitor's settings at
// run time, checks every pair before applying any, and is refused to
// read-only tokens; CONFIG GET shows the settings.
func TestConfigSet(t *testing.T) {
	_, addr := startServer(t, Options{Tokens: []string{"rw"}, ReadOnlyTokens: []string{"ro"}})
	ctx := t.Context()
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, Password: "rw"})
	defer c.Close()
	get := func(pattern string) map[string]string {
		t.Helper()
		v, err := c.ConfigGet(ctx, pattern).Result()
		require.NoError(t, err)
		return v
	}
	require.Equal(t, map[string]string{"slowlog-log-slower-than": "10000", "slowlog-max-len": "128"}, get("slowlog-*"))
	require.Equal(t, map[string]string{"latency-monitor-threshold": "0"}, get("latency-monitor-threshold"))

	require.NoError(t, c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err())
	require.NoError(t, c.Do(ctx, "config", "set", "slowlog-max-len", "3", "LATENCY-MONITOR-THRESHOLD", "25").Err())
	require.Equal(t, map[string]string{"slowlog-log-slower-than": "0", "slowlog-max-len": "3"}, get("slowlog-*"))
	require.Equal(t, "25", get("latency-monitor-threshold")["latency-monitor-threshold"])

	// Threshold 0 logs every call; the bound keeps the newest 3.
	for range 5 {
		require.NoError(t, c.Ping(ctx).Err())
	}
	n, err := c.Do(ctx, "slowlog", "len").Int64()
	require.NoError(t, err)
	require.Equal(t, int64(3), n)
	require.NoError(t, c.ConfigSet(ctx, "slowlog-max-len", "1").Err())
	n, err = c.Do(ctx, "slowlog", "len").Int64()
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "a lower bound drops the oldest at once")

	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"config", "set", "maxmemory", "1"}, "ERR Unknown option or number of arguments for CONFIG SET - 'maxmemory'"},
		{[]any{"config", "set", "slowlog-max-len", "x"}, "argument couldn't be parsed into an integer"},
		{[]any{"config", "set", "slowlog-max-len", "-1"}, "argument must be between 0 and"},
		{[]any{"config", "set", "slowlog-log-slower-than", "-2"}, "argument must be between -1 and"},
		{[]any{"config", "set", "latency-monitor-threshold", "-1"}, "argument must be between 0 and"},
		{[]any{"config", "set", "slowlog-max-len", "9", "slowlog-max-len", "10"}, "duplicate parameter"},
		{[]any{"config", "set", "slowlog-max-len", "9", "nope", "1"}, "Unknown option"},
		{[]any{"config", "set", "slowlog-max-len"}, "ERR wrong number of arguments for 'config|set' command"},
	} {
		err := c.Do(ctx, tc.args...).Err()
		require.ErrorContains(t, err, tc.want, "%v", tc.args)
	}
	// Nothing the errors touched changed (the pair before "nope" included).
	require.Equal(t, map[string]string{"slowlog-log-slower-than": "0", "slowlog-max-len": "1"}, get("slowlog-*"))
	require.Equal(t, "25", get("latency-monitor-threshold")["latency-monitor-threshold"])

	ro := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, Password: "ro"})
	defer ro.Close()
	require.ErrorContains(t, ro.ConfigSet(ctx, "slowlog-max-len", "5").Err(), "NOPERM")
	require.ErrorContains(t, ro.Do(ctx, "latency", "reset").Err(), "NOPERM")
	require.Equal(t, "1", get("slowlog-max-len")["slowlog-max-len"])
}

// A call at or past latency-monitor-threshold shows in LATENCY LATEST and
// HISTORY as the "command" event; LATENCY RESET forgets it.
func TestLatencyMonitorRecordsSlowCalls(t *testing.T) {
	_, addr := startServer(t, Options{})
	ctx := t.Context()
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
	defer c.Close()
	// 6 MiB of random bytes (a record holds at most 8): the log writes
	// (and tries to compress) them on the call's path, well past a
	// millisecond.
	big := make([]byte, 6<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(r.Uint32())
	}

	require.NoError(t, c.Set(ctx, "big", big, 0).Err())
	latest, err := c.Do(ctx, "latency", "latest").Slice()
	require.NoError(t, err)
	require.Empty(t, latest, "the monitor is off by default")

	require.NoError(t, c.ConfigSet(ctx, "latency-monitor-threshold", "1").Err())
	before := time.Now().Unix()
	require.NoError(t, c.Set(ctx, "big", big, 0).Err())
	v, err := c.Get(ctx, "big").Bytes()
	require.NoError(t, err)
	require.True(t, bytes.Equal(big, v))

	latest, err = c.Do(ctx, "latency", "latest").Slice()
	require.NoError(t, err)
	require.Len(t, latest, 1)
	e := latest[0].([]any)
	require.Equal(t, "command", e[0])
	require.GreaterOrEqual(t, e[1].(int64), before)
	require.GreaterOrEqual(t, e[2].(int64), int64(1))
	require.GreaterOrEqual(t, e[3].(int64), e[2].(int64))

	hist, err := c.Do(ctx, "latency", "history", "command").Slice()
	require.NoError(t, err)
	require.NotEmpty(t, hist)
	require.Len(t, hist[0].([]any), 2)
	none, err := c.Do(ctx, "latency", "history", "aof-fsync-always").Slice()
	require.NoError(t, err)
	require.Empty(t, none)

	n, err := c.Do(ctx, "latency", "reset").Int64()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	latest, err = c.Do(ctx, "latency", "latest").Slice()
	require.NoError(t, err)
	require.Empty(t, latest)
	require.ErrorContains(t, c.Do(ctx, "latency", "doctor").Err(), "not implemented")
}
