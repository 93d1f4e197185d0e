package resp

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// With a threshold every call passes, the slow log keeps each call's
// arguments, cut as Redis cuts them, with the client's address and name,
// newest first, up to its bound; pipelined runs log each command; AUTH's
// token is not kept.
func TestSlowlogKeepsSlowCalls(t *testing.T) {
	_, addr := startServer(t, Options{SlowlogThreshold: time.Nanosecond, SlowlogMaxLen: 200, Tokens: []string{"sekret"}})
	ctx := t.Context()
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, Password: "sekret"})
	defer c.Close()
	require.NoError(t, c.Do(ctx, "client", "setname", "worker-1").Err())
	require.NoError(t, c.SlowLogReset(ctx).Err())

	require.NoError(t, c.Set(ctx, "a", "1", 0).Err())
	long := strings.Repeat("v", 200)
	require.NoError(t, c.Set(ctx, "b", long, 0).Err())
	many := make([]any, 40)
	for i := range many {
		many[i] = "x"
	}
	require.NoError(t, c.RPush(ctx, "list", many...).Err())
	p := c.Pipeline()
	p.Set(ctx, "p1", "1", 0)
	p.Set(ctx, "p2", "2", 0)
	p.Get(ctx, "p1")
	_, err := p.Exec(ctx)
	require.NoError(t, err)

	entries, err := c.SlowLogGet(ctx, -1).Result()
	require.NoError(t, err)
	// The client may open a connection for the pipeline: its handshake
	// (HELLO, CLIENT SETINFO) is in the log too, and left out here.
	var calls []redis.SlowLog
	for _, e := range entries {
		if name := strings.ToLower(e.Args[0]); name != "hello" && name != "client" {
			calls = append(calls, e)
		}
		if strings.EqualFold(e.Args[0], "hello") {
			for _, a := range e.Args[1:] {
				require.Equal(t, "(redacted)", a, "HELLO may carry a token")
			}
		}
	}
	// Newest first: GET p1, SET p2, SET p1, RPUSH, SET b, SET a, SLOWLOG RESET.
	require.Len(t, calls, 7)
	want := [][]string{{"get", "p1"}, {"set", "p2", "2"}, {"set", "p1", "1"}}
	for i, w := range want {
		require.Equal(t, w, calls[i].Args, "entry %d", i)
	}
	rpush := calls[3].Args
	require.Len(t, rpush, 32)
	require.Equal(t, "rpush", strings.ToLower(rpush[0]))
	require.Equal(t, "... (11 more arguments)", rpush[31], "42 arguments: 31 kept and a count of the rest")
	require.Equal(t, []string{"set", "b", strings.Repeat("v", 128) + "... (72 more bytes)"}, lower0(calls[4].Args))
	require.Equal(t, []string{"set", "a", "1"}, lower0(calls[5].Args))
	for i, e := range calls[3:6] {
		require.Equal(t, "worker-1", e.ClientName, "entry %d", i+3)
	}
	for i, e := range calls[:6] {
		require.NotEmpty(t, e.ClientAddr)
		require.Greater(t, e.ID, calls[i+1].ID, "ids grow with time")
		require.WithinDuration(t, time.Now(), e.Time, time.Minute)
	}
	two, err := c.SlowLogGet(ctx, 2).Result()
	require.NoError(t, err)
	require.Len(t, two, 2)

	// AUTH's token is not kept.
	require.NoError(t, c.Do(ctx, "auth", "sekret").Err())
	last, err := c.SlowLogGet(ctx, 1).Result()
	require.NoError(t, err)
	require.Equal(t, []string{"auth", "(redacted)"}, lower0(last[0].Args))

	n, err := c.Do(ctx, "slowlog", "len").Int64()
	require.NoError(t, err)
	require.Positive(t, n)
	require.NoError(t, c.SlowLogReset(ctx).Err())
	n, err = c.Do(ctx, "slowlog", "len").Int64()
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "only the RESET itself, logged after it ran")

	require.ErrorContains(t, c.Do(ctx, "slowlog", "get", "x").Err(), "count should be greater than or equal to -1")
	require.ErrorContains(t, c.Do(ctx, "slowlog", "nope").Err(), "Try SLOWLOG HELP")
	help, err := c.Do(ctx, "slowlog", "help").StringSlice()
	require.NoError(t, err)
	require.Contains(t, help[0], "SLOWLOG <subcommand>")
}

func lower0(args []string) []string {
	out := append([]string(nil), args...)
	out[0] = strings.ToLower(out[0])
	return out
}

// The log keeps the newest calls up to its bound; past a threshold no
// fast call goes in; a negative threshold turns it off; CONFIG GET shows
// both settings as Redis names them; a read-only client may read the log
// but not reset it.
func TestSlowlogBoundsAndSettings(t *testing.T) {
	ctx := t.Context()
	t.Run("bound", func(t *testing.T) {
		_, addr := startServer(t, Options{SlowlogThreshold: time.Nanosecond, SlowlogMaxLen: 3})
		c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
		defer c.Close()
		for _, k := range []string{"k1", "k2", "k3", "k4", "k5"} {
			require.NoError(t, c.Set(ctx, k, "v", 0).Err())
		}
		entries, err := c.SlowLogGet(ctx, -1).Result()
		require.NoError(t, err)
		require.Len(t, entries, 3)
		require.Equal(t, []string{"set", "k5", "v"}, lower0(entries[0].Args))
		require.Equal(t, []string{"set", "k3", "v"}, lower0(entries[2].Args))
		cfg, err := c.ConfigGet(ctx, "slowlog-*").Result()
		require.NoError(t, err)
		require.Equal(t, map[string]string{"slowlog-log-slower-than": "0", "slowlog-max-len": "3"}, cfg)
	})
	t.Run("threshold", func(t *testing.T) {
		_, addr := startServer(t, Options{SlowlogThreshold: time.Hour, ReadOnlyTokens: []string{"ro"}, Tokens: []string{"rw"}})
		c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, Password: "rw"})
		defer c.Close()
		require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
		n, err := c.Do(ctx, "slowlog", "len").Int64()
		require.NoError(t, err)
		require.Zero(t, n)
		ro := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, Password: "ro"})
		defer ro.Close()
		require.NoError(t, ro.SlowLogGet(ctx, 10).Err())
		require.ErrorContains(t, ro.SlowLogReset(ctx).Err(), "NOPERM")
	})
	t.Run("off", func(t *testing.T) {
		_, addr := startServer(t, Options{SlowlogThreshold: -1})
		c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
		defer c.Close()
		require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
		n, err := c.Do(ctx, "slowlog", "len").Int64()
		require.NoError(t, err)
		require.Zero(t, n)
		cfg, err := c.ConfigGet(ctx, "slowlog-log-slower-than").Result()
		require.NoError(t, err)
		require.Equal(t, "-1", cfg["slowlog-log-slower-than"])
	})
}
