package resp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

func TestBucketOf(t *testing.T) {
	bounds := LatencyBounds()
	require.Len(t, bounds, latencyBuckets-1)
	for _, tc := range []struct {
		d    time.Duration
		want int
	}{
		{0, 0},
		{time.Microsecond, 0},
		{time.Microsecond + 1, 1},
		{2 * time.Microsecond, 1},
		{2*time.Microsecond + 1, 2},
		{4 * time.Microsecond, 2},
		{100 * time.Microsecond, 7}, // (64, 128]
		{bounds[len(bounds)-1], latencyBuckets - 2},
		{bounds[len(bounds)-1] + 1, latencyBuckets - 1},
		{time.Hour, latencyBuckets - 1},
	} {
		got := bucketOf(tc.d)
		require.Equal(t, tc.want, got, "%v", tc.d)
		if got < len(bounds) {
			require.LessOrEqual(t, tc.d, bounds[got], "%v is within its bucket's bound", tc.d)
		}
		if got > 0 {
			require.Greater(t, tc.d, bounds[got-1], "%v is above the bucket below", tc.d)
		}
	}
}

func TestPercentile(t *testing.T) {
	var st CommandStat
	require.Zero(t, st.Percentile(99), "no calls")
	st.Buckets[0] = 98 // <= 1 µs
	st.Buckets[3] = 1  // <= 8 µs
	st.Buckets[10] = 1 // <= 1024 µs
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{
		{50, time.Microsecond},
		{98, time.Microsecond},
		{99, 8 * time.Microsecond},
		{99.9, 1024 * time.Microsecond},
		{100, 1024 * time.Microsecond},
	} {
		require.Equal(t, tc.want, st.Percentile(tc.p), "p%v", tc.p)
	}
	st = CommandStat{}
	st.Buckets[latencyBuckets-1] = 1
	require.Equal(t, time.Microsecond<<(latencyBuckets-1), st.Percentile(50), "above the last bound: twice it")
}

func bucketTotal(st CommandStat) uint64 {
	var n uint64
	for _, c := range st.Buckets {
		n += c
	}
	return n
}

// Every call is counted once under its command, pipelined runs of SETs
// and GETs included; an error reply counts as failed, a refusal before
// running as rejected (not a call); commands queued by MULTI count when
// EXEC runs them; unknown commands are not listed.
func TestCommandStatsCountCalls(t *testing.T) {
	s, addr := startServer(t, Options{})
	ctx := t.Context()
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
	defer c.Close()
	// The client's handshake may draw errors (subcommands it tries).
	require.NoError(t, c.Ping(ctx).Err())
	base := s.Stats().ErrorReplies
	require.NoError(t, c.Set(ctx, "a", "1", 0).Err())
	require.Equal(t, "1", c.Get(ctx, "a").Val())
	require.ErrorContains(t, c.LPush(ctx, "a", "x").Err(), "WRONGTYPE")
	require.ErrorContains(t, c.Do(ctx, "get").Err(), "wrong number of arguments")
	require.ErrorContains(t, c.Do(ctx, "nosuchcommand").Err(), "unknown command")
	p := c.Pipeline()
	for i := range 40 {
		p.Set(ctx, "k"+strings.Repeat("x", i), "v", 0)
	}
	for i := range 40 {
		p.Get(ctx, "k"+strings.Repeat("x", i))
	}
	_, err := p.Exec(ctx)
	require.NoError(t, err)
	tx := c.TxPipeline()
	tx.Incr(ctx, "n")
	tx.Incr(ctx, "n")
	_, err = tx.Exec(ctx)
	require.NoError(t, err)

	set, get, lpush, incr := s.CommandStat("set"), s.CommandStat("get"), s.CommandStat("lpush"), s.CommandStat("incr")
	require.Equal(t, uint64(41), set.Calls)
	require.Equal(t, uint64(41), get.Calls)
	require.Equal(t, uint64(1), get.Rejected, "GET without a key")
	require.Zero(t, get.Failed)
	require.Equal(t, uint64(1), lpush.Calls)
	require.Equal(t, uint64(1), lpush.Failed, "WRONGTYPE")
	require.Equal(t, uint64(2), incr.Calls, "run by EXEC")
	require.Equal(t, uint64(1), s.CommandStat("exec").Calls)
	require.Equal(t, uint64(1), s.CommandStat("multi").Calls)
	for _, st := range []CommandStat{set, get, lpush, incr} {
		require.Equal(t, st.Calls, bucketTotal(st), "%s: every call in a bucket", st.Name)
		require.Positive(t, st.Total, st.Name)
	}
	for _, st := range s.CommandStats() {
		require.NotEqual(t, "nosuchcommand", st.Name)
	}
	require.Equal(t, base+3, s.Stats().ErrorReplies, "WRONGTYPE, arity, unknown")
	require.Positive(t, s.Stats().ConnectedClients)

	// A command refused while queuing fails the transaction and counts
	// as rejected; the EXEC that then aborts counts as a failed call.
	tx = c.TxPipeline()
	tx.Do(ctx, "get")
	_, err = tx.Exec(ctx)
	require.ErrorContains(t, err, "EXECABORT")
	require.Equal(t, uint64(2), s.CommandStat("get").Rejected)
	require.Equal(t, uint64(1), s.CommandStat("exec").Failed)
}

