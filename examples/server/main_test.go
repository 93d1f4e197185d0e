package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/resp"
)

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// server is a running server process and the log it has written so far.
type server struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan struct{} // closed once stderr is read to its end
}

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// stop sends SIGTERM and waits for the process, after its last log line
// is read: Wait closes the pipe, and lines not yet read would be lost.
func (s *server) stop() error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	<-s.done
	return s.cmd.Wait()
}

// startServer runs the built binary and waits for its "ready" log line.
func startServer(t *testing.T, bin string, args ...string) *server {
	s := &server{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	stderr, err := s.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	ready := make(chan struct{})
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			s.mu.Lock()
			s.buf.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if !once && strings.Contains(sc.Text(), "msg=ready") {
				once = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		t.Fatalf("server did not become ready:\n%s", s.log())
	}
	return s
}

// The server starts on a data directory, serves RESP, stops cleanly on
// SIGTERM after checkpointing, and starts again with the data.
func TestServeStopRestart(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "server")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	data := t.TempDir()
	respAddr, httpAddr, s3Addr := freeAddr(t), freeAddr(t), freeAddr(t)
	args := []string{"--data", data, "--resp", respAddr, "--http", httpAddr, "--s3", s3Addr, "--shards", "2"}
	srv := startServer(t, bin, args...)
	require.Contains(t, srv.log(), "surface=resp addr="+respAddr)
	require.Contains(t, srv.log(), "surface=http addr="+httpAddr)
	require.Contains(t, srv.log(), "surface=s3 addr="+s3Addr)
	ctx := t.Context()
	c := redis.NewClient(&redis.Options{Addr: respAddr})
	defer c.Close()
	require.NoError(t, c.Set(ctx, "greeting", "hello", 0).Err())
	require.NoError(t, c.RPush(ctx, "queue", "a", "b").Err())
	// The same engine over HTTP.
	res, err := http.Post("http://"+httpAddr+"/execute", "application/json",
		strings.NewReader(`{"shard_id":0,"command":{"kind":"string_get","key":"greeting"}}`))
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode, string(body))
	require.Contains(t, string(body), `"ok":true`)
	require.Contains(t, string(body), "[104,101,108,108,111]", "hello as the original's byte array")
	ready, err := http.Get("http://" + httpAddr + "/ready")
	require.NoError(t, err)
	ready.Body.Close()
	require.Equal(t, 200, ready.StatusCode)
	// /metrics covers the RESP commands too.
	res, err = http.Get("http://" + httpAddr + "/metrics")
	require.NoError(t, err)
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	require.Contains(t, string(body), `temporalstore_resp_command_duration_seconds_count{command="set"} 1`)
	require.Contains(t, string(body), `temporalstore_resp_command_duration_seconds_count{command="rpush"} 1`)
	require.Contains(t, string(body), `temporalstore_http_command_duration_seconds_count{kind="string_get"} 1`)
	require.Regexp(t, `temporalstore_resp_connected_clients [1-9]`, string(body))
	// One registry: the engine's, the record cache's tiers, the runtime's.
	require.Regexp(t, `temporalstore_shard_keys\{namespace="default",shard="\d",table="default"\} [0-9]`, string(body))
	require.Regexp(t, `matrixcache_tier_hits_total\{tier="dram"\} [0-9]`, string(body))
	require.Contains(t, string(body), `temporalstore_record_cache_entries `)
	require.Contains(t, string(body), `go_goroutines `)
	require.Regexp(t, `ferricstore_stream_entries\{shard="\d"\} 0`, string(body), "the streams' figures, on the same registry")
	require.NoError(t, srv.stop(), srv.log())
	require.Contains(t, srv.log(), "msg=stopped")
	images, _ := filepath.Glob(filepath.Join(data, "engine", "*", "*", "*", "checkpoint-*.img"))
	require.NotEmpty(t, images, "shutdown checkpoints every shard")
	shards, _ := filepath.Glob(filepath.Join(data, "engine", "default", "default", "*", "checkpoint-*.img"))
	require.Len(t, shards, 2, "--shards 2: the default table has two shards, each checkpointed")
	catalog, err := os.ReadFile(filepath.Join(data, "engine", "catalog.json"))
	require.NoError(t, err)
	require.Contains(t, string(catalog), `"key_groups": 4`, "which keys share a transaction does not follow --shards")
	require.Contains(t, srv.log(), "msg=\"default table\" shards=2 key_groups=4 async=false")

	// Restarted with another --shards: the table keeps its count.
	args = append(args, "--shards", "3")
	srv = startServer(t, bin, args...)
	defer func() { _ = srv.stop() }()
	c2 := redis.NewClient(&redis.Options{Addr: respAddr})
	defer c2.Close()
	require.Equal(t, "hello", c2.Get(ctx, "greeting").Val(), srv.log())
	require.Equal(t, []string{"a", "b"}, c2.LRange(ctx, "queue", 0, -1).Val())
	dirs, _ := filepath.Glob(filepath.Join(data, "engine", "default", "default", "shard-*"))
	require.Len(t, dirs, 2, "an existing table keeps its shard count")
	require.Contains(t, srv.log(), "shards=2 key_groups=4", "and logs the count it kept")
}

