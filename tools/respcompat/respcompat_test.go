package respcompat

import (
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/ferricstore"
	"github.com/temporalstore/temporalstore-go/ferricstore/commands"
	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
	"github.com/temporalstore/temporalstore-go/temporalstore/resp"
	"github.com/temporalstore/temporalstore-go/tools/pyvenv"
)

// redisPyVersion is the redis-py release the test installs from PyPI.
const redisPyVersion = "8.1.0"

func startServer(t *testing.T, opts resp.Options) string {
	e, err := local.Open(t.Context(), temporalstore.Options{Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	opts.Engine = e
	s, err := resp.New(opts)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go s.Serve(l)
	t.Cleanup(func() {
		s.Close()
		e.Close()
	})
	return l.Addr().String()
}

// TestRedisPy runs the redis-py script in RESP2 and RESP3, with and
// without a password.
func TestRedisPy(t *testing.T) {
	py := pyvenv.Python(t, "redispy", "redis=="+redisPyVersion)
	for _, tc := range []struct {
		name     string
		opts     resp.Options
		password string
	}{
		{"open", resp.Options{}, ""},
		{"auth", resp.Options{Tokens: []string{"s3cret"}}, "s3cret"},
	} {
		addr := startServer(t, tc.opts)
		host, port, _ := net.SplitHostPort(addr)
		for _, proto := range []string{"2", "3"} {
			t.Run(fmt.Sprint(tc.name, "/resp", proto), func(t *testing.T) {
				args := []string{"testdata/redispy_check.py", host, port, proto}
				if tc.password != "" {
					args = append(args, tc.password)
				}
				out, err := exec.CommandContext(t.Context(), py, args...).CombinedOutput()
				require.NoError(t, err, string(out))
				require.True(t, strings.HasSuffix(strings.TrimSpace(string(out)), "redis-py ok"), string(out))
			})
		}
	}
}

// startRedis runs a redis-server with no persistence on a free loopback
// port for the length of the test and returns the port.
func startRedis(t *testing.T) int {
	bin, err := exec.LookPath("redis-server")
	require.NoError(t, err, "redis-server is not installed (make deps)")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", l.Addr().String())
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)
	return port
}

// redisCorpus is the resp package's corpus of commands (genArgs's draw),
// which its redis-cli test replays too.
const redisCorpus = "../../temporalstore/resp/testdata/redis_corpus.txt"

// TestRedisPyCorpusMatchesRedis replays the corpus through redis-py on our
// server and on redis-server, in RESP2 and RESP3, and requires the same
// result for every command.
func TestRedisPyCorpusMatchesRedis(t *testing.T) {
	py := pyvenv.Python(t, "redispy", "redis=="+redisPyVersion)
	redisPort := startRedis(t)
	addr := startServer(t, resp.Options{})
	_, port, _ := net.SplitHostPort(addr)
	for _, proto := range []string{"2", "3"} {
		t.Run("resp"+proto, func(t *testing.T) {
			out, err := exec.CommandContext(t.Context(), py, "testdata/redispy_corpus.py", redisCorpus, port, strconv.Itoa(redisPort), proto).CombinedOutput()
			require.NoError(t, err, string(out))
			require.Contains(t, string(out), "redis-py corpus ok 1500")
		})
	}
}

// TestRedisPyNewVerbsMatchRedis runs redis-py's own methods for scripts
// (register_script, evalsha, function_load, fcall), HyperLogLog,
// numbered databases (db=3, move, swapdb) and OBJECT/CONFIG on our server
// and on redis-server, in RESP2 and RESP3, and requires the same results.
func TestRedisPyNewVerbsMatchRedis(t *testing.T) {
	py := pyvenv.Python(t, "redispy", "redis=="+redisPyVersion)
	redisPort := startRedis(t)
	addr := startServer(t, resp.Options{})
	_, port, _ := net.SplitHostPort(addr)
	for _, proto := range []string{"2", "3"} {
		t.Run("resp"+proto, func(t *testing.T) {
			out, err := exec.CommandContext(t.Context(), py, "testdata/redispy_newverbs.py", port, strconv.Itoa(redisPort), proto).CombinedOutput()
			require.NoError(t, err, string(out))
			require.Contains(t, string(out), "redis-py new verbs ok")
		})
	}
}

// TestRedisPyStreamsMatchRedis runs redis-py's stream methods on our
// server, with ferricstore's verbs mounted as examples/server mounts
// them, and on redis-server, in RESP2 and RESP3.
func TestRedisPyStreamsMatchRedis(t *testing.T) {
	py := pyvenv.Python(t, "redispy", "redis=="+redisPyVersion)
	redisPort := startRedis(t)
	st, err := ferricstore.Open(ferricstore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	var cmds []resp.Command
	for _, c := range commands.Commands(st) {
		run := c.Run
		cmds = append(cmds, resp.Command{Name: c.Name, Arity: c.Arity, Write: c.Write, FirstKey: c.FirstKey, LastKey: c.LastKey,
			KeyStep: c.KeyStep, Run: func(r *resp.Request) {
				run(r.Context(), commands.Call{Args: r.Args, Protocol: r.Protocol(), NoBlock: !r.MayBlock()}, r.Reply())
			}})
	}
	addr := startServer(t, resp.Options{Commands: cmds})
	_, port, _ := net.SplitHostPort(addr)
	for _, proto := range []string{"2", "3"} {
		t.Run("resp"+proto, func(t *testing.T) {
			out, err := exec.CommandContext(t.Context(), py, "testdata/redispy_streams.py", port, strconv.Itoa(redisPort), proto).CombinedOutput()
			require.NoError(t, err, string(out))
			require.Contains(t, string(out), "redis-py streams ok")
		})
	}
}