// INFO commandstats and latencystats have Redis's lines, left out of the
// default INFO and in INFO all; CONFIG RESETSTAT starts them again, and a
// read-only connection may not reset them.
func TestInfoCommandStatsAndResetStat(t *testing.T) {
	s, addr := startServer(t, Options{Tokens: []string{"rw"}, ReadOnlyTokens: []string{"ro"}})
	ctx := t.Context()
	c := redis.NewClient(&redis.Options{Addr: addr, Password: "rw"})
	defer c.Close()
	require.NoError(t, c.Set(ctx, "a", "1", 0).Err())
	require.NoError(t, c.Set(ctx, "b", "2", 0).Err())

	info := c.Info(ctx, "commandstats").Val()
	require.Contains(t, info, "# Commandstats\r\n")
	require.Regexp(t, `cmdstat_set:calls=2,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=0,failed_calls=0\r\n`, info)
	require.NotContains(t, info, "# Latencystats")
	lat := c.Info(ctx, "latencystats").Val()
	require.Regexp(t, `latency_percentiles_usec_set:p50=\d+\.000,p99=\d+\.000,p99\.9=\d+\.000\r\n`, lat)
	require.NotContains(t, c.Info(ctx).Val(), "cmdstat_", "not in the default sections")
	all := c.Info(ctx, "all").Val()
	require.Contains(t, all, "cmdstat_set:calls=2")
	require.Contains(t, all, "latency_percentiles_usec_set:")
	require.Contains(t, all, "# Keyspace")

	ro := redis.NewClient(&redis.Options{Addr: addr, Password: "ro"})
	defer ro.Close()
	require.ErrorContains(t, ro.ConfigResetStat(ctx).Err(), "NOPERM")
	require.Equal(t, uint64(2), s.CommandStat("set").Calls, "a refused reset changes nothing")

	// INFO errorstats counts error replies by their code, in the default
	// sections as Redis's.
	require.NoError(t, c.HSet(ctx, "h", "f", "v").Err())
	require.ErrorContains(t, c.Get(ctx, "h").Err(), "WRONGTYPE")
	require.ErrorContains(t, c.Get(ctx, "h").Err(), "WRONGTYPE")
	// (go-redis's RESP3 handshake also asks for CLIENT MAINT_NOTIFICATIONS,
	// which is refused with ERR here as by Redis, so ERR's count depends on
	// the client's connections.)
	errs := c.Info(ctx, "errorstats").Val()
	require.True(t, strings.HasPrefix(errs, "# Errorstats\r\n"), errs)
	require.Contains(t, errs, "\r\nerrorstat_NOPERM:count=1\r\n")
	require.Contains(t, errs, "\r\nerrorstat_WRONGTYPE:count=2\r\n")
	require.Regexp(t, `(?s)# Errorstats\r\n.*errorstat_WRONGTYPE:count=2\r\n`, c.Info(ctx).Val(), "in the default sections")

	require.NoError(t, c.ConfigResetStat(ctx).Err())
	require.Zero(t, s.CommandStat("set").Calls)
	require.Zero(t, s.CommandStat("info").Calls)
	require.Equal(t, uint64(1), s.CommandStat("config").Calls, "the reset itself is counted after it")
	require.Zero(t, s.Stats().ErrorReplies)
	require.NotContains(t, c.Info(ctx, "commandstats").Val(), "cmdstat_set")
	errs = c.Info(ctx, "errorstats").Val()
	require.NotContains(t, errs, "NOPERM", "the reset forgets the codes too")
	require.NotContains(t, errs, "WRONGTYPE")
	require.ErrorContains(t, c.Do(ctx, "config", "resetstat", "extra").Err(), "not supported")
}

