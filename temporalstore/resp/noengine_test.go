package resp

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// startBare serves opts without an engine and returns the server and its
// address.
func startBare(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	require.Nil(t, opts.Engine)
	s, err := New(opts)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		require.NoError(t, s.Close())
		require.ErrorIs(t, <-done, ErrClosed)
	})
	return s, l.Addr().String()
}

// A server without an engine serves the connection's and the server's
// own verbs and the added ones; every other verb is unknown, as Redis
// answers one it lacks, pipelined GETs and SETs included.
func TestServeWithoutEngine(t *testing.T) {
	var kv sync.Map
	size := func() int64 {
		n := int64(0)
		kv.Range(func(any, any) bool { n++; return true })
		return n
	}
	cmds := []Command{
		{Name: "kset", Arity: 3, Write: true, FirstKey: 1, LastKey: 1, KeyStep: 1, Run: func(r *Request) {
			kv.Store(string(r.Args[1]), string(r.Args[2]))
			r.Reply().OK()
		}},
		{Name: "kget", Arity: 2, FirstKey: 1, LastKey: 1, KeyStep: 1, Run: func(r *Request) {
			v, _ := kv.Load(string(r.Args[1]))
			r.Reply().Bulk([]byte(v.(string)))
		}},
		// A verb the engine's server has built in is free to add here.
		{Name: "dbsize", Arity: 1, Run: func(r *Request) { r.Reply().Int(size()) }},
	}
	s, addr := startBare(t, Options{Commands: cmds})
	ctx := t.Context()
	for _, proto := range []int{2, 3} {
		c := client(t, addr, proto)
		require.NoError(t, c.Ping(ctx).Err())
		require.Equal(t, "hi", c.Echo(ctx, "hi").Val())
		require.NoError(t, c.Do(ctx, "kset", "a", "1").Err())
		require.Equal(t, "1", c.Do(ctx, "kget", "a").Val())
		require.Equal(t, size(), c.DBSize(ctx).Val())
		id, err := c.ClientID(ctx).Result()
		require.NoError(t, err)
		require.Positive(t, id)
		require.NoError(t, c.Do(ctx, "select", "0").Err())
		require.EqualError(t, c.Do(ctx, "select", "1").Err(), "ERR DB index is out of range")
		cfg, err := c.ConfigGet(ctx, "databases").Result()
		require.NoError(t, err)
		require.Equal(t, map[string]string{"databases": "1"}, cfg)
		_, err = c.Time(ctx).Result()
		require.NoError(t, err)
		info, err := c.Info(ctx, "everything").Result()
		require.NoError(t, err)
		require.Contains(t, info, "# Server")
		require.Contains(t, info, "cmdstat_kset:calls=")
		require.NotContains(t, info, "engine_")
		require.NotContains(t, info, "table:")
		require.NotContains(t, info, "db0:")
		// MULTI/EXEC runs the queued commands in order.
		cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Do(ctx, "kset", "b", "2")
			p.Do(ctx, "kget", "b")
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, "2", cmds[1].(*redis.Cmd).Val())
		for _, verb := range [][]any{{"get", "a"}, {"set", "a", "1"}, {"dbsize", "x"}, {"watch", "a"}, {"del", "a"},
			{"flushall"}, {"eval", "return 1", "0"}, {"save"}, {"hset", "h", "f", "v"}} {
			err := c.Do(ctx, verb...).Err()
			require.Error(t, err, "%v", verb)
			if verb[0] != "dbsize" {
				require.True(t, strings.HasPrefix(err.Error(), "ERR unknown command '"+verb[0].(string)+"', with args beginning with:"), "%v: %v", verb, err)
			}
		}
	}
	// COMMAND lists what is served: the engine-free built-ins and the
	// added verbs.
	c := client(t, addr, 2)
	n, err := c.Do(ctx, "command", "count").Int()
	require.NoError(t, err)
	require.Equal(t, len(engineFree)+len(cmds), n)
	docs, err := c.Do(ctx, "command", "info", "get", "kget").Slice()
	require.NoError(t, err)
	require.Nil(t, docs[0])
	require.NotNil(t, docs[1])

	// Pipelined GETs and SETs, which the engine's server gathers into
	// runs, are unknown commands too, each answered in order.
	raw, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer raw.Close()
	_, err = raw.Write([]byte("*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nw\r\n*2\r\n$3\r\nget\r\n$1\r\nk\r\n*2\r\n$3\r\nget\r\n$1\r\nk\r\n*1\r\n$4\r\nping\r\n"))
	require.NoError(t, err)
	raw.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(raw)
	var lines []string
	for range 5 {
		l, err := br.ReadString('\n')
		require.NoError(t, err)
		lines = append(lines, l)
	}
	require.Equal(t, []string{
		"-ERR unknown command 'set', with args beginning with: 'k' 'v' \r\n",
		"-ERR unknown command 'set', with args beginning with: 'k' 'w' \r\n",
		"-ERR unknown command 'get', with args beginning with: 'k' \r\n",
		"-ERR unknown command 'get', with args beginning with: 'k' \r\n",
		"+PONG\r\n"}, lines)
	require.Positive(t, s.Stats().ErrorReplies)
	require.Zero(t, s.Stats().Panics)
}

// Without an engine there is one database; more is refused.
func TestWithoutEngineDatabases(t *testing.T) {
	cases := []struct {
		databases int
		ok        bool
	}{{0, true}, {1, true}, {2, false}, {-1, false}}
	for _, tc := range cases {
		_, err := New(Options{Databases: tc.databases})
		if tc.ok {
			require.NoError(t, err, "%d", tc.databases)
		} else {
			require.ErrorIs(t, err, ErrInvalidOptions, "%d", tc.databases)
		}
	}
}
