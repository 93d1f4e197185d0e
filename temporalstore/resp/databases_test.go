package resp

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testredis"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
)

// databaseSteps are a session over numbered databases: the same on our
// server and on redis-server gives the same replies, errors included.
var databaseSteps = [][]any{
	{"FLUSHALL"},
	{"SET", "k", "zero"}, {"SELECT", "3"}, {"GET", "k"}, {"RANDOMKEY"}, {"SET", "k", "three"}, {"RANDOMKEY"}, {"SET", "only3", "x"},
	{"DBSIZE"}, {"KEYS", "*"}, {"SELECT", "16"}, {"SELECT", "-1"}, {"SELECT", "x"}, {"DBSIZE"},
	{"SELECT", "0"}, {"GET", "k"}, {"DBSIZE"}, {"INFO", "keyspace"},
	// MOVE: to an empty database, over an existing key, of an absent key,
	// to the selected one, out of range; every kind.
	{"MOVE", "k", "3"}, {"SET", "m", "v", "EX", "1000"}, {"MOVE", "m", "7"}, {"EXISTS", "m"}, {"MOVE", "nope", "7"},
	{"MOVE", "m", "0"}, {"MOVE", "m", "16"}, {"MOVE", "m", "x"},
	{"HSET", "h", "f", "1", "g", "2"}, {"MOVE", "h", "7"}, {"RPUSH", "l", "a", "b", "c"}, {"MOVE", "l", "7"},
	{"SADD", "s", "x", "y"}, {"MOVE", "s", "7"}, {"ZADD", "z", "1", "a", "2", "b"}, {"MOVE", "z", "7"},
	{"SELECT", "7"}, {"TTL", "m"}, {"HGETALL", "h"}, {"LRANGE", "l", "0", "-1"}, {"SMEMBERS", "s"},
	{"ZRANGE", "z", "0", "-1", "WITHSCORES"}, {"DBSIZE"}, {"TYPE", "l"},
	// COPY ... DB: across, over an existing key with and without REPLACE,
	// to the same key of the same database.
	{"COPY", "h", "h", "DB", "2"}, {"COPY", "h", "h", "DB", "2"}, {"COPY", "h", "l", "DB", "2"},
	{"COPY", "l", "h", "DB", "2", "REPLACE"}, {"COPY", "h", "h"}, {"COPY", "h", "h", "DB", "7"},
	{"COPY", "h", "h", "DB", "16"}, {"COPY", "h", "h", "DB", "x"}, {"COPY", "nope", "h", "DB", "2"},
	{"SELECT", "2"}, {"TYPE", "h"}, {"LRANGE", "h", "0", "-1"}, {"HGETALL", "l"}, {"EXISTS", "m"},
	// SWAPDB: a connection's selected database follows the swap.
	{"SWAPDB", "2", "7"}, {"DBSIZE"}, {"TYPE", "m"}, {"SWAPDB", "0", "3"}, {"SELECT", "0"}, {"GET", "k"},
	{"SWAPDB", "x", "1"}, {"SWAPDB", "1", "x"}, {"SWAPDB", "0", "16"}, {"SWAPDB", "-1", "0"}, {"SWAPDB", "4", "4"},
	{"INFO", "keyspace"},
	// FLUSHDB flushes the selected database only, FLUSHALL every one.
	{"SELECT", "7"}, {"FLUSHDB"}, {"DBSIZE"}, {"SELECT", "3"}, {"DBSIZE"}, {"FLUSHDB", "LATER"},
	{"INFO", "keyspace"},
	// SELECT inside MULTI applies to the commands queued after it, and
	// stays after EXEC.
	{"MULTI"}, {"SET", "tx", "in3"}, {"SELECT", "5"}, {"SET", "tx", "in5"}, {"EXEC"}, {"GET", "tx"},
	{"SELECT", "3"}, {"GET", "tx"}, {"MULTI"}, {"MOVE", "tx", "5"}, {"MOVE", "tx", "6"}, {"EXEC"},
	{"SELECT", "6"}, {"GET", "tx"},
	{"INFO", "keyspace"}, {"FLUSHALL"}, {"DBSIZE"}, {"SELECT", "5"}, {"DBSIZE"}, {"INFO", "keyspace"},
}

