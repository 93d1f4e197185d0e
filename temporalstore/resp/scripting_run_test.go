package resp

import (
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testredis"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
)

// Real-world scripts, unchanged.
const (
	// tokenBucketScript is Spring Cloud Gateway's request rate limiter.
	tokenBucketScript = `local tokens_key = KEYS[1]
local timestamp_key = KEYS[2]

local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local requested = tonumber(ARGV[4])

local fill_time = capacity/rate
local ttl = math.floor(fill_time*2)

local last_tokens = tonumber(redis.call("get", tokens_key))
if last_tokens == nil then
  last_tokens = capacity
end

local last_refreshed = tonumber(redis.call("get", timestamp_key))
if last_refreshed == nil then
  last_refreshed = 0
end

local delta = math.max(0, now-last_refreshed)
local filled_tokens = math.min(capacity, last_tokens+(delta*rate))
local allowed = filled_tokens >= requested
local new_tokens = filled_tokens
local allowed_num = 0
if allowed then
  new_tokens = filled_tokens - requested
  allowed_num = 1
end

if ttl > 0 then
  redis.call("setex", tokens_key, ttl, new_tokens)
  redis.call("setex", timestamp_key, ttl, now)
end

return { allowed_num, new_tokens }
`
	// slidingWindowScript is the sorted-set sliding-window limiter.
	slidingWindowScript = `local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, 0, now - window)
local count = redis.call('ZCARD', key)
if count < limit then
  redis.call('ZADD', key, now, now .. '-' .. ARGV[4])
  redis.call('PEXPIRE', key, window)
  return {1, limit - count - 1}
end
return {0, 0}
`
	// redlockReleaseScript is Redlock's unlock.
	redlockReleaseScript = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end`
)

// The real-world scripts run through go-redis's Script (EVALSHA, then EVAL
// on NOSCRIPT) with the same results on our server and redis-server.
func TestRealWorldScriptsMatchRedis(t *testing.T) {
	addr, _ := start(t, Options{})
	ours, theirs := client(t, addr, 2), testredis.Start(t)
	ctx := t.Context()
	bucket := redis.NewScript(tokenBucketScript)
	window := redis.NewScript(slidingWindowScript)
	release := redis.NewScript(redlockReleaseScript)
	type call struct {
		s    *redis.Script
		keys []string
		args []any
	}
	var calls []call
	for i := range 30 {
		now := 1_700_000_000 + i/3 // three calls a second
		calls = append(calls, call{bucket, []string{"{user1}.tokens", "{user1}.ts"}, []any{2, 5, now, 1}})
		calls = append(calls, call{window, []string{"{user1}.window"}, []any{now * 1000, 2000, 4, i}})
	}
	calls = append(calls,
		call{release, []string{"{lock}r"}, []any{"token"}},
	)
	for _, c := range []*redis.Client{ours, theirs} {
		require.NoError(t, c.ScriptFlush(ctx).Err())
		require.NoError(t, c.Set(ctx, "{lock}r", "token", 0).Err())
		require.NoError(t, c.Set(ctx, "{lock}other", "someone-else", 0).Err())
	}
	calls = append(calls,
		call{release, []string{"{lock}r"}, []any{"token"}},
		call{release, []string{"{lock}other"}, []any{"token"}},
	)
	for i, cl := range calls {
		want, werr := cl.s.Run(ctx, theirs, cl.keys, cl.args...).Result()
		got, gerr := cl.s.Run(ctx, ours, cl.keys, cl.args...).Result()
		require.Equal(t, werr, gerr, "call %d", i)
		require.Equal(t, want, got, "call %d: %v %v", i, cl.keys, cl.args)
	}
	for _, k := range []string{"{user1}.tokens", "{user1}.ts", "{lock}r", "{lock}other"} {
		require.Equal(t, theirs.Get(ctx, k).Val(), ours.Get(ctx, k).Val(), k)
	}
	require.Equal(t, theirs.ZCard(ctx, "{user1}.window").Val(), ours.ZCard(ctx, "{user1}.window").Val())
}

// SCRIPT KILL from another connection stops a script past the busy
// threshold; one that wrote cannot be killed; with none running, NOTBUSY.
// FUNCTION KILL stops a function, and each kill refuses the other kind.
func TestScriptKill(t *testing.T) {
	s, addr := startServer(t, Options{})
	ctx := t.Context()
	a := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, ReadTimeout: -1})
	t.Cleanup(func() { a.Close() })
	b := client(t, addr, 2)
	require.NoError(t, b.ConfigSet(ctx, "busy-reply-threshold", "100").Err())
	require.Equal(t, map[string]string{"lua-time-limit": "100"}, b.ConfigGet(ctx, "lua-time-limit").Val())
	require.ErrorContains(t, b.ScriptKill(ctx).Err(), "NOTBUSY No scripts in execution right now.")

	runAsync := func(args ...any) <-chan error {
		done := make(chan error, 1)
		go func() { done <- a.Do(ctx, args...).Err() }()
		return done
	}
	waitRunning := func() {
		require.Eventually(t, func() bool { return running(s) > 0 }, 5*time.Second, time.Millisecond)
	}

	done := runAsync("EVAL", "while true do end", 0)
	waitRunning()
	start := time.Now()
	require.Equal(t, "OK", b.ScriptKill(ctx).Val())
	err := <-done
	require.ErrorContains(t, err, "ERR Script killed by user with SCRIPT KILL... script: ")
	require.ErrorContains(t, err, ", on @user_script:1.")
	require.Less(t, time.Since(start), 5*time.Second)
	require.Equal(t, "PONG", a.Ping(ctx).Val(), "the connection lives on")

	// A script that wrote runs to its end.
	done = runAsync("EVAL", "redis.call('set', KEYS[1], 'x') local t = os.clock() while os.clock() - t < 0.6 do end return 1", 1, "kill:w")
	waitRunning()
	require.ErrorContains(t, b.ScriptKill(ctx).Err(), "UNKILLABLE Sorry the script already executed write commands against the dataset.")
	require.NoError(t, <-done)

	// Functions: FUNCTION KILL, not SCRIPT KILL.
	require.NoError(t, b.FunctionLoadReplace(ctx, "#!lua name=spin\nredis.register_function('spin', function() while true do end end)").Err())
	done = runAsync("FCALL", "spin", 0)
	waitRunning()
	require.ErrorContains(t, b.ScriptKill(ctx).Err(), "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.")
	stats := b.Do(ctx, "FUNCTION", "STATS").Val().([]any)
	require.Equal(t, "running_script", stats[0])
	require.Equal(t, "spin", stats[1].([]any)[1])
	require.Equal(t, "OK", b.FunctionKill(ctx).Val())
	require.ErrorContains(t, <-done, "ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2.")
	require.ErrorContains(t, b.FunctionKill(ctx).Err(), "NOTBUSY")
}

// running is how many scripts run on s.
func running(s *Server) int {
	s.scripts.mu.Lock()
	defer s.scripts.mu.Unlock()
	return len(s.scripts.running)
}

// A script with keys runs alone on its keys' shard: a reader of its keys
// from another connection waits and sees all its writes or none.
func TestScriptIsolation(t *testing.T) {
	s, addr := startServer(t, Options{})
	ctx := t.Context()
	a, b := client(t, addr, 2), client(t, addr, 2)
	done := make(chan error, 1)
	go func() {
		done <- a.Eval(ctx, "redis.call('set', KEYS[1], '1') local t = os.clock() while os.clock() - t < 0.3 do end redis.call('set', KEYS[2], '1') return 1",
			[]string{"{iso}a", "{iso}b"}).Err()
	}()
	require.Eventually(t, func() bool { return running(s) > 0 }, 5*time.Second, time.Millisecond)
	v, err := b.MGet(ctx, "{iso}a", "{iso}b").Result()
	require.NoError(t, err)
	require.Equal(t, []any{"1", "1"}, v, "the reader waited for the whole script")
	require.NoError(t, <-done)
}

// Concurrent read-modify-write scripts lose no update.
func TestScriptAtomicIncrements(t *testing.T) {
	addr, _ := start(t, Options{})
	ctx := t.Context()
	c := client(t, addr, 2)
	incr := redis.NewScript(`local v = redis.call('get', KEYS[1]) or 0
redis.call('set', KEYS[1], v + 1)
return v + 1`)
	const workers, each = 16, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range each {
				if err := incr.Run(ctx, c, []string{"atomic:n"}).Err(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	n, err := strconv.Atoi(c.Get(ctx, "atomic:n").Val())
	require.NoError(t, err)
	require.Equal(t, workers*each, n)
}

// A script's keys share one key group; a command on a key of another
// group inside a script with keys is refused; a script without keys
// reaches any key, each command on its own.
func TestScriptKeyGroups(t *testing.T) {
	s, addr := startServer(t, Options{})
	ctx := t.Context()
	c := client(t, addr, 2)
	e := s.opts.Engine
	g0, err := e.KeyGroup("", "", []byte("kg0"))
	require.NoError(t, err)
	other := ""
	for i := range 1000 {
		k := fmt.Sprint("kg", i)
		if g, _ := e.KeyGroup("", "", []byte(k)); g != g0 {
			other = k
			break
		}
	}
	require.NotEmpty(t, other, "no key of another group")
	require.ErrorContains(t, c.Eval(ctx, "return 1", []string{"kg0", other}).Err(), "CROSSSLOT")
	err = c.Eval(ctx, "return redis.call('set', ARGV[1], 'v')", []string{"kg0"}, other).Err()
	require.ErrorContains(t, err, "ERR Script attempted to access a non local key in a cluster node script: ")
	require.Zero(t, c.Exists(ctx, other).Val())
	require.Equal(t, "OK", c.Eval(ctx, "redis.call('set', ARGV[1], 'v') return redis.call('set', ARGV[2], 'v')", nil, "kg0", other).Val())
	require.Equal(t, int64(2), c.Exists(ctx, "kg0", other).Val())
}

// Scripts that fail in every way leave the server serving.
func TestScriptErrorsLeaveServerAlive(t *testing.T) {
	addr, _ := start(t, Options{})
	ctx := t.Context()
	c := client(t, addr, 2)
	for _, body := range []string{
		"error('x')",
		"local function f() return f() + 1 end return f()",
		"local t = {} t[1] = t return t",
		"return string.rep('x', 1e12)",
		"return redis.call('set', KEYS[1])",
		"return setmetatable({}, {__index = function(t, k) return t[k] end}).x",
		"return ('x'):rep(-1)",
		"local t = {} for i = 1, 10 do t = {t} end return t",
		"return redis.call('get', string.rep('k', 100))",
		"return getmetatable(_G)",
		"rawset(_G, 'x', 1) return x",
		"return coroutine",
		"return loadstring('return 1')()",
		"return unpack({1, 2, 3})",
		"return redis.call('evalsha', 'x', 0)",
		"return redis.call('function', 'flush')",
		"return redis.call('script', 'flush')",
		"return redis.call('blmpop', 1, 1, KEYS[1], 'LEFT')",
	} {
		_ = c.Eval(ctx, body, []string{"alive:k"}).Err()
		require.Equal(t, "PONG", c.Ping(ctx).Val(), body)
	}
}

// A read-only connection's scripts read but do not write, and it may not
// load or drop functions.
func TestScriptReadOnlyAccess(t *testing.T) {
	addr, _ := start(t, Options{Tokens: []string{"rw"}, ReadOnlyTokens: []string{"ro"}})
	ctx := t.Context()
	rw := redis.NewClient(&redis.Options{Addr: addr, Password: "rw"})
	ro := redis.NewClient(&redis.Options{Addr: addr, Password: "ro"})
	t.Cleanup(func() { rw.Close(); ro.Close() })
	require.NoError(t, rw.Set(ctx, "ro:k", "v", 0).Err())
	require.Equal(t, "v", ro.Eval(ctx, "return redis.call('get', KEYS[1])", []string{"ro:k"}).Val())
	require.ErrorContains(t, ro.Eval(ctx, "return redis.call('set', KEYS[1], 'x')", []string{"ro:k"}).Err(), "NOPERM")
	require.Equal(t, "v", rw.Get(ctx, "ro:k").Val())
	require.ErrorContains(t, ro.FunctionLoad(ctx, "#!lua name=rolib\nredis.register_function('f', function() return 1 end)").Err(), "NOPERM")
	require.ErrorContains(t, ro.FunctionFlush(ctx).Err(), "NOPERM")
	require.ErrorContains(t, ro.ScriptFlush(ctx).Err(), "NOPERM")
}

// A script's writes take the engine's log like any command's: they are
// there after the engine is closed and opened again.
func TestScriptWritesSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	serve := func() (*redis.Client, func()) {
		e, err := local.Open(t.Context(), temporalstore.Options{Dir: dir, MaintenanceInterval: temporalstore.Disabled})
		require.NoError(t, err)
		s, err := New(Options{Engine: e})
		require.NoError(t, err)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		go func() { _ = s.Serve(l) }()
		c := redis.NewClient(&redis.Options{Addr: l.Addr().String()})
		return c, func() {
			c.Close()
			require.NoError(t, s.Close())
			require.NoError(t, e.Close())
		}
	}
	ctx := t.Context()
	c, stop := serve()
	require.NoError(t, c.Eval(ctx, `redis.call('set', KEYS[1], ARGV[1])
redis.call('hset', KEYS[2], 'f', ARGV[1])
redis.call('rpush', KEYS[3], 'a', 'b')
return redis.call('incrby', KEYS[4], 5)`, []string{"{d}s", "{d}h", "{d}l", "{d}n"}, "v").Err())
	stop()
	c, stop = serve()
	defer stop()
	require.Equal(t, "v", c.Get(ctx, "{d}s").Val())
	require.Equal(t, "v", c.HGet(ctx, "{d}h", "f").Val())
	require.Equal(t, []string{"a", "b"}, c.LRange(ctx, "{d}l", 0, -1).Val())
	require.Equal(t, "5", c.Get(ctx, "{d}n").Val())
}
