package main

import (
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
)

// notifyScript is run on redis-server 7 and on ours with
// notify-keyspace-events KEA; the keyspace and keyevent notifications
// each publishes must be the same, in the same order.
var notifyScript = []string{
	"SET a 1", "SET a 2 NX", "SET a 3 EX 100", "SET a 3 XX PX 100000", "SETNX a 4", "SETNX b 4", "SETEX c 100 v", "PSETEX c2 100000 v",
	"MSET d 1 e 2", "MSETNX d 1 f 2", "MSETNX f 1 g 2", "GETSET d 5", "GETDEL e", "GETDEL e", "GETEX d EX 50", "GETEX d PERSIST", "GETEX d",
	"INCR n", "INCRBY n 5", "DECR n", "DECRBY n 2", "INCRBYFLOAT n 1.5", "APPEND a x", "SETRANGE a 1 zz", "SETRANGE a 1 ''",
	"SETBIT bits 3 1", "DEL a nokey b", "UNLINK f g", "EXPIRE c 100", "EXPIRE nokey 100", "PEXPIREAT c2 1", "EXPIRE c 0",
	"PERSIST d", "SET t 1 EX 100", "PERSIST t", "PERSIST t", "RENAME d d2", "RENAMENX d2 t", "RENAMENX d2 d3", "COPY d3 d4",
	"LPUSH l 1 2", "RPUSH l 3", "LPUSHX nol 1", "RPUSHX l 4", "LINSERT l BEFORE 3 x", "LSET l 0 y", "LREM l 1 zz", "LREM l 1 x",
	"LPOP l", "RPOP l 2", "LMOVE l l2 LEFT RIGHT", "RPOPLPUSH l2 l3", "LTRIM l3 0 -1", "LTRIM l3 1 0", "LPOP nol",
	"HSET h f 1 g 2", "HSET h f 1", "HSETNX h f 2", "HSETNX h k 2", "HDEL h f nof", "HDEL h nof", "HINCRBY h g 2", "HINCRBYFLOAT h g 0.5",
	"HDEL h g k",
	"SADD s a b c", "SADD s a", "SREM s a z", "SREM s z", "SMOVE s s2 c", "SMOVE s s2 nothere", "SPOP s", "SADD s3 x y", "SADD s4 y",
	"SINTERSTORE dst s3 s4", "SUNIONSTORE dst s3 s4", "SDIFFSTORE dst s4 s3", "SPOP s3 5",
	"ZADD z 1 a 2 b 3 c", "ZADD z 1 a", "ZADD z INCR 1 a", "ZINCRBY z 1 a", "ZREM z a", "ZREM z nope", "ZPOPMIN z", "ZPOPMAX nope",
	"ZADD z2 1 x 2 y 3 w", "ZREMRANGEBYSCORE z2 0 1", "ZREMRANGEBYRANK z2 0 0", "ZREMRANGEBYLEX z2 - +", "ZADD z3 1 q",
	"ZUNIONSTORE zd 2 z z3", "ZINTERSTORE zd 2 z z3", "ZRANGESTORE zr z3 0 -1",
	"XADD st 1-1 f v", "XADD st 1-2 f v", "XADD nostream NOMKSTREAM * f v", "XDEL st 1-1 9-9", "XDEL st 9-9", "XTRIM st MAXLEN 0",
	"XTRIM st MAXLEN 0", "XSETID st 5-0", "XGROUP CREATE st g $", "XGROUP CREATE st2 g $ MKSTREAM", "XGROUP SETID st g 0",
	"XGROUP CREATECONSUMER st g c1", "XGROUP CREATECONSUMER st g c1", "XGROUP DELCONSUMER st g c1", "XGROUP DESTROY st g",
	"XGROUP DESTROY st g", "XADD st MAXLEN 1 6-1 f v", "XADD st MAXLEN 5 6-2 f v", "XGROUP CREATE st g 0",
	"XREADGROUP GROUP g alice COUNT 1 STREAMS st >", "XREADGROUP GROUP g alice COUNT 1 STREAMS st >", "XCLAIM st g bob 0 6-1",
	"XAUTOCLAIM st g carol 0 0", "XACK st g 6-1", "DEL st st2",
	"MULTI", "SET m 1", "INCR m", "DEL m", "EXEC", "RPUSH ml 1", "MULTI", "LPOP ml", "EXEC",
	"EVAL redis.call('RPUSH',KEYS[1],'a');return(redis.call('LPOP',KEYS[1])) 1 el",
	"CONFIG SET notify-keyspace-events Elz", "SET quiet 1", "LPUSH ql 1", "ZADD qz 1 a", "CONFIG SET notify-keyspace-events KEA",
}

// notifyKeys are the script's keys, which get one hash tag so that its
// multi-key commands run (members and fields of the same names get it
// too, which changes nothing).
var notifyKeys = strings.Fields("a b c c2 d e f g n bits nokey t d2 d3 d4 l l2 l3 nol h s s2 s3 s4 dst z z2 z3 zd zr st st2 nostream m ml el quiet ql qz")

