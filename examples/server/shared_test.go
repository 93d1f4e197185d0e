package main

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
)

// Three processes keep their shards' logs in one shared directory: each
// shard is written by one member (spread one a member), go-redis's
// ClusterClient is routed to it, the others replay the shared log and
// serve READONLY reads, and a SIGKILL of a writer loses no acknowledged
// write while another member takes its shard over once the lease runs
// out.
//
// Two shared stores: a directory (shared-fs), and an object store (object),
// a fourth server process's S3 API the members append to.
func TestSharedStorageCluster(t *testing.T) {
	t.Run("shared-fs", func(t *testing.T) {
		testSharedStorage(t, "shared-fs", "--storage-backend", "shared-fs", "--shared-dir", t.TempDir())
	})
	t.Run("object", func(t *testing.T) {
		s3 := servertest.FreeAddr(t)
		servertest.Start(t, buildServer(t), "--data", t.TempDir(), "--resp", "", "--http", "", "--s3", s3,
			"--s3-credentials", "member:sekret")
		testSharedStorage(t, "object", "--storage-backend", "object", "--shared-object", "http://"+s3+"/shared-logs",
			"--shared-object-credentials", "member:sekret")
	})
}

func testSharedStorage(t *testing.T, backendName string, flags ...string) {
	c := startCluster(t, 3, append(flags, "--shared-lease", "500ms")...)
	ctx := t.Context()
	for _, m := range c.ms {
		waitServed(t, m.resp)
	}
	backend := regexp.MustCompile(`temporalstore_storage_backend_info\{backend="` + backendName + `",reason="[^"]+"\} 1`)
	require.Regexp(t, backend, string(metricsOf(c.ms[0].http)))
	require.Contains(t, string(metricsOf(c.ms[0].http)), `temporalstore_shared_log_writer{shard="0"}`)

	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.addrs(), MaxRedirects: 8, ClusterStateReloadInterval: 250 * time.Millisecond})
	defer rc.Close()
	// The writers spread: shard i to the i-th member.
	spread := func() bool {
		shards, err := rc.ClusterShards(ctx).Result()
		if err != nil {
			return false
		}
		writers := map[string]bool{}
		for _, sh := range shards {
			for _, n := range sh.Nodes {
				if n.Role == "master" {
					writers[n.ID] = true
				}
			}
		}
		return len(writers) == 3
	}
	require.Eventually(t, spread, 20*time.Second, 50*time.Millisecond, "one writer a member")

	var mu sync.Mutex
	acked := map[string]string{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 100 {
				k, v := fmt.Sprintf("key:%d:%d", w, i), fmt.Sprint(i)
				require.NoError(t, rc.Set(ctx, k, v, 0).Err(), k)
				mu.Lock()
				acked[k] = v
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.NoError(t, rc.Incr(ctx, "counter").Err())
	acked["counter"] = "1"

	// Every member replays every shard: a READONLY read of a key on a
	// member that does not write its shard.
	victim := c.leaderOf(ctx, rc, "key:0:0")
	var other *member
	for _, m := range c.ms {
		if m != victim {
			other = m
		}
	}
	ro := redis.NewClient(&redis.Options{Addr: other.resp})
	defer ro.Close()
	require.NoError(t, ro.Do(ctx, "READONLY").Err())
	require.Eventually(t, func() bool { v, err := ro.Get(ctx, "key:0:0").Result(); return err == nil && v == "0" }, 10*time.Second, 5*time.Millisecond)
	// A write there is redirected to the writer.
	rw := redis.NewClient(&redis.Options{Addr: other.resp})
	defer rw.Close()
	require.ErrorContains(t, rw.Set(ctx, "key:0:0", "x", 0).Err(), "MOVED")
	// Membership is the peers list: no ADDMEMBER.
	require.ErrorContains(t, ro.Do(ctx, "CLUSTER", "ADDMEMBER", "4", "a:1", "b:2").Err(), "shared-storage")

	victim.srv.Kill()
	victim.srv = nil
	start := time.Now()
	for {
		err := rc.Set(ctx, "key:0:0", "after", 0).Err()
		if err == nil {
			break
		}
		require.Less(t, time.Since(start), 20*time.Second, "no write to key:0:0 after its writer died: %v", err)
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("failover: key:0:0 writable again %v after SIGKILL of member %d (lease 500ms)", time.Since(start).Round(time.Millisecond), victim.id)
	acked["key:0:0"] = "after"
	for k, v := range acked {
		got, err := rc.Get(ctx, k).Result()
		require.NoError(t, err, k)
		require.Equal(t, v, got, k)
	}
	// The member comes back on its data, follows, and holds it all.
	c.start(victim, 3)
	waitServed(t, victim.resp)
	back := redis.NewClient(&redis.Options{Addr: victim.resp})
	defer back.Close()
	require.NoError(t, back.Do(ctx, "READONLY").Err())
	require.Eventually(t, func() bool { v, err := back.Get(ctx, "key:0:0").Result(); return err == nil && v == "after" }, 10*time.Second, 5*time.Millisecond)
	// And takes its shard back: one writer a member again.
	require.Eventually(t, spread, 20*time.Second, 50*time.Millisecond, "the shard back with its member")
	require.NoError(t, rc.Set(ctx, "key:0:0", "again", 0).Err())
}

// Histories of concurrent GETs and SETs on the shared-storage backend,
// under SIGKILLs of shard writers and restarts of members, are
// linearizable per key, and lose no acknowledged write.
func TestSharedStorageHistoriesAreLinearizable(t *testing.T) {
	if testing.Short() {
		t.Skip("three processes under faults")
	}
	c := startCluster(t, 2, "--storage-backend", "shared-fs", "--shared-dir", t.TempDir(), "--shared-lease", "500ms")
	checkHistories(t, c, historiesPerRun(10), func(ctx context.Context, n int, keys []string, r *router) (string, int, time.Duration) {
		victim := c.leaderIndex(ctx, keys[n%len(keys)])
		if n%2 == 0 {
			failover := killAndProbe(t, ctx, c, victim, keys[n%len(keys)], r)
			time.Sleep(300 * time.Millisecond)
			c.start(c.ms[victim], 2)
			return "kill", victim, failover
		}
		// A rolling restart's step: SIGTERM (the writer lets go of its
		// logs), and back.
		require.NoError(t, c.ms[victim].srv.Stop())
		c.start(c.ms[victim], 2)
		return "restart", victim, 0
	})
}
