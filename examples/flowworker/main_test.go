package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
)

// Worker processes killed with SIGKILL in the middle of their jobs, over
// and over, while others are started: every flow is completed exactly
// once (one completed event in its history), its effect recorded once,
// and flows held by the killed workers are run again once their leases
// run out.
func TestWorkersKilledMidLease(t *testing.T) {
	dir := t.TempDir()
	worker := filepath.Join(dir, "flowworker")
	require.NoError(t, servertest.Build(worker))
	server := filepath.Join(dir, "server")
	build := exec.Command("go", "build", "-o", server, "../server")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	addr := servertest.FreeAddr(t)
	srv := servertest.Start(t, server, "--data", filepath.Join(dir, "data"), "--resp", addr, "--http", "", "--s3", "")
	defer srv.Stop()
	const n = 400
	enq := exec.Command(worker, "--addr", addr, "--type", "mail", "--enqueue", fmt.Sprint(n))
	out, err = enq.CombinedOutput()
	require.NoError(t, err, "%s", out)

	start := func(i int) *exec.Cmd {
		cmd := exec.Command(worker, "--addr", addr, "--type", "mail", "--name", fmt.Sprint("w", i),
			"--concurrency", "4", "--lease", "600ms", "--work", "15ms")
		require.NoError(t, cmd.Start())
		return cmd
	}
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: addr, Protocol: 3})
	defer rc.Close()
	workers := []*exec.Cmd{start(0), start(1), start(2)}
	defer func() {
		for _, w := range workers {
			w.Process.Kill()
			w.Wait()
		}
	}()
	rng := rand.New(rand.NewPCG(1, 2))
	kills := 0
	deadline := time.Now().Add(90 * time.Second)
	for {
		done, err := rc.SCard(ctx, "flowworker:mail:done").Result()
		require.NoError(t, err)
		stats, err := rc.Do(ctx, "FLOW.STATS").Result()
		require.NoError(t, err)
		if stats.(map[any]any)["completed"] == int64(n) {
			break
		}
		require.True(t, time.Now().Before(deadline), "stuck at %d done: %v", done, stats)
		if kills < 8 && done > int64(kills*n/10) {
			i := rng.IntN(len(workers))
			require.NoError(t, workers[i].Process.Kill())
			workers[i].Wait()
			kills++
			workers[i] = start(10 + kills)
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.GreaterOrEqual(t, kills, 5)

	reruns := 0
	for i := range n {
		id := fmt.Sprint("mail-", i)
		hist, err := rc.Do(ctx, "FLOW.HISTORY", id).Slice()
		require.NoError(t, err)
		completed := 0
		for _, e := range hist {
			if e.(map[any]any)["event"] == "completed" {
				completed++
			}
		}
		require.Equal(t, 1, completed, "%s: %v", id, hist)
		runs, err := rc.Get(ctx, "flowworker:mail:runs:"+id).Int()
		require.NoError(t, err)
		require.GreaterOrEqual(t, runs, 1)
		reruns += runs - 1
	}
	effects, err := rc.SCard(ctx, "flowworker:mail:done").Result()
	require.NoError(t, err)
	require.Equal(t, int64(n), effects, "one effect a flow")
	require.Positive(t, reruns, "the killed workers' flows ran again")
	t.Logf("%d kills, %d jobs run again after a kill", kills, reruns)
}
