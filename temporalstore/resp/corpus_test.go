package resp

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testredis"
)

var updateCorpus = flag.Bool("update", false, "rewrite testdata/redis_corpus.txt from genArgs")

// corpusFile is a fixed run of genArgs's commands, one redis-cli line
// each, that every client suite replays against our server and
// redis-server: redis-cli here, redis-py in tools/respcompat.
const corpusFile = "testdata/redis_corpus.txt"

// corpusUnordered are commands whose replies depend on the clock or on an
// order Redis leaves open, which a client's text cannot normalize; the
// go-redis comparison (TestRepliesMatchRedis) checks them.
var corpusUnordered = map[string]bool{
	"ttl": true, "pttl": true, "expiretime": true, "pexpiretime": true,
	"srandmember": true, "hscan": true, "sscan": true, "zscan": true,
	"smembers": true, "sinter": true, "sunion": true, "sdiff": true,
	"hkeys": true, "hvals": true, "hgetall": true, "keys": true,
	"hrandfield": true, "zrandmember": true, "randomkey": true,
}

// corpus returns the corpus's lines as genArgs draws them.
func corpus() string {
	rng := rand.New(rand.NewPCG(7, 8))
	var b strings.Builder
	for n := 0; n < 1500; {
		args := genArgs(rng)
		if corpusUnordered[strings.ToLower(fmt.Sprint(args[0]))] {
			continue
		}
		for i, a := range args {
			if i > 0 {
				b.WriteByte(' ')
			}
			s := fmt.Sprint(a)
			if i == 0 {
				b.WriteString(s)
				continue
			}
			b.WriteString(`"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`)
		}
		b.WriteByte('\n')
		n++
	}
	return b.String()
}

// The committed corpus is genArgs's: go test -run TestRedisCorpus -update
// rewrites it after a change to genArgs.
func TestRedisCorpusUpToDate(t *testing.T) {
	want := corpus()
	if *updateCorpus {
		require.NoError(t, os.WriteFile(corpusFile, []byte(want), 0o644))
	}
	got, err := os.ReadFile(corpusFile)
	require.NoError(t, err)
	require.Equal(t, want, string(got), "run: go test -run TestRedisCorpus -update ./temporalstore/resp")
}

// redisCLIOutput runs the corpus through redis-cli against addr and returns
// its lines, an error reply reduced to its code (the wording is Redis's
// own; TestRepliesMatchRedis compares codes too).
func redisCLIOutput(t *testing.T, cli, addr string) []string {
	host, port, _ := net.SplitHostPort(addr)
	f, err := os.Open(corpusFile)
	require.NoError(t, err)
	defer f.Close()
	cmd := exec.CommandContext(t.Context(), cli, "-h", host, "-p", port, "--no-raw")
	cmd.Stdin = f
	out, err := cmd.Output()
	require.NoError(t, err)
	lines := strings.Split(string(bytes.TrimSpace(out)), "\n")
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, "(error) "); ok {
			code, _, _ := strings.Cut(rest, " ")
			lines[i] = "(error) " + code
		}
	}
	return lines
}

// redis-cli, the real binary, prints the same replies from our server as
// from redis-server for every command of the corpus, in order.
func TestRedisCLIMatchesRedis(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("redis-cli is not installed (make deps): %v", err)
	}
	addr, _ := start(t, Options{})
	ref := testredis.Start(t)
	want := redisCLIOutput(t, cli, ref.Options().Addr)
	got := redisCLIOutput(t, cli, addr)
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			lo := max(0, i-5)
			t.Fatalf("line %d differs: redis-server %q, ours %q\nredis-server:\n%s\nours:\n%s", i, want[i], got[i],
				strings.Join(want[lo:i+1], "\n"), strings.Join(got[lo:i+1], "\n"))
		}
	}
	require.Len(t, got, len(want))
}

// redis-cli runs the steps of TestEveryCommand (those that need no
// connection state) as a user would type them: each succeeds or fails as
// go-redis saw it.
func TestEveryCommandRedisCLI(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("redis-cli is not installed (make deps): %v", err)
	}
	addr, _ := start(t, Options{})
	host, port, _ := net.SplitHostPort(addr)
	cases := everyCommandCases()
	n := 0
	for _, name := range sortedKeys(cases) {
		if name == "multi" || name == "watch" || name == "exec" || name == "discard" || name == "client" {
			continue // connection state: one redis-cli call is one connection
		}
		for i, st := range cases[name] {
			args := []string{"-h", host, "-p", port, "--no-raw"}
			for _, a := range st.args {
				args = append(args, fmt.Sprint(a))
			}
			out, err := exec.CommandContext(t.Context(), cli, args...).Output()
			require.NoError(t, err)
			got := strings.TrimSpace(string(out))
			where := fmt.Sprintf("%s, step %d: %v: %q", name, i, st.args, got)
			switch {
			case st.err != "":
				require.True(t, strings.HasPrefix(got, "(error) "+st.err), where)
			case st.want == nil:
				require.Equal(t, "(nil)", got, where)
			default:
				require.False(t, strings.HasPrefix(got, "(error)"), where)
			}
			n++
		}
	}
	require.Greater(t, n, 150)
}