func TestDatabasesMatchRedis(t *testing.T) {
	addr, _ := start(t, Options{})
	ref := testredis.Start(t)
	ctx := t.Context()
	ours := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, PoolSize: 1})
	defer ours.Close()
	theirs := redis.NewClient(&redis.Options{Addr: ref.Options().Addr, Protocol: 2, PoolSize: 1})
	defer theirs.Close()
	for i, args := range databaseSteps {
		want, werr := theirs.Do(ctx, args...).Result()
		got, gerr := ours.Do(ctx, args...).Result()
		where := fmt.Sprintf("step %d: %v", i, args)
		if werr != nil {
			require.Error(t, gerr, "%s: redis says %v, we replied %v", where, werr, got)
			require.Equal(t, werr.Error(), gerr.Error(), where)
			continue
		}
		require.NoError(t, gerr, "%s: redis replied %v", where, want)
		switch strings.ToUpper(fmt.Sprint(args[0])) {
		case "KEYS", "SMEMBERS":
			slices.SortFunc(want.([]any), func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
			slices.SortFunc(got.([]any), func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		case "INFO":
			want, got = keyspace(want.(string)), keyspace(got.(string))
		}
		require.Equal(t, want, got, where)
	}
	// CLIENT INFO and CLIENT LIST give the selected database.
	require.Contains(t, ours.Do(ctx, "CLIENT", "INFO").Val(), " db=5 ")
	require.Contains(t, ours.Do(ctx, "CLIENT", "LIST").Val(), " db=5 ")
	require.Equal(t, []any{"databases", "16"}, ours.Do(ctx, "CONFIG", "GET", "databases").Val())
}

// keyspace is INFO keyspace's lines, without the section's title, and
// without the expires and avg_ttl counts, which the engine does not keep
// (it reports 0).
func keyspace(info string) []string {
	var lines []string
	for l := range strings.SplitSeq(info, "\r\n") {
		if strings.HasPrefix(l, "db") {
			l, _, _ = strings.Cut(l, ",expires=")
			lines = append(lines, l)
		}
	}
	return lines
}

// A database never written costs nothing: reads of it answer as empty
// and make no table; its first write makes one.
func TestDatabaseMadeAtFirstWrite(t *testing.T) {
	addr, e := start(t, Options{Databases: 4})
	ctx := t.Context()
	c := redis.NewClient(&redis.Options{Addr: addr, DB: 2})
	defer c.Close()
	require.ErrorIs(t, c.Get(ctx, "k").Err(), redis.Nil)
	require.Equal(t, int64(0), c.DBSize(ctx).Val())
	require.Empty(t, c.Keys(ctx, "*").Val())
	require.ErrorIs(t, c.RandomKey(ctx).Err(), redis.Nil)
	require.Equal(t, int64(0), c.Exists(ctx, "k").Val())
	require.Equal(t, int64(0), c.Do(ctx, "MOVE", "k", "1").Val())
	require.Equal(t, "OK", c.FlushDB(ctx).Val())
	require.False(t, e.HasTable("", "default@2"))
	require.False(t, e.HasTable("", "default@1"))
	require.ErrorContains(t, client(t, addr, 2).Do(ctx, "SELECT", "4").Err(), "ERR DB index is out of range")
	// A pipeline of plain SETs makes the database too.
	pipe := c.Pipeline()
	for i := range 10 {
		pipe.Set(ctx, fmt.Sprint("p", i), "v", 0)
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(10), c.DBSize(ctx).Val())
	require.True(t, e.HasTable("", "default@2"))
	require.Equal(t, "4", c.ConfigGet(ctx, "databases").Val()["databases"])
	_, err = New(Options{Engine: e, Databases: -1})
	require.ErrorIs(t, err, ErrInvalidOptions)
}

// go-redis's DB option selects the database on every connection it opens.
func TestGoRedisDBOption(t *testing.T) {
	addr, _ := start(t, Options{})
	ctx := t.Context()
	five := redis.NewClient(&redis.Options{Addr: addr, DB: 5})
	defer five.Close()
	zero := client(t, addr, 3)
	require.NoError(t, five.Set(ctx, "k", "five", 0).Err())
	require.Equal(t, "five", five.Get(ctx, "k").Val())
	require.ErrorIs(t, zero.Get(ctx, "k").Err(), redis.Nil)
	require.NoError(t, zero.Do(ctx, "SELECT", "5").Err()) // on one of the pool's connections
	require.NoError(t, zero.Do(ctx, "SWAPDB", "0", "5").Err())
	require.Equal(t, "five", client(t, addr, 2).Get(ctx, "k").Val())
	require.ErrorIs(t, five.Get(ctx, "k").Err(), redis.Nil)
}

// A database's data and a SWAPDB survive a restart of the engine.
func TestDatabasesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	serve := func() (*redis.Client, func()) {
		e, err := local.Open(ctx, temporalstore.Options{Dir: dir, MaintenanceInterval: temporalstore.Disabled})
		require.NoError(t, err)
		s, err := New(Options{Engine: e})
		require.NoError(t, err)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- s.Serve(l) }()
		c := redis.NewClient(&redis.Options{Addr: l.Addr().String(), PoolSize: 1})
		return c, func() {
			c.Close()
			require.NoError(t, s.Close())
			require.ErrorIs(t, <-done, ErrClosed)
			require.NoError(t, e.Close())
		}
	}
	c, stop := serve()
	require.NoError(t, c.Do(ctx, "SELECT", "3").Err())
	require.NoError(t, c.Set(ctx, "k", "three", 0).Err())
	require.NoError(t, c.HSet(ctx, "h", "f", "v").Err())
	require.NoError(t, c.Do(ctx, "SELECT", "4").Err())
	require.NoError(t, c.Set(ctx, "k", "four", 0).Err())
	require.NoError(t, c.Do(ctx, "SWAPDB", "3", "4").Err())
	require.NoError(t, c.Do(ctx, "SWAPDB", "0", "9").Err())
	require.NoError(t, c.Do(ctx, "SELECT", "9").Err())
	require.NoError(t, c.Set(ctx, "was0", "v", 0).Err())
	stop()

	c, stop = serve()
	defer stop()
	for db, want := range map[int]string{3: "four", 4: "three"} {
		require.NoError(t, c.Do(ctx, "SELECT", db).Err())
		require.Equal(t, want, c.Get(ctx, "k").Val(), "db %d", db)
	}
	require.NoError(t, c.Do(ctx, "SELECT", "4").Err())
	require.Equal(t, "v", c.HGet(ctx, "h", "f").Val())
	require.NoError(t, c.Do(ctx, "SELECT", "0").Err())
	require.Equal(t, int64(0), c.Exists(ctx, "was0").Val())
	require.NoError(t, c.Do(ctx, "SELECT", "9").Err())
	require.Equal(t, "v", c.Get(ctx, "was0").Val())
}