func TestFlagsEnvAndRefusals(t *testing.T) {
	env := map[string]string{"TS_RESP_ADDR": "127.0.0.1:7000", "TS_TOKEN": "a, b"}
	c, err := parse([]string{"--resp", "127.0.0.1:7001"}, io.Discard, func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:7001", c.respAddr, "a flag beats its variable")
	require.Equal(t, []string{"a", "b"}, c.tokens, "a variable beats the default")
	require.Equal(t, "./data", c.dataDir)

	var help bytes.Buffer
	_, err = parse([]string{"--help"}, &help, os.Getenv)
	require.ErrorIs(t, err, flag.ErrHelp)
	for _, f := range flags {
		require.Contains(t, help.String(), "--"+f.name)
		require.Contains(t, help.String(), f.env)
	}
	_, err = parse([]string{"--log-format", "xml"}, io.Discard, os.Getenv)
	require.Error(t, err)

	// Switches stand alone, take =false, and leave the next flag alone.
	for _, tc := range []struct {
		args           []string
		env            string
		async, insecur bool
	}{
		{args: []string{"--async", "--s3", ""}, async: true},
		{args: []string{"--async", "--insecure"}, async: true, insecur: true},
		{args: []string{"--async=false"}, env: "true"},
		{args: nil, env: "true", async: true},
		{args: []string{"-async"}, async: true},
	} {
		c, err := parse(tc.args, io.Discard, func(k string) string {
			if k == "TS_ASYNC" {
				return tc.env
			}
			return ""
		})
		require.NoError(t, err, "%q", tc.args)
		require.Equal(t, tc.async, c.async, "%q", tc.args)
		require.Equal(t, tc.insecur, c.insecure, "%q", tc.args)
	}
	_, err = parse([]string{"--async=maybe"}, io.Discard, os.Getenv)
	require.Error(t, err)
	c, err = parse(nil, io.Discard, func(k string) string { return map[string]string{"TS_SHARDS": "2"}[k] })
	require.NoError(t, err)
	require.Equal(t, 2, c.shards)
	require.Equal(t, resp.DefaultDatabases, c.databases)
	c, err = parse([]string{"--databases", "4"}, io.Discard, func(k string) string { return map[string]string{"TS_DATABASES": "8"}[k] })
	require.NoError(t, err)
	require.Equal(t, 4, c.databases)
	for _, bad := range []string{"0", "-1", "x"} {
		_, err = parse([]string{"--databases", bad}, io.Discard, os.Getenv)
		require.Error(t, err, bad)
	}
	c, err = parse(nil, io.Discard, func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, temporalstore.SuggestedShards(runtime.GOMAXPROCS(0)), c.shards, "the processors choose")
	for _, tc := range []struct{ shards, groups int }{{1, 4}, {2, 4}, {4, 4}, {3, 3}, {8, 8}} {
		c.shards = tc.shards
		o := defaultTable(c)
		require.Equal(t, tc.groups, o.KeyGroups, "--shards %d", tc.shards)
		require.NoError(t, o.Validate())
	}
	for _, bad := range []string{"0", "-1", "1025", "two"} {
		_, err = parse([]string{"--shards", bad}, io.Discard, os.Getenv)
		require.Error(t, err, bad)
	}
	_, err = parse([]string{"--tls-cert", "x.pem"}, io.Discard, os.Getenv)
	require.ErrorContains(t, err, "go together")

	// A public address without a token is refused before anything opens.
	err = run(t.Context(), []string{"--data", t.TempDir(), "--resp", "0.0.0.0:0", "--s3", ""}, io.Discard, io.Discard)
	require.ErrorContains(t, err, "without a token")
	require.True(t, loopback("127.0.0.1:6379"))
	require.True(t, loopback("[::1]:6379"))
	require.False(t, loopback(fmt.Sprintf("%s:6379", "0.0.0.0")))
}
