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
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// startServer runs the built binary and waits for its "ready" log line.
func startServer(t *testing.T, bin string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var log bytes.Buffer
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if !once && strings.Contains(sc.Text(), "msg=ready") {
				once = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("server did not become ready:\n%s", log.String())
	}
	return cmd, &log
}

// The server starts on a data directory, serves RESP, stops cleanly on
// SIGTERM after checkpointing, and starts again with the data.
func TestServeStopRestart(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "server")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	data := t.TempDir()
	respAddr, httpAddr, s3Addr := freeAddr(t), freeAddr(t), freeAddr(t)
	args := []string{"--data", data, "--resp", respAddr, "--http", httpAddr, "--s3", s3Addr}
	cmd, log := startServer(t, bin, args...)
	require.Contains(t, log.String(), "surface=resp addr="+respAddr)
	require.Contains(t, log.String(), "surface=http addr="+httpAddr)
	require.Contains(t, log.String(), "surface=s3 addr="+s3Addr)
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
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), log.String())
	require.Contains(t, log.String(), "msg=stopped")
	images, _ := filepath.Glob(filepath.Join(data, "engine", "*", "*", "*", "checkpoint-*.img"))
	require.NotEmpty(t, images, "shutdown checkpoints every shard")

	cmd, log = startServer(t, bin, args...)
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	c2 := redis.NewClient(&redis.Options{Addr: respAddr})
	defer c2.Close()
	require.Equal(t, "hello", c2.Get(ctx, "greeting").Val(), log.String())
	require.Equal(t, []string{"a", "b"}, c2.LRange(ctx, "queue", 0, -1).Val())
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
	_, err = parse([]string{"--tls-cert", "x.pem"}, io.Discard, os.Getenv)
	require.ErrorContains(t, err, "go together")

	// A public address without a token is refused before anything opens.
	err = run(t.Context(), []string{"--data", t.TempDir(), "--resp", "0.0.0.0:0", "--s3", ""}, io.Discard, io.Discard)
	require.ErrorContains(t, err, "without a token")
	require.True(t, loopback("127.0.0.1:6379"))
	require.True(t, loopback("[::1]:6379"))
	require.False(t, loopback(fmt.Sprintf("%s:6379", "0.0.0.0")))
}