// Past maxErrorCodes distinct codes, new codes are not tracked; the ones
// tracked go on counting. A reply whose first word is not a code counts
// as ERR.
func TestErrorCodesBounded(t *testing.T) {
	var e errorCodes
	for i := range maxErrorCodes + 10 {
		e.count(fmt.Sprintf("CODE%03d some message", i))
	}
	e.count("CODE000 again")
	lines := e.info()
	require.Len(t, lines, maxErrorCodes)
	require.Equal(t, "errorstat_CODE000:count=2", lines[0])
	require.NotContains(t, lines, "errorstat_CODE130:count=1")
	e.reset()
	require.Empty(t, e.info())

	// A first word that is not a code (a colon would break the INFO line)
	// counts as ERR.
	for _, msg := range []string{"temporalstore: boom", "lower case", "A\r\nB x", "", strings.Repeat("X", 33)} {
		e.count(msg)
	}
	e.count("WRONGTYPE x")
	require.Equal(t, []string{"errorstat_ERR:count=5", "errorstat_WRONGTYPE:count=1"}, e.info())
}

// BenchmarkCommandStatsRecord is the cost of counting one call: a
// command's time, taken with two clock reads, and its counters.
func BenchmarkCommandStatsRecord(b *testing.B) {
	s := &Server{started: time.Now(), cmdStats: newCommandStats(commandList)}
	cs, spec := s.cmdStats, commands["get"]
	for b.Loop() {
		start := s.clock()
		cs.record(spec, 1, s.clock()-start, 0)
	}
	b.ReportMetric(float64(cs.byID[spec.id].calls.Load())/float64(b.N), "calls/op")
}

// BenchmarkCommandStatsRecordParallel counts calls of one command from
// every processor, the counters' worst case: their cache lines move
// between cores on every call.
func BenchmarkCommandStatsRecordParallel(b *testing.B) {
	s := &Server{started: time.Now(), cmdStats: newCommandStats(commandList)}
	cs, spec := s.cmdStats, commands["get"]
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			start := s.clock()
			cs.record(spec, 1, s.clock()-start, 0)
		}
	})
	b.ReportMetric(float64(cs.byID[spec.id].calls.Load())/float64(b.N), "calls/op")
}

// Every command has COMMAND DOCS' group and summary, and the docs name
// no command that is not served.
func TestEveryCommandHasDocs(t *testing.T) {
	for _, s := range commandList {
		require.NotEmpty(t, s.group, s.name)
		require.NotEmpty(t, s.summary, s.name)
	}
	for name := range commandDocs {
		require.Contains(t, commands, name, "docs of a command not served")
	}
}

// LATENCY HISTOGRAM has Redis 7's shape: per command, its calls and the
// cumulative counts at power-of-two microsecond bounds, ending at the
// calls; named commands only when given; DOCTOR and GRAPH, which are not
// served, get a clear error.
func TestLatencyHistogram(t *testing.T) {
	_, addr := startServer(t, Options{})
	ctx := t.Context()
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, Protocol: 3})
	defer c.Close()
	for range 5 {
		require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	}
	require.NoError(t, c.Get(ctx, "k").Err())
	v, err := c.Do(ctx, "latency", "histogram", "set", "GET", "nosuch").Result()
	require.NoError(t, err)
	m, ok := v.(map[any]any)
	require.True(t, ok, "%T", v)
	require.Len(t, m, 2)
	set := m["set"].(map[any]any)
	require.Equal(t, int64(5), set["calls"])
	hist := set["histogram_usec"].(map[any]any)
	require.NotEmpty(t, hist)
	var last, top int64
	for bound, cum := range hist {
		b := bound.(int64)
		require.Equal(t, int64(0), b&(b-1), "%d is a power of two", b)
		if b > top {
			top, last = b, cum.(int64)
		}
	}
	require.Equal(t, int64(5), last, "the highest bound counts every call")
	all, err := c.Do(ctx, "latency", "histogram").Result()
	require.NoError(t, err)
	require.Contains(t, all.(map[any]any), "hello", "every command called, without names")
	require.ErrorContains(t, c.Do(ctx, "latency", "graph", "command").Err(), "not implemented")
	help, err := c.Do(ctx, "latency", "help").StringSlice()
	require.NoError(t, err)
	require.Contains(t, strings.Join(help, "\n"), "HISTOGRAM [COMMAND ...]")
}
