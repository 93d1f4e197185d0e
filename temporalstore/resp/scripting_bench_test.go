package resp

import (
	"fmt"
	"net"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
)

// benchTokenBucket is bench script's token bucket (tools/bench/scriptbench).
const benchTokenBucket = `local key = KEYS[1]
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local requested = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', key, 'tokens', 'ts')
local tokens = tonumber(b[1]) or capacity
local ts = tonumber(b[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - ts) * rate / 1000)
local allowed = 0
if tokens >= requested then
  tokens = tokens - requested
  allowed = 1
end
redis.call('HSET', key, 'tokens', tokens, 'ts', now)
redis.call('PEXPIRE', key, math.ceil(capacity / rate * 1000) * 2)
return {allowed, math.floor(tokens)}
`

// startAsync serves an async table (writes acknowledged before their
// fsync), as bench script's server runs, so fsyncs do not hide the
// scripts' own cost.
func startAsync(b *testing.B) string {
	e, err := local.Open(b.Context(), temporalstore.Options{Dir: b.TempDir(), MaintenanceInterval: temporalstore.Disabled})
	require.NoError(b, err)
	require.NoError(b, e.CreateTable(b.Context(), "bench", "async", temporalstore.TableOptions{Async: true}))
	s, err := New(Options{Engine: e, Namespace: "bench", Table: "async"})
	require.NoError(b, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	go func() { _ = s.Serve(l) }()
	b.Cleanup(func() {
		require.NoError(b, s.Close())
		require.NoError(b, e.Close())
	})
	return l.Addr().String()
}

// BenchmarkEvalSHATokenBucket: EVALSHA of the token bucket over 5,000
// keys from 8 connections, through go-redis.
func BenchmarkEvalSHATokenBucket(b *testing.B) {
	addr := startAsync(b)
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 8})
	b.Cleanup(func() { c.Close() })
	ctx := b.Context()
	sha, err := c.ScriptLoad(ctx, benchTokenBucket).Result()
	require.NoError(b, err)
	keys := make([][]string, 5000)
	for i := range keys {
		keys[i] = []string{fmt.Sprint("tb:", i)}
	}
	var mu sync.Mutex
	next := 0
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mu.Lock()
			k := keys[next%len(keys)]
			next++
			mu.Unlock()
			if err := c.EvalSha(ctx, sha, k, 100, 50, 1).Err(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkScriptNoCommands is the cost of running a script apart from its
// commands: EVALSHA of "return 1".
func BenchmarkScriptNoCommands(b *testing.B) {
	addr := startAsync(b)
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
	b.Cleanup(func() { c.Close() })
	ctx := b.Context()
	sha, err := c.ScriptLoad(ctx, "return 1").Result()
	require.NoError(b, err)
	for b.Loop() {
		if err := c.EvalSha(ctx, sha, []string{"k"}).Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}
