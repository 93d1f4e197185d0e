package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
)

// serverBin is the example server, built once by TestMain for every test.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tsctl-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "server")
	out, err := exec.Command("go", "build", "-o", serverBin, "../server").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the server: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testServer is a running server and the addresses tsctl reaches it at.
type testServer struct {
	*servertest.Server
	data, resp, http, s3 string
}

// startServer starts the server on data with RESP, HTTP and S3 listeners
// and backups to its own S3 API's bucket "backups" with --backup-to s3.
func startServer(t *testing.T, data string) *testServer {
	t.Helper()
	s := &testServer{data: data, resp: servertest.FreeAddr(t), http: servertest.FreeAddr(t), s3: servertest.FreeAddr(t)}
	s.Server = servertest.Start(t, serverBin, "--data", data, "--resp", s.resp, "--http", s.http, "--s3", s.s3,
		"--backup-s3-endpoint", "http://"+s.s3, "--backup-s3-bucket", "backups")
	return s
}

// result is one run of tsctl.
type result struct {
	code           int
	stdout, stderr string
}

// tsctl runs the command line args in process, with an empty environment
// and stdin as its input.
func tsctl(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, strings.NewReader(stdin), &stdout, &stderr, func(string) string { return "" })
	return result{code, stdout.String(), stderr.String()}
}

// ok runs tsctl and requires it to succeed.
func ok(t *testing.T, args ...string) result {
	t.Helper()
	r := tsctl(t, "", args...)
	require.Equal(t, 0, r.code, "tsctl %v\nstdout: %s\nstderr: %s", args, r.stdout, r.stderr)
	return r
}

// jsonDoc parses r's stdout as exactly one JSON document.
func jsonDoc(t *testing.T, r result) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var m map[string]any
	require.NoError(t, dec.Decode(&m), "stdout: %s", r.stdout)
	require.False(t, dec.More(), "one document: %s", r.stdout)
	return m
}

func (s *testServer) args(args ...string) []string {
	return append([]string{"--resp", s.resp, "--http", s.http, "--data", s.data}, args...)
}

func (s *testServer) client(t *testing.T) *redis.Client {
	t.Helper()
	rc := redis.NewClient(&redis.Options{Addr: s.resp})
	t.Cleanup(func() { rc.Close() })
	return rc
}

// binaryStrings are byte strings that are not UTF-8 text, or hard for JSON.
var binaryStrings = []string{"\x00", "a\x00b", "\xff\xfe\xfd", "\xc3\x28", "\xed\xa0\x80", "tab\tquote\"back\\slash", "<&>\u2028"}

// fill writes keys of every type export knows, binary ones among them,
// some with TTLs.
// largeValue is over the server's large-value threshold (1 MiB).
var largeValue = strings.Repeat("large value \xff\x00 ", 100_000)

func fill(t *testing.T, rc *redis.Client) {
	t.Helper()
	ctx := t.Context()
	p := rc.Pipeline()
	for i, b := range binaryStrings {
		p.Set(ctx, fmt.Sprintf("bin:%d", i), b, 0)
		p.Set(ctx, "key:"+b, "value "+b, 0)
	}
	p.Set(ctx, "plain", "hello", 0)
	p.Set(ctx, "empty", "", 0)
	p.Set(ctx, "large", largeValue, 0) // pipelined, yet in a file of its own
	p.Set(ctx, "ttl:string", "expires", time.Hour)
	p.HSet(ctx, "hash", "f1", "v1", "\x00f", "\xffv", "empty", "")
	p.HSet(ctx, "ttl:hash", "a", "b")
	p.PExpire(ctx, "ttl:hash", 2*time.Hour)
	p.SAdd(ctx, "set", "a", "\xfe", "\x00")
	p.ZAdd(ctx, "zset", redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: math.Inf(-1), Member: "low"},
		redis.Z{Score: math.Inf(1), Member: "high\xff"}, redis.Z{Score: 0.1 + 0.2, Member: "inexact"})
	p.RPush(ctx, "list", "x", "\x00", "x", "")
	for i := range 5 {
		p.Do(ctx, "FAPPEND", "series", 1_700_000_000_000+int64(i)*1000, fmt.Sprintf("p%d\xff", i))
	}
	p.Do(ctx, "FAPPEND", "ttl:series", 5, "v")
	p.PExpire(ctx, "ttl:series", 3*time.Hour)
	p.XAdd(ctx, &redis.XAddArgs{Stream: "stream", ID: "1-1", Values: []any{"f", "v"}})
	p.XAdd(ctx, &redis.XAddArgs{Stream: "stream", ID: "5-0", Values: []any{"a", "\xff", "b", ""}})
	_, err := p.Exec(ctx)
	require.NoError(t, err)
	// A list of more items than one write carries.
	big := make([]any, 2500)
	for i := range big {
		big[i] = fmt.Sprint(i)
	}
	require.NoError(t, rc.RPush(ctx, "biglist", big...).Err())
}

// keyState is a key as the server has it: its type, value and TTL.
type keyState struct {
	typ   string
	value string // a canonical rendering of the value
	ttl   time.Duration
}

// snapshot reads every key of database 0.
func snapshot(t *testing.T, rc *redis.Client) map[string]keyState {
	t.Helper()
	ctx := t.Context()
	keys, err := rc.Keys(ctx, "*").Result()
	require.NoError(t, err)
	out := map[string]keyState{}
	for _, k := range keys {
		typ, err := rc.Type(ctx, k).Result()
		require.NoError(t, err)
		ks := keyState{typ: typ}
		if ttl, err := rc.PTTL(ctx, k).Result(); err == nil && ttl > 0 {
			ks.ttl = ttl
		}
		var v any
		switch typ {
		case "string":
			v, err = rc.Get(ctx, k).Result()
		case "hash":
			v, err = rc.HGetAll(ctx, k).Result()
		case "set":
			var m []string
			m, err = rc.SMembers(ctx, k).Result()
			sort.Strings(m)
			v = m
		case "zset":
			v, err = rc.ZRangeWithScores(ctx, k, 0, -1).Result()
		case "list":
			v, err = rc.LRange(ctx, k, 0, -1).Result()
		case "series":
			v, err = rc.Do(ctx, "FQUERY", k, 0, int64(math.MaxInt64)).Result()
		case "stream":
			v, err = rc.XRange(ctx, k, "-", "+").Result()
		default:
			t.Fatalf("key %q of type %s", k, typ)
		}
		require.NoError(t, err, "%s %q", typ, k)
		ks.value = fmt.Sprintf("%#v", v)
		out[k] = ks
	}
	return out
}

// requireSame requires two snapshots to hold the same keys and values,
// and TTLs that differ by no more than the time between them.
func requireSame(t *testing.T, want, got map[string]keyState) {
	t.Helper()
	require.Len(t, got, len(want))
	for k, w := range want {
		g, ok := got[k]
		require.True(t, ok, "key %q lost", k)
		require.Equal(t, w.typ, g.typ, k)
		require.Equal(t, w.value, g.value, k)
		if w.ttl == 0 {
			require.Zero(t, g.ttl, "%q gained a TTL", k)
			continue
		}
		require.Positive(t, g.ttl, "%q lost its TTL", k)
		require.InDelta(t, w.ttl.Seconds(), g.ttl.Seconds(), 30, "%q's TTL", k)
	}
}

// dirHashes is every file's SHA-256 under dir, to show a command
// changed nothing.
func dirHashes(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = sha256.Sum256(b)
		return nil
	}))
	return out
}

// copyDir copies the tree src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
}