// A WATCHed key of a database that SWAPDB changes fails the EXEC, as in
// Redis; and a key WATCHed in one database is checked there, whichever
// is selected at EXEC.
func TestSwapDBTouchesWatchedKeys(t *testing.T) {
	addr, _ := start(t, Options{})
	ctx := t.Context()
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
	defer c.Close()
	other := client(t, addr, 2)
	require.NoError(t, c.Set(ctx, "w", "zero", 0).Err())
	require.NoError(t, other.Do(ctx, "SELECT", "1").Err())
	require.NoError(t, c.Do(ctx, "WATCH", "w").Err())
	require.NoError(t, c.Do(ctx, "SWAPDB", "0", "1").Err())
	require.NoError(t, c.Do(ctx, "MULTI").Err())
	require.NoError(t, c.Do(ctx, "GET", "w").Err())
	require.ErrorIs(t, c.Do(ctx, "EXEC").Err(), redis.Nil)

	require.NoError(t, c.Do(ctx, "SELECT", "1").Err())
	require.NoError(t, c.Do(ctx, "WATCH", "w").Err())
	require.NoError(t, c.Do(ctx, "SELECT", "2").Err())
	require.NoError(t, c.Do(ctx, "MULTI").Err())
	require.NoError(t, c.Do(ctx, "SET", "w", "two").Err())
	require.Equal(t, []any{"OK"}, c.Do(ctx, "EXEC").Val())
	require.NoError(t, c.Do(ctx, "SELECT", "1").Err())
	require.NoError(t, c.Do(ctx, "WATCH", "w").Err())
	require.NoError(t, c.Set(ctx, "w", "changed", 0).Err())
	require.NoError(t, c.Do(ctx, "SELECT", "2").Err())
	require.NoError(t, c.Do(ctx, "MULTI").Err())
	require.NoError(t, c.Do(ctx, "SET", "w", "again").Err())
	require.ErrorIs(t, c.Do(ctx, "EXEC").Err(), redis.Nil)
	require.Equal(t, "two", c.Get(ctx, "w").Val())
}

