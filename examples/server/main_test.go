package main

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/resp"
)

// The server starts on a data directory, serves RESP, stops cleanly on
// SIGTERM after checkpointing, and starts again with the data.
func TestServeStopRestart(t *testing.T) {
	bin := buildServer(t)
	data := t.TempDir()
	respAddr, httpAddr, s3Addr := servertest.FreeAddr(t), servertest.FreeAddr(t), servertest.FreeAddr(t)
	args := []string{"--data", data, "--resp", respAddr, "--http", httpAddr, "--s3", s3Addr, "--shards", "2"}
	srv := servertest.Start(t, bin, args...)
	require.Contains(t, srv.Log(), "surface=resp addr="+respAddr)
	require.Contains(t, srv.Log(), "surface=http addr="+httpAddr)
	require.Contains(t, srv.Log(), "surface=s3 addr="+s3Addr)
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
	require.NoError(t, srv.Stop(), srv.Log())
	require.Contains(t, srv.Log(), "msg=stopped")
	images, _ := filepath.Glob(filepath.Join(data, "engine", "*", "*", "*", "checkpoint-*.img"))
	require.NotEmpty(t, images, "shutdown checkpoints every shard")
	shards, _ := filepath.Glob(filepath.Join(data, "engine", "default", "default", "*", "checkpoint-*.img"))
	require.Len(t, shards, 2, "--shards 2: the default table has two shards, each checkpointed")
	catalog, err := os.ReadFile(filepath.Join(data, "engine", "catalog.json"))
	require.NoError(t, err)
	require.Contains(t, string(catalog), `"key_groups": 4`, "which keys share a transaction does not follow --shards")
	require.Contains(t, srv.Log(), "msg=\"default table\" shards=2 key_groups=4 async=false")

	// Restarted with another --shards: the table keeps its count.
	args = append(args, "--shards", "3")
	srv = servertest.Start(t, bin, args...)
	defer func() { _ = srv.Stop() }()
	c2 := redis.NewClient(&redis.Options{Addr: respAddr})
	defer c2.Close()
	require.Equal(t, "hello", c2.Get(ctx, "greeting").Val(), srv.Log())
	require.Equal(t, []string{"a", "b"}, c2.LRange(ctx, "queue", 0, -1).Val())
	dirs, _ := filepath.Glob(filepath.Join(data, "engine", "default", "default", "shard-*"))
	require.Len(t, dirs, 2, "an existing table keeps its shard count")
	require.Contains(t, srv.Log(), "shards=2 key_groups=4", "and logs the count it kept")
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
		require.Contains(t, help.String(), "--"+f.Name)
		require.Contains(t, help.String(), f.Env)
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
	for _, tc := range []struct {
		v    string
		want int
	}{{"", 10}, {"-1", -1}, {"64", 64}} {
		c, err = parse(nil, io.Discard, func(k string) string { return map[string]string{"TS_CONTEXT_EVENT_HITS": tc.v}[k] })
		require.NoError(t, err, tc.v)
		require.Equal(t, tc.want, c.contextEventHits, tc.v)
	}
	for _, bad := range []string{"0", "-2", "1001", "x"} {
		_, err = parse([]string{"--context-event-hits", bad}, io.Discard, os.Getenv)
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
	// So are backups to S3 with no S3 to go to.
	err = run(t.Context(), []string{"--data", t.TempDir(), "--backup-to", "s3"}, io.Discard, io.Discard)
	require.ErrorContains(t, err, "--backup-to s3 needs")
}
