package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
)

// summaryLine is the form of the report's last line.
var summaryLine = regexp.MustCompile(`^ads: decisions_per_s=\d+ redis_per_s=\d+ map_per_s=\d+ ours_vs_redis_ratio=\d+\.\d\d null_ceiling_vs_redis_ratio=\d+\.\d\d invariants_held=true$`)

// TestMain lets the test binary be the null server the ceiling starts, as
// the program is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == nullServerArg {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		err := nullServerMain(ctx, os.Args[2:])
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Small days against a real server process and a real redis-server.
func TestAgainstRealServers(t *testing.T) {
	bin := buildTestServer(t)
	t.Run("every backend keeps the invariants", func(t *testing.T) { testDayOnEveryBackend(t, bin) })
	t.Run("servers started and stopped", func(t *testing.T) { testStartsItsServers(t, bin) })
}

// A small day on every backend: the invariants hold on each, the caps and
// budgets bound, events were retried, and the report ends with the
// summary line.
func testDayOnEveryBackend(t *testing.T, bin string) {
	resp := servertest.FreeAddr(t)
	srv := servertest.Start(t, bin, "--data", t.TempDir(), "--resp", resp, "--http", "", "--s3", "", "--async")
	defer srv.Stop()
	redisAddr := startRedis(t)

	path := filepath.Join(t.TempDir(), "ads.json")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"--resp", resp, "--redis", redisAddr, "--requests", "3000", "--users", "600",
		"--campaigns", "40", "--clients", "4", "--repeats", "2", "--json", path, "--cpu-split=false"},
		&stdout, &stderr, noEnv)
	require.NoError(t, err, "%s", stderr.String())

	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Regexp(t, summaryLine, lines[len(lines)-1])
	file, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, strings.Join(lines[:len(lines)-1], "\n")+"\n", string(file), "the file holds the printed report")
	var rep Report
	require.NoError(t, json.Unmarshal(file, &rep))
	require.True(t, rep.InvariantsHeld)
	require.Len(t, rep.Runs, 6)
	require.Contains(t, rep.Ratios, "ours_vs_redis_ratio")
	require.Len(t, rep.Ratios["ours_vs_redis_ratio"].PerRepeat, 2)
	require.Equal(t, "ours: external server at "+resp+" (its own commit mode); redis: external server at "+redisAddr+
		" (its own persistence); map: none", rep.Config.Durability)
	for _, r := range rep.Runs {
		inv := r.Invariants
		require.True(t, inv.Held, "%s: %+v", r.Backend, inv)
		require.Equal(t, 3000, r.Decisions)
		require.Positive(t, r.PerSecond, r.Backend)
		require.Positive(t, r.Retries, "%s: some events were sent twice", r.Backend)
		require.Equal(t, r.Impressions, inv.Impressions, r.Backend)
		require.Equal(t, r.Clicks, inv.Clicks, r.Backend)
		require.Positive(t, inv.Clicks, r.Backend)
		require.Positive(t, inv.CapsReached, "%s: the caps bound", r.Backend)
		require.Greater(t, inv.Delivery, 0.5, r.Backend)
		require.Greater(t, inv.PacingMaxAhead, 0.0, "%s: some campaign ran at its pacing limit", r.Backend)
		require.LessOrEqual(t, inv.PacingMaxAhead, inv.PacingTolerance, r.Backend)
		require.LessOrEqual(t, inv.PacingUsed, 1.0, r.Backend)
		require.Greater(t, r.FillRate, 0.5, r.Backend)
	}
	require.Len(t, rep.Nulls, 4, "a null-server ceiling after each day on ours and redis")
	for _, c := range rep.Nulls {
		require.Positive(t, c.PerSecond, c.Backend)
		require.Positive(t, c.History, "%s: histories were not empty", c.Backend)
	}
	for _, r := range rep.Runs {
		require.Positive(t, r.HistoryPoints, r.Backend)
	}
	require.Contains(t, rep.Ratios, "null_ceiling_vs_redis_ratio")
	for _, name := range backendNames {
		require.True(t, rep.Backends[name].InvariantsHeld, name)
		require.Len(t, rep.Backends[name].PerRepeat, 2, name)
	}
}

// Without addresses the program starts the servers itself, and stops
// them.
func testStartsItsServers(t *testing.T, bin string) {
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"--server-bin", bin, "--backends", "ours,redis", "--requests", "1000",
		"--users", "300", "--campaigns", "20", "--clients", "2", "--repeats", "1", "--cpu-split=false"},
		&stdout, &stderr, noEnv)
	require.NoError(t, err, "%s", stderr.String())
	require.Contains(t, stdout.String(), `"durability": "ours: --async (acknowledged once written, fsync every 10ms); redis: appendonly, appendfsync everysec"`)
	require.Contains(t, stdout.String(), "invariants_held=true\n")
	started := regexp.MustCompile(`msg="started (our server|redis-server|the null server)" addr=(\S+)`).FindAllStringSubmatch(stderr.String(), -1)
	require.Len(t, started, 3, "%s", stderr.String())
	for _, m := range started {
		_, err := net.DialTimeout("tcp", m[2], time.Second)
		require.Error(t, err, "%s still listens at %s", m[1], m[2])
	}
}

func TestFlags(t *testing.T) {
	cases := []struct {
		args []string
		want error
	}{
		{[]string{"--help"}, flag.ErrHelp},
		{[]string{"--backends", "ours,memcached"}, ErrOptions},
		{[]string{"--requests", "0"}, ErrOptions},
		{[]string{"--retry", "2"}, ErrOptions},
		{[]string{"extra"}, ErrOptions},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), c.args, &stdout, &stderr, noEnv)
		require.ErrorIs(t, err, c.want, "%v", c.args)
	}
	var stderr bytes.Buffer
	require.ErrorIs(t, run(t.Context(), []string{"--help"}, &bytes.Buffer{}, &stderr, noEnv), flag.ErrHelp)
	for _, name := range []string{"resp", "redis", "backends", "requests", "users", "campaigns", "clients", "repeats", "seed", "json"} {
		require.Contains(t, stderr.String(), "-"+name+" ", "--help explains --%s", name)
	}

	o := DefaultOptions(false)
	require.NoError(t, parseFlags(&o, []string{"--backends", " map, ours ,map"}, &bytes.Buffer{}))
	require.Equal(t, []string{"map", "ours"}, o.Backends)
	quick := DefaultOptions(true)
	require.Less(t, quick.Requests, DefaultOptions(false).Requests)
}

func noEnv(string) string { return "" }

// buildTestServer builds examples/server for the test.
func buildTestServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "server")
	out, err := exec.Command("go", "build", "-o", bin, "../server").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// startRedis starts a redis-server without persistence for the test and
// returns its address.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	require.NoError(t, err, "redis-server is not installed (make deps)")
	addr := servertest.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for range 250 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
	return ""
}
