package resp

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// A blocked BLPOP is served by a later push, the longest-blocked client
// first; a timeout replies nil; MULTI never blocks; BLMOVE, BZPOPMIN and
// BLMPOP wake the same way; the wait is not counted as the command's time.
func TestBlockingPops(t *testing.T) {
	s, addr := startServer(t, Options{})
	ctx := t.Context()
	c := client(t, addr, 2)

	type popped struct {
		who int
		v   []string
		err error
	}
	got := make(chan popped, 2)
	for who := range 2 {
		bc := client(t, addr, 2)
		go func() {
			v, err := bc.BLPop(ctx, 0, "q").Result()
			got <- popped{who, v, err}
		}()
		// Blocked in this order.
		require.Eventually(t, func() bool { return s.blocked.count.Load() == int64(who+1) }, 5*time.Second, time.Millisecond)
	}
	require.Contains(t, c.Info(ctx, "clients").Val(), "blocked_clients:2")
	require.Equal(t, int64(2), c.RPush(ctx, "q", "first", "second").Val())
	for range 2 {
		p := <-got
		require.NoError(t, p.err)
		require.Equal(t, []string{"q", map[int]string{0: "first", 1: "second"}[p.who]}, p.v, "FIFO: client %d", p.who)
	}
	require.Equal(t, int64(0), c.Exists(ctx, "q").Val())

	start := time.Now()
	require.ErrorIs(t, c.Do(ctx, "BLPOP", "q", "0.05").Err(), redis.Nil)
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)

	// Already there: no wait; several keys, the first non-empty one.
	c.RPush(ctx, "q2", "x")
	require.Equal(t, []string{"q2", "x"}, c.BRPop(ctx, time.Second, "q", "q2").Val())

	// MULTI: no blocking.
	tx := c.TxPipeline()
	tx.BLPop(ctx, 0, "q")
	_, err := tx.Exec(ctx)
	require.ErrorIs(t, err, redis.Nil)

	// BLMOVE and BZPOPMIN wake on a push from another connection.
	moved := make(chan string, 1)
	go func() {
		moved <- client(t, addr, 2).BLMove(ctx, "{m}src", "{m}dst", "LEFT", "RIGHT", 5*time.Second).Val()
	}()
	require.Eventually(t, func() bool { return s.blocked.count.Load() == 1 }, 5*time.Second, time.Millisecond)
	c.RPush(ctx, "{m}src", "job")
	require.Equal(t, "job", <-moved)
	require.Equal(t, []string{"job"}, c.LRange(ctx, "{m}dst", 0, -1).Val())

	zgot := make(chan *redis.ZWithKey, 1)
	go func() { zgot <- client(t, addr, 2).BZPopMin(ctx, 5*time.Second, "z1", "z2").Val() }()
	require.Eventually(t, func() bool { return s.blocked.count.Load() == 1 }, 5*time.Second, time.Millisecond)
	c.ZAdd(ctx, "z2", redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 1, Member: "a"})
	zw := <-zgot
	require.Equal(t, "z2", zw.Key)
	require.Equal(t, "a", zw.Member)
	require.Equal(t, 1.0, zw.Score)

	lgot := make(chan []string, 1)
	go func() {
		_, v, _ := client(t, addr, 2).BLMPop(ctx, 5*time.Second, "right", 5, "l1", "l2").Result()
		lgot <- v
	}()
	require.Eventually(t, func() bool { return s.blocked.count.Load() == 1 }, 5*time.Second, time.Millisecond)
	c.RPush(ctx, "l2", "a", "b", "c")
	require.Equal(t, []string{"c", "b", "a"}, <-lgot)

	// Errors: a bad timeout, a wrong type (at once, not after the wait).
	require.ErrorContains(t, c.Do(ctx, "BLPOP", "q", "-1").Err(), "ERR timeout is negative")
	require.ErrorContains(t, c.Do(ctx, "BLPOP", "q", "x").Err(), "ERR timeout is not a float or out of range")
	c.Set(ctx, "str", "v", 0)
	require.ErrorContains(t, c.Do(ctx, "BLPOP", "str", "0").Err(), "WRONGTYPE")

	// The wait is not the command's time.
	require.NoError(t, c.Do(ctx, "CONFIG", "RESETSTAT").Err())
	require.ErrorIs(t, c.Do(ctx, "BLPOP", "none", "0.2").Err(), redis.Nil)
	stats := c.Info(ctx, "commandstats").Val()
	i := strings.Index(stats, "cmdstat_blpop:")
	require.GreaterOrEqual(t, i, 0, stats)
	var calls, usec int64
	_, err = fmt.Sscanf(stats[i:], "cmdstat_blpop:calls=%d,usec=%d", &calls, &usec)
	require.NoError(t, err)
	require.Equal(t, int64(1), calls)
	require.Less(t, usec, int64(100_000))
	require.Equal(t, int64(0), s.blocked.count.Load())
}