// A client blocked on a key of a database is served by a push to that
// database only, and, as in Redis, by a SWAPDB that brings the key in.
func TestBlockedClientsAndDatabases(t *testing.T) {
	addr, _ := start(t, Options{})
	ctx := t.Context()
	waiter := redis.NewClient(&redis.Options{Addr: addr, DB: 1})
	defer waiter.Close()
	got := make(chan []string, 1)
	wait := func() {
		go func() { got <- waiter.BLPop(ctx, 0, "l").Val() }()
		require.Eventually(t, func() bool {
			return strings.Contains(client(t, addr, 2).Do(ctx, "INFO", "clients").String(), "blocked_clients:1")
		}, 5*time.Second, 5*time.Millisecond)
	}
	zero := client(t, addr, 2)
	one := redis.NewClient(&redis.Options{Addr: addr, DB: 1})
	defer one.Close()

	wait()
	require.NoError(t, zero.RPush(ctx, "l", "in0").Err())
	select {
	case v := <-got:
		t.Fatalf("served by a push to another database: %v", v)
	case <-time.After(200 * time.Millisecond):
	}
	require.NoError(t, one.RPush(ctx, "l", "in1").Err())
	require.Equal(t, []string{"l", "in1"}, <-got)

	wait()
	require.NoError(t, zero.Do(ctx, "SWAPDB", "0", "1").Err())
	require.Equal(t, []string{"l", "in0"}, <-got)
}

// A pipelined run of SETs writes to the database selected now, also after
// a run in another one (the run's commands are kept from run to run).
func TestPipelinedSetsFollowSelect(t *testing.T) {
	ctx := t.Context()
	addr, e := start(t, Options{})
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	br := bufio.NewReader(nc)
	send := func(req string, replies int) {
		_, err := nc.Write([]byte(req))
		require.NoError(t, err)
		for range replies {
			l, err := br.ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "+OK\r\n", l)
		}
	}
	sets := func(k1, k2 string) string {
		return "*3\r\n$3\r\nSET\r\n$1\r\n" + k1 + "\r\n$1\r\nv\r\n*3\r\n$3\r\nSET\r\n$1\r\n" + k2 + "\r\n$1\r\nv\r\n"
	}
	send(sets("a", "b"), 2)
	send("SELECT 1\r\nSET x v\r\n", 2)
	send(sets("c", "d"), 2)
	for _, tc := range []struct {
		table string
		found bool
	}{{"default@1", true}, {"default", false}} {
		r, err := e.Execute(ctx, temporalstore.Command{Table: tc.table, Kind: temporalstore.KindExistsKeys, Keys: [][]byte{[]byte("c"), []byte("d")}})
		require.NoError(t, err)
		require.Equal(t, map[bool]int64{true: 2, false: 0}[tc.found], r.Int, tc.table)
	}
}
