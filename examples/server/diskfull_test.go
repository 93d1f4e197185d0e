//go:build linux

package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
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

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
)

// mountTmpfs mounts a tmpfs of size (mount's syntax, "96m") on a new
// directory, unmounted when t ends; it skips t where mounting is not
// permitted.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("a full disk needs a small tmpfs, and mounting one is not permitted here: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	return dir
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(body)
}

// The server on a disk that fills up: writes are refused with a clear
// error on RESP (MISCONF) and HTTP (507), every key written stays
// readable, /ready says 503 and why, a metric shows the fault. Once space
// returns the server takes writes again within seconds, without a
// restart; killed and started again, it holds every write it acknowledged.
func TestDiskFull(t *testing.T) {
	mnt := mountTmpfs(t, "128m") // the streams' log takes 64 MiB, the engine's tables 8 each
	data := filepath.Join(mnt, "data")
	bin := buildServer(t)
	respAddr, httpAddr := servertest.FreeAddr(t), servertest.FreeAddr(t)
	args := []string{"--data", data, "--resp", respAddr, "--http", httpAddr, "--s3", "", "--shards", "1"}
	srv := servertest.Start(t, bin, args...)
	ctx := t.Context()
	c := redis.NewClient(&redis.Options{Addr: respAddr})
	defer c.Close()

	// Leave less than a segment free: the default table's active segment
	// fills, and the next cannot be created.
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(mnt, &st))
	filler := filepath.Join(mnt, "filler")
	require.NoError(t, os.WriteFile(filler, make([]byte, int64(st.Bavail)*st.Bsize-4<<20), 0o644))

	rng := rand.New(rand.NewPCG(5, 6))
	value := func() string {
		b := make([]byte, 64<<10) // random: the log's compression keeps it whole
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return string(b)
	}
	acked := map[string]string{}
	var refusedKey string
	var refusal error
	for i := range 400 {
		k, v := fmt.Sprintf("key-%d", i), value()
		if err := c.Set(ctx, k, v, 0).Err(); err != nil {
			refusedKey, refusal = k, err
			break
		}
		acked[k] = v
	}
	require.Error(t, refusal, "the disk never filled")
	t.Logf("refused after %d writes: %v", len(acked), refusal)
	require.True(t, strings.HasPrefix(refusal.Error(), "MISCONF disk full: shard default/default/0 refuses writes"), refusal.Error())
	require.Contains(t, refusal.Error(), "no space left on device")
	require.ErrorContains(t, c.Set(ctx, "another", "x", 0).Err(), "MISCONF disk full")
	for k, v := range acked {
		got, err := c.Get(ctx, k).Result()
		require.NoError(t, err, "reads go on")
		require.Equal(t, v, got)
	}
	code, out := postJSON(t, "http://"+httpAddr+"/execute",
		fmt.Sprintf(`{"command":{"kind":"string_set","key":"http-key","value":%q}}`, base64.StdEncoding.EncodeToString([]byte("x"))))
	require.Equal(t, http.StatusInsufficientStorage, code)
	require.Equal(t, "disk_full", out["status"].(map[string]any)["code"])
	code, body := httpGet(t, "http://"+httpAddr+"/ready")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "default/default shard 0")
	require.Contains(t, body, "disk full")
	_, metrics := httpGet(t, "http://"+httpAddr+"/metrics")
	require.Contains(t, metrics, `temporalstore_shard_storage_fault{namespace="default",shard="0",table="default"} 1`)
	shardDir := filepath.Join(data, "engine", "default", "default", "shard-0000")
	tmp, err := filepath.Glob(filepath.Join(shardDir, "*.tmp"))
	require.NoError(t, err)
	require.Empty(t, tmp, "no segment left half made")

	// The server's tries to recover fail while the disk stays full.
	require.Eventually(t, func() bool { return strings.Contains(srv.Log(), "storage still failing") },
		10*time.Second, 20*time.Millisecond)
	require.ErrorContains(t, c.Set(ctx, "another", "x", 0).Err(), "MISCONF disk full")

	// Space returns: writes resume by themselves.
	require.NoError(t, os.Remove(filler))
	start := time.Now()
	require.Eventually(t, func() bool { return c.Set(ctx, "resumed", "yes", 0).Err() == nil },
		15*time.Second, 50*time.Millisecond, "writes never resumed")
	t.Logf("writes resumed %v after space returned", time.Since(start).Round(time.Millisecond))
	acked["resumed"] = "yes"
	code, _ = httpGet(t, "http://"+httpAddr+"/ready")
	require.Equal(t, http.StatusOK, code)
	_, metrics = httpGet(t, "http://"+httpAddr+"/metrics")
	require.Contains(t, metrics, `temporalstore_shard_storage_fault{namespace="default",shard="0",table="default"} 0`)
	require.Contains(t, metrics, `temporalstore_shard_storage_fault_recoveries_total{namespace="default",shard="0",table="default"} 1`)
	for i := range 140 { // past the next segment's creation
		k, v := fmt.Sprintf("later-%d", i), value()
		if err := c.Set(ctx, k, v, 0).Err(); err != nil {
			var st syscall.Statfs_t
			_ = syscall.Statfs(mnt, &st)
			du, _ := exec.Command("du", "-a", mnt).CombinedOutput()
			t.Fatalf("write %d: %v; free %d\n%s\n%s", i, err, int64(st.Bavail)*st.Bsize, du, srv.Log())
		}
		acked[k] = v
	}

	// A crash: everything acknowledged is there after a restart, and the
	// refused writes are not.
	srv.Kill()
	servertest.Start(t, bin, args...)
	c2 := redis.NewClient(&redis.Options{Addr: respAddr})
	defer c2.Close()
	for k, v := range acked {
		got, err := c2.Get(ctx, k).Result()
		require.NoError(t, err, k)
		require.Equal(t, v, got, k)
	}
	for _, k := range []string{refusedKey, "another", "http-key"} {
		require.ErrorIs(t, c2.Get(ctx, k).Err(), redis.Nil, k)
	}
}
