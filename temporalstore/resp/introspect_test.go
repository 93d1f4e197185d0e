package resp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testredis"
)

// The same steps on both servers give the same replies, errors word for
// word: CONFIG's accepted and ignored parameters, OBJECT's encodings as
// the thresholds move, MEMORY and DEBUG's safe subset, CLIENT's modes.
func TestIntrospectionMatchesRedis(t *testing.T) {
	addr, _ := start(t, Options{})
	ref := testredis.Start(t)
	ctx := t.Context()
	ours := client(t, addr, 2)
	theirs := redis.NewClient(&redis.Options{Addr: ref.Options().Addr, Protocol: 2})
	defer theirs.Close()
	steps := [][]any{
		{"CONFIG", "SET", "hash-max-listpack-value", "1mb"},
		{"CONFIG", "GET", "hash-max-listpack-value"},
		{"CONFIG", "SET", "hash-max-listpack-value", "-1"},
		{"CONFIG", "SET", "hash-max-ziplist-value", "65"},
		{"CONFIG", "GET", "hash-max-ziplist-value"},
		{"CONFIG", "SET", "list-max-ziplist-size", "99999999999"},
		{"CONFIG", "SET", "hz", "0"},
		{"CONFIG", "GET", "hz"},
		{"CONFIG", "SET", "hz", "abc"},
		{"CONFIG", "SET", "activerehashing", "maybe"},
		{"CONFIG", "SET", "maxmemory-policy", "foo"},
		{"CONFIG", "SET", "set-max-intset-entries", "1k"},
		{"CONFIG", "SET", "lfu-log-factor", "-1"},
		{"CONFIG", "SET", "stream-node-max-bytes", "4kb"},
		{"CONFIG", "GET", "stream-node-max-bytes"},
		{"CONFIG", "GET", "zset-max-*"},
		{"CONFIG", "SET", "zset-max-ziplist-entries", "2", "hash-max-listpack-entries", "3"},
		{"CONFIG", "SET", "hash-max-listpack-value", "64", "hash-max-listpack-value", "65"},
		{"CONFIG", "SET", "maxmemory-policy", "ALLKEYS-LRU"},
		{"CONFIG", "GET", "maxmemory-policy"},
		{"SET", "obj:int", "12345"},
		{"OBJECT", "ENCODING", "obj:int"},
		{"OBJECT", "REFCOUNT", "obj:int"},
		{"SET", "obj:small", "hello"},
		{"OBJECT", "ENCODING", "obj:small"},
		{"SET", "obj:big", "0123456789012345678901234567890123456789012345678901234567890"},
		{"OBJECT", "ENCODING", "obj:big"},
		{"OBJECT", "ENCODING", "obj:none"},
		{"HSET", "obj:h", "a", "1", "b", "2", "c", "3"},
		{"OBJECT", "ENCODING", "obj:h"},
		{"HSET", "obj:h2", "a", "1", "b", "2", "c", "3", "d", "4"},
		{"OBJECT", "ENCODING", "obj:h2"},
		{"ZADD", "obj:z", "1", "a", "2", "b"},
		{"OBJECT", "ENCODING", "obj:z"},
		{"ZADD", "obj:z2", "1", "a", "2", "b", "3", "c"},
		{"OBJECT", "ENCODING", "obj:z2"},
		{"SADD", "obj:s", "1", "2", "3"},
		{"OBJECT", "ENCODING", "obj:s"},
		{"SADD", "obj:s2", "1", "x"},
		{"OBJECT", "ENCODING", "obj:s2"},
		{"RPUSH", "obj:l", "a"},
		{"OBJECT", "ENCODING", "obj:l"},
		{"OBJECT", "FREQ", "obj:l"},
		{"OBJECT", "IDLETIME", "obj:none"},
		{"OBJECT", "NOSUCH", "obj:l"},
		{"OBJECT", "ENCODING"},
		{"MEMORY", "USAGE", "obj:none"},
		{"MEMORY", "USAGE", "obj:l", "SAMPLES"},
		{"MEMORY", "USAGE", "obj:l", "SAMPLES", "-1"},
		{"MEMORY", "NOSUCH"},
		{"CLIENT", "NO-EVICT", "on"},
		{"CLIENT", "NO-EVICT", "maybe"},
	}
	for i, args := range steps {
		want, werr := theirs.Do(ctx, args...).Result()
		got, gerr := ours.Do(ctx, args...).Result()
		where := fmt.Sprintf("step %d: %v", i, args)
		if werr != nil && !errors.Is(werr, redis.Nil) {
			require.Error(t, gerr, where)
			require.Equal(t, werr.Error(), gerr.Error(), where)
			continue
		}
		require.Equal(t, werr, gerr, where)
		if args[0] == "CONFIG" && args[1] == "GET" {
			// Redis lists the pairs in its hash table's order.
			want, got = pairs(want), pairs(got)
		}
		require.Equal(t, want, got, where)
	}
	n, err := ours.MemoryUsage(ctx, "obj:h2").Result()
	require.NoError(t, err)
	require.Greater(t, n, int64(8))
	// DEBUG, which redis-server 7 refuses unless enable-debug-command is
	// set, serves its safe subset here.
	start := time.Now()
	require.Equal(t, "OK", ours.Do(ctx, "DEBUG", "SLEEP", "0.05").Val())
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
	require.Contains(t, ours.Do(ctx, "DEBUG", "OBJECT", "obj:h2").Val(), "encoding:hashtable")
	require.EqualError(t, ours.Do(ctx, "DEBUG", "OBJECT", "obj:none").Err(), "ERR no such key")
	require.Equal(t, "OK", ours.Do(ctx, "DEBUG", "RELOAD").Val())
	require.EqualError(t, ours.Do(ctx, "DEBUG", "SEGFAULT").Err(), "ERR unknown subcommand or wrong number of arguments for 'SEGFAULT'. Try DEBUG HELP.")
}

// CLIENT REPLY OFF and SKIP drop replies as Redis does, byte for byte.
func TestClientReplyMatchesRedis(t *testing.T) {
	addr, _ := start(t, Options{})
	ref := testredis.Start(t)
	script := "CLIENT REPLY SKIP\r\nSET r:a 1\r\nGET r:a\r\nCLIENT REPLY OFF\r\nSET r:b 2\r\nGET r:b\r\nCLIENT REPLY SKIP\r\nCLIENT REPLY ON\r\nGET r:b\r\nPING\r\n"
	raw := func(addr string) []byte {
		nc, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer nc.Close()
		require.NoError(t, nc.SetDeadline(time.Now().Add(5*time.Second)))
		_, err = nc.Write([]byte(script))
		require.NoError(t, err)
		var out []byte
		br := bufio.NewReader(nc)
		for !bytes.HasSuffix(out, []byte("+PONG\r\n")) {
			line, err := br.ReadBytes('\n')
			require.NoError(t, err, "read so far: %q", out)
			out = append(out, line...)
		}
		return out
	}
	want := raw(ref.Options().Addr)
	require.Equal(t, "$1\r\n1\r\n+OK\r\n$1\r\n2\r\n+PONG\r\n", string(want))
	require.Equal(t, string(want), string(raw(addr)))
}

// pairs is a flat array of name, value pairs as a map.
func pairs(v any) map[any]any {
	a, _ := v.([]any)
	m := map[any]any{}
	for i := 0; i+1 < len(a); i += 2 {
		m[a[i]] = a[i+1]
	}
	return m
}
