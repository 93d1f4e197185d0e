package resp

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
)

// counters is a verb set another module might add: X.INCR key adds one to
// a counter of its own, X.GET key reads it (a map in RESP3).
type counters struct {
	mu sync.Mutex
	n  map[string]int64
}

func (x *counters) commands() []Command {
	return []Command{
		{Name: "X.INCR", Arity: 2, Write: true, FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "x", Summary: "Adds one to a counter.",
			Run: func(r *Request) {
				x.mu.Lock()
				defer x.mu.Unlock()
				x.n[string(r.Args[1])]++
				r.Reply().Int(x.n[string(r.Args[1])])
			}},
		{Name: "x.get", Arity: 2, FirstKey: 1, LastKey: 1, KeyStep: 1,
			Run: func(r *Request) {
				x.mu.Lock()
				defer x.mu.Unlock()
				n, ok := x.n[string(r.Args[1])]
				w := r.Reply()
				switch {
				case !ok:
					w.Error("ERR no such counter")
				case r.Protocol() == 3:
					w.Map(1)
					w.Bulk(r.Args[1])
					w.Int(n)
				default:
					w.Array(2)
					w.Bulk(bytes.ToUpper(r.Args[1]))
					w.Int(n)
				}
			}},
	}
}

// A verb added through Options.Commands is served like a built-in one:
// its replies, arity, read-only tokens, MULTI, COMMAND and commandstats.
func TestAddedCommands(t *testing.T) {
	x := &counters{n: map[string]int64{}}
	s, addr := startServer(t, Options{Tokens: []string{"rw"}, ReadOnlyTokens: []string{"ro"}, Commands: x.commands()})
	ctx := t.Context()
	rw := redis.NewClient(&redis.Options{Addr: addr, Password: "rw", Protocol: 2})
	defer rw.Close()
	require.Equal(t, int64(1), rw.Do(ctx, "x.incr", "a").Val())
	require.Equal(t, int64(2), rw.Do(ctx, "X.INCR", "a").Val())
	require.Equal(t, []any{"A", int64(2)}, rw.Do(ctx, "x.get", "a").Val())
	require.EqualError(t, rw.Do(ctx, "x.get", "b").Err(), "ERR no such counter")
	require.EqualError(t, rw.Do(ctx, "x.incr").Err(), "ERR wrong number of arguments for 'x.incr' command")

	r3 := redis.NewClient(&redis.Options{Addr: addr, Password: "rw", Protocol: 3})
	defer r3.Close()
	require.Equal(t, map[any]any{"a": int64(2)}, r3.Do(ctx, "x.get", "a").Val())

	ro := redis.NewClient(&redis.Options{Addr: addr, Password: "ro", Protocol: 2})
	defer ro.Close()
	require.ErrorContains(t, ro.Do(ctx, "x.incr", "a").Err(), "NOPERM")
	require.Equal(t, []any{"A", int64(2)}, ro.Do(ctx, "x.get", "a").Val(), "a read is allowed")

	cmds, err := rw.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "x.incr", "a")
		p.Set(ctx, "k", "v", 0)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, int64(3), cmds[0].(*redis.Cmd).Val(), "queued and run by EXEC")

	info, err := rw.Command(ctx).Result()
	require.NoError(t, err)
	require.Equal(t, int8(2), info["x.incr"].Arity)
	require.Equal(t, int8(1), info["x.incr"].FirstKeyPos)
	require.Contains(t, info["x.incr"].Flags, "write")
	require.Contains(t, rw.Do(ctx, "command", "docs", "x.incr").String(), "Adds one to a counter.")
	st := s.CommandStat("x.incr")
	require.Equal(t, uint64(3), st.Calls, "two calls and one in EXEC")
	require.Equal(t, uint64(2), st.Rejected, "the wrong arity and the read-only token")
	stats := rw.Info(ctx, "commandstats").Val()
	require.True(t, strings.Contains(stats, "cmdstat_x.incr:calls="), stats)
	require.Equal(t, int64(len(Commands())+2), rw.Do(ctx, "command", "count").Val())
}

// A name already served, or an added command without a handler, is
// refused when the server is made.
func TestAddedCommandsRefused(t *testing.T) {
	e, err := local.Open(t.Context(), temporalstore.Options{Dir: t.TempDir(), MaintenanceInterval: temporalstore.Disabled})
	require.NoError(t, err)
	defer e.Close()
	run := func(*Request) {}
	for _, c := range []Command{
		{Name: "GET", Arity: 2, Run: run},
		{Name: "", Arity: 1, Run: run},
		{Name: "x.none", Arity: 1},
		{Name: "x.zero", Run: run},
	} {
		_, err := New(Options{Engine: e, Commands: []Command{c}})
		require.ErrorIs(t, err, ErrInvalidOptions, c.Name)
	}
	_, err = New(Options{Engine: e, Commands: []Command{{Name: "x.a", Arity: 1, Run: run}, {Name: "X.A", Arity: 1, Run: run}}})
	require.ErrorIs(t, err, ErrInvalidOptions, "twice")
}

// A verb with RunMany gets a pipeline's consecutive calls together
// (replies in order, one per call), and each call alone otherwise: after
// another verb, inside MULTI, or when the token may not write.
func TestAddedCommandRunMany(t *testing.T) {
	var mu sync.Mutex
	var runs []int
	one := func(r *Request) {
		mu.Lock()
		runs = append(runs, 1)
		mu.Unlock()
		r.Reply().Bulk(r.Args[1])
	}
	many := func(rs []*Request) {
		mu.Lock()
		runs = append(runs, len(rs))
		mu.Unlock()
		for _, r := range rs {
			r.Reply().Bulk(r.Args[1])
		}
	}
	_, addr := startServer(t, Options{Tokens: []string{"rw"}, ReadOnlyTokens: []string{"ro"},
		Commands: []Command{{Name: "echoback", Arity: 2, Write: true, Run: one, RunMany: many}}})
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	br := bufio.NewReader(c)
	req := func(args ...string) string {
		s := fmt.Sprintf("*%d\r\n", len(args))
		for _, a := range args {
			s += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
		}
		return s
	}
	readN := func(n int) []string {
		var out []string
		for range n {
			require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
			line, err := br.ReadString('\n')
			require.NoError(t, err)
			if line[0] == '$' {
				v, err := br.ReadString('\n')
				require.NoError(t, err)
				line += v
			}
			out = append(out, line)
		}
		return out
	}
	_, err = c.Write([]byte(req("AUTH", "rw")))
	require.NoError(t, err)
	readN(1)
	pipeline := req("echoback", "a") + req("echoback", "b") + req("echoback", "c") + req("ping") + req("echoback", "d") + req("echoback", "e") +
		req("echoback") + req("multi") + req("echoback", "f") + req("echoback", "g") + req("exec")
	_, err = c.Write([]byte(pipeline))
	require.NoError(t, err)
	got := readN(13)
	require.Equal(t, []string{"$1\r\na\r\n", "$1\r\nb\r\n", "$1\r\nc\r\n", "+PONG\r\n", "$1\r\nd\r\n", "$1\r\ne\r\n",
		"-ERR wrong number of arguments for 'echoback' command\r\n", "+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "*2\r\n", "$1\r\nf\r\n", "$1\r\ng\r\n"}, got)
	mu.Lock()
	require.Equal(t, []int{3, 2, 1, 1}, runs, "a, b, c together; d, e together; f and g by EXEC one by one")
	mu.Unlock()
}
