package resp

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// TestQueuedScriptsAreIsolatedAndAllRun: scripts of one key group from
// many connections at once, run in batches by whichever caller leads:
// each sees no other script between its commands, each caller gets its
// own script's reply, and every increment is there once.
func TestQueuedScriptsAreIsolatedAndAllRun(t *testing.T) {
	addr, _ := start(t, Options{})
	ctx := t.Context()
	rc := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 16})
	t.Cleanup(func() { rc.Close() })
	script := redis.NewScript(`
local a = redis.call('INCR', KEYS[1])
local b = redis.call('INCR', KEYS[2])
redis.call('INCRBY', KEYS[3], ARGV[1])
return {a, b, ARGV[1]}`)
	const workers, each = 16, 150
	var wg sync.WaitGroup
	var sum atomic.Int64
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				by := int64(w*1000 + i)
				r, err := script.Run(ctx, rc, []string{"{q}a", "{q}b", "{q}sum"}, by).Int64Slice()
				require.NoError(t, err)
				require.Equal(t, by, r[2], "another caller's reply")
				require.Equal(t, r[0], r[1], "a script ran between another's commands")
				sum.Add(by)
			}
		})
	}
	wg.Wait()
	a, err := rc.Get(ctx, "{q}a").Int64()
	require.NoError(t, err)
	require.Equal(t, int64(workers*each), a)
	total, err := rc.Get(ctx, "{q}sum").Int64()
	require.NoError(t, err)
	require.Equal(t, sum.Load(), total)
}

// TestQueuedScriptPanicReachesItsCaller: a panic in one queued job is
// raised in its own caller's goroutine (where the connection's
// containment answers it), while the jobs batched with it run.
func TestQueuedScriptPanicReachesItsCaller(t *testing.T) {
	srv, _ := startServer(t, Options{})
	gk := groupKey{srv.opts.Namespace, srv.opts.Table, 0}
	var ran atomic.Int64
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			c := &conn{s: srv}
			do := func(*temporalstore.Tx) { ran.Add(1) }
			if i%5 == 0 {
				do = func(*temporalstore.Tx) { panic(fmt.Sprintf("injected: job %d", i)) }
				require.PanicsWithValue(t, fmt.Sprintf("injected: job %d", i), func() {
					_ = c.runQueued(gk, []byte("k"), do)
				})
				return
			}
			require.NoError(t, c.runQueued(gk, []byte("k"), do))
		})
	}
	wg.Wait()
	require.Equal(t, int64(32), ran.Load())
	q := srv.scripts.queueFor(gk)
	q.mu.Lock()
	defer q.mu.Unlock()
	require.False(t, q.running)
	require.Empty(t, q.jobs)
}