// A client that disconnects while blocked leaves the queue, and a push
// after it goes to the list, not to the closed connection.
func TestBlockedClientDisconnects(t *testing.T) {
	s, addr := startServer(t, Options{})
	ctx := t.Context()
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	_, err = nc.Write([]byte("BLPOP gone 0\r\n"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return s.blocked.count.Load() == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, nc.Close())
	require.Eventually(t, func() bool { return s.blocked.count.Load() == 0 }, 5*time.Second, time.Millisecond)
	c := client(t, addr, 2)
	c.RPush(ctx, "gone", "kept")
	require.Equal(t, []string{"kept"}, c.LRange(ctx, "gone", 0, -1).Val())
}

// CLIENT UNBLOCK ends a blocked command as its timeout would, or with
// UNBLOCKED; CLIENT KILL closes connections by id or address.
func TestClientUnblockAndKill(t *testing.T) {
	s, addr := startServer(t, Options{})
	ctx := t.Context()
	c := client(t, addr, 2)
	a := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, PoolSize: 1})
	t.Cleanup(func() { a.Close() })
	id := a.ClientID(ctx).Val()
	for _, tc := range []struct {
		reason string
		want   string
	}{{"", "redis: nil"}, {"TIMEOUT", "redis: nil"}, {"ERROR", "UNBLOCKED client unblocked via CLIENT UNBLOCK"}} {
		done := make(chan error, 1)
		go func() { done <- a.Do(ctx, "BLPOP", "nothing", "0").Err() }()
		require.Eventually(t, func() bool { return s.blocked.count.Load() == 1 }, 5*time.Second, time.Millisecond)
		args := []any{"CLIENT", "UNBLOCK", id}
		if tc.reason != "" {
			args = append(args, tc.reason)
		}
		require.Equal(t, int64(1), c.Do(ctx, args...).Val())
		err := <-done
		require.Error(t, err)
		require.Equal(t, tc.want, err.Error())
		require.Eventually(t, func() bool { return s.blocked.count.Load() == 0 }, 5*time.Second, time.Millisecond)
	}
	require.Equal(t, int64(0), c.Do(ctx, "CLIENT", "UNBLOCK", id).Val(), "not blocked")
	require.ErrorContains(t, c.Do(ctx, "CLIENT", "UNBLOCK", id, "MAYBE").Err(), "TIMEOUT or ERROR")

	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	require.ErrorContains(t, c.Do(ctx, "CLIENT", "KILL", "10.0.0.1:1").Err(), "No such client")
	// The dial returns before the server has registered the connection.
	require.Eventually(t, func() bool {
		return strings.Contains(c.Do(ctx, "CLIENT", "LIST").String(), nc.LocalAddr().String())
	}, 5*time.Second, time.Millisecond)
	require.Equal(t, "OK", c.Do(ctx, "CLIENT", "KILL", nc.LocalAddr().String()).Val())
	_, err = nc.Read(make([]byte, 1))
	require.Error(t, err, "killed")
	require.Equal(t, int64(1), c.Do(ctx, "CLIENT", "KILL", "ID", id).Val())
	require.Equal(t, int64(0), c.Do(ctx, "CLIENT", "KILL", "ID", c.ClientID(ctx).Val()).Val(), "SKIPME yes by default")
	require.ErrorContains(t, c.Do(ctx, "CLIENT", "KILL", "ID", "0").Err(), "greater than 0")
	require.ErrorContains(t, c.Do(ctx, "CLIENT", "KILL", "SKIPME", "maybe").Err(), "syntax error")
}