func TestKeyspaceNotificationsMatchRedis(t *testing.T) {
	redisAddr := startRedis(t)
	respAddr := serveStreams(t)
	events := func(addr string) []string {
		sub, cmd := dialRaw(t, addr), dialRaw(t, addr)
		require.Equal(t, "+OK\r\n", cmd.do(t, "CONFIG", "SET", "notify-keyspace-events", "KEA"))
		require.Equal(t, "*3\r\n$10\r\npsubscribe\r\n$10\r\n__key*__:*\r\n:1\r\n", sub.do(t, "PSUBSCRIBE", "__key*__:*"))
		for _, line := range notifyScript {
			args := strings.Fields(line)
			for i, a := range args {
				switch {
				case a == "''":
					args[i] = ""
				case slices.Contains(notifyKeys, a):
					args[i] = "{k}" + a
				}
			}
			cmd.do(t, args...)
		}
		cmd.do(t, "SET", "end", "1")
		var out []string
		for {
			// A pmessage frame: pattern, channel, message, one event a line.
			f := strings.Split(sub.next(t), "\r\n")
			require.Len(t, f, 10, "%q", f)
			out = append(out, f[6]+" "+f[8])
			if f[8] == "end" {
				return out
			}
		}
	}
	want := events(redisAddr)
	got := events(respAddr)
	if dump := os.Getenv("NOTIFY_DUMP"); dump != "" {
		require.NoError(t, os.WriteFile(dump+".redis", []byte(strings.Join(want, "\n")), 0o644))
		require.NoError(t, os.WriteFile(dump+".ours", []byte(strings.Join(got, "\n")), 0o644))
	}
	require.Equal(t, strings.Join(want, "\n"), strings.Join(got, "\n"))
}

// CONFIG GET and SET notify-keyspace-events answer as Redis's.
func TestNotifyKeyspaceEventsConfig(t *testing.T) {
	redisAddr := startRedis(t)
	respAddr := serveStreams(t)
	theirs, ours := dialRaw(t, redisAddr), dialRaw(t, respAddr)
	for _, v := range []string{"KEA", "Elg", "ndtexzhsl$gEK", "ndtexzhsl$EK", "m", "K", "gA", "KEAmn", "KA$lq", "", "Ex"} {
		require.Equal(t, theirs.do(t, "CONFIG", "SET", "notify-keyspace-events", v), ours.do(t, "CONFIG", "SET", "notify-keyspace-events", v), v)
		require.Equal(t, theirs.do(t, "CONFIG", "GET", "notify-keyspace-events"), ours.do(t, "CONFIG", "GET", "notify-keyspace-events"), v)
	}
}

// A key whose TTL runs out publishes expired once the expiry sweep
// deletes it, in its own database's channel.
func TestExpiredEvents(t *testing.T) {
	respAddr := serveStreams(t)
	sub, cmd := dialRaw(t, respAddr), dialRaw(t, respAddr)
	require.Equal(t, "+OK\r\n", cmd.do(t, "CONFIG", "SET", "notify-keyspace-events", "Ex"))
	sub.do(t, "PSUBSCRIBE", "__keyevent@*__:expired")
	require.Equal(t, "+OK\r\n", cmd.do(t, "SET", "brief", "v", "PX", "50"))
	require.Equal(t, "+OK\r\n", cmd.do(t, "SELECT", "3"))
	require.Equal(t, "+OK\r\n", cmd.do(t, "SET", "brief3", "v", "PX", "50"))
	require.Equal(t, "+OK\r\n", cmd.do(t, "SET", "lasting", "v", "EX", "100"))
	got := map[string]bool{}
	for len(got) < 2 {
		f := strings.Split(sub.next(t), "\r\n")
		require.Len(t, f, 10, "%q", f)
		got[f[6]+" "+f[8]] = true
	}
	require.Equal(t, map[string]bool{"__keyevent@0__:expired brief": true, "__keyevent@3__:expired brief3": true}, got)
}

// Writes over HTTP publish the same events as over RESP: the engine
// calls the hook whatever the surface.
func TestHTTPWritesNotify(t *testing.T) {
	respAddr, httpAddr := servertest.FreeAddr(t), servertest.FreeAddr(t)
	srv := servertest.Start(t, buildServer(t), "--data", t.TempDir(), "--resp", respAddr, "--http", httpAddr, "--s3", "",
		"--notify-keyspace-events", "KE$g")
	t.Cleanup(func() { srv.Stop() })
	sub := dialRaw(t, respAddr)
	sub.do(t, "PSUBSCRIBE", "__key*__:*")
	res, err := http.Post("http://"+httpAddr+"/execute", "application/json",
		strings.NewReader(`{"command":{"kind":"string_set","key":"fromhttp","value":[118]}}`))
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode, string(body))
	var got []string
	for range 2 {
		f := strings.Split(sub.next(t), "\r\n")
		require.Len(t, f, 10, "%q", f)
		got = append(got, f[6]+" "+f[8])
	}
	require.Equal(t, []string{"__keyspace@0__:fromhttp set", "__keyevent@0__:set fromhttp"}, got)

	// Pipelined SETs, which the server writes as one run, and a DEL of
	// two keys and a missing one publish as Redis does.
	cmd := dialRaw(t, respAddr)
	cmd.send(t, "SET", "{p}1", "v")
	cmd.send(t, "SET", "{p}2", "v")
	cmd.send(t, "DEL", "{p}1", "{p}none", "{p}2")
	for _, want := range []string{"+OK\r\n", "+OK\r\n", ":2\r\n"} {
		require.Equal(t, want, cmd.next(t))
	}
	got = got[:0]
	for range 8 {
		f := strings.Split(sub.next(t), "\r\n")
		require.Len(t, f, 10, "%q", f)
		got = append(got, f[6]+" "+f[8])
	}
	require.Equal(t, []string{"__keyspace@0__:{p}1 set", "__keyevent@0__:set {p}1", "__keyspace@0__:{p}2 set", "__keyevent@0__:set {p}2",
		"__keyspace@0__:{p}1 del", "__keyevent@0__:del {p}1", "__keyspace@0__:{p}2 del", "__keyevent@0__:del {p}2"}, got)
}
