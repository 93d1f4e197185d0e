package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
	"github.com/temporalstore/temporalstore-go/temporalstore/cluster"
)

// member is one process of a test cluster.
type member struct {
	id               uint64
	data, resp, http string
	srv              *servertest.Server
}

// testCluster is three server processes, each shard of their default
// table a raft group over the three.
type testCluster struct {
	t     *testing.T
	bin   string
	peers string
	ms    []*member
	// extra are flags every member gets.
	extra []string
}

func startCluster(t *testing.T, shards int, extra ...string) *testCluster {
	c := &testCluster{t: t, bin: buildServer(t), extra: extra}
	var peers []string
	for i := range 3 {
		m := &member{id: uint64(i + 1), data: t.TempDir(), resp: servertest.FreeAddr(t), http: servertest.FreeAddr(t)}
		peers = append(peers, fmt.Sprintf("%d@%s@%s@%s", m.id, servertest.FreeAddr(t), m.resp, m.http))
		c.ms = append(c.ms, m)
	}
	c.peers = strings.Join(peers, ",")
	for _, m := range c.ms {
		c.start(m, shards)
	}
	return c
}

func (c *testCluster) start(m *member, shards int) {
	m.srv = servertest.Start(c.t, c.bin, append([]string{"--data", m.data, "--resp", m.resp, "--http", m.http, "--s3", "",
		"--shards", fmt.Sprint(shards), "--cluster-id", fmt.Sprint(m.id), "--cluster-peers", c.peers}, c.extra...)...)
}

func (c *testCluster) addrs() []string {
	var out []string
	for _, m := range c.ms {
		out = append(out, m.resp)
	}
	return out
}

// waitServed waits until a member reports every slot served.
func waitServed(t *testing.T, addr string) {
	t.Helper()
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := rc.ClusterInfo(t.Context()).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster not served in 30s: %v %q", err, info)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// leaderOf returns the member whose RESP address leads key's slot,
// waiting out an election (leader balancing hands shards on while the
// tests run, and a shard has no leader for a moment then).
func (c *testCluster) leaderOf(ctx context.Context, rc *redis.ClusterClient, key string) *member {
	c.t.Helper()
	slot, err := rc.ClusterKeySlot(ctx, key).Result()
	require.NoError(c.t, err)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		shards, err := rc.ClusterShards(ctx).Result()
		require.NoError(c.t, err)
		for _, sh := range shards {
			for _, r := range sh.Slots {
				if r.Start <= slot && slot <= r.End {
					for _, n := range sh.Nodes {
						for _, m := range c.ms {
							if n.Role == "master" && m.resp == fmt.Sprintf("%s:%d", n.IP, n.Port) {
								return m
							}
						}
					}
				}
			}
		}
	}
	c.t.Fatalf("no leader for %q in 10 s", key)
	return nil
}

// Three processes serve a Redis Cluster: go-redis's ClusterClient writes
// and reads through them, and a SIGKILL of a shard's leader loses no
// acknowledged write while another member takes the shard over.
func TestClusterSurvivesLeaderKill(t *testing.T) {
	c := startCluster(t, 3)
	ctx := t.Context()
	for _, m := range c.ms {
		waitServed(t, m.resp)
	}
	// go-redis reloads the slots on MOVED, and otherwise every
	// ClusterStateReloadInterval (60 s by default): a dead leader's slots
	// are only learnt anew then.
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.addrs(), MaxRedirects: 8, ClusterStateReloadInterval: 250 * time.Millisecond})
	defer rc.Close()

	// Each member leads some slots: CLUSTER SLOTS, what go-redis routes
	// by, covers them all.
	//lint:ignore SA1019 the command go-redis's ClusterClient reads
	slots, err := rc.ClusterSlots(ctx).Result()
	require.NoError(t, err)
	covered := 0
	for _, r := range slots {
		covered += int(r.End - r.Start + 1)
		require.Len(t, r.Nodes, 3, "every shard has three replicas")
	}
	require.Equal(t, 16384, covered)
	shards, err := rc.ClusterShards(ctx).Result()
	require.NoError(t, err)
	require.Len(t, shards, 3)

	// Leader balancing spreads the shards' leaderships: one each.
	deadline := time.Now().Add(20 * time.Second)
	for {
		leaders := map[string]bool{}
		shards, err := rc.ClusterShards(ctx).Result()
		require.NoError(t, err)
		for _, sh := range shards {
			for _, n := range sh.Nodes {
				if n.Role == "master" {
					leaders[n.ID] = true
				}
			}
		}
		if len(leaders) == 3 {
			break
		}
		require.True(t, time.Now().Before(deadline), "shards still led by %d members after 20s", len(leaders))
		time.Sleep(100 * time.Millisecond)
	}
	// Each member is ready, and exports its shards' raft state.
	for _, m := range c.ms {
		resp, err := http.Get("http://" + m.http + "/ready")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "member %d /ready", m.id)
		resp, err = http.Get("http://" + m.http + "/metrics")
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		for _, want := range []string{`matrixraft_is_leader{shard="2"}`, `matrixraft_commit_index{shard="0"}`, `temporalstore_cluster_replica_lag_records{shard="1"}`, "temporalstore_cluster_leader_transfers_total"} {
			require.Contains(t, string(body), want, "member %d /metrics", m.id)
		}
	}

	acked := map[string]string{}
	for i := range 300 {
		k, v := fmt.Sprintf("key:%d", i), fmt.Sprintf("value-%d", i)
		require.NoError(t, rc.Set(ctx, k, v, 0).Err(), k)
		acked[k] = v
	}
	require.NoError(t, rc.Incr(ctx, "counter").Err())
	acked["counter"] = "1"
	for k, v := range acked {
		got, err := rc.Get(ctx, k).Result()
		require.NoError(t, err, k)
		require.Equal(t, v, got, k)
	}
	// A member that does not lead a key's slot redirects.
	victim := c.leaderOf(ctx, rc, "key:0")
	for _, m := range c.ms {
		if m == victim {
			continue
		}
		direct := redis.NewClient(&redis.Options{Addr: m.resp})
		err := direct.Set(ctx, "key:0", "x", 0).Err()
		direct.Close()
		require.ErrorContains(t, err, "MOVED")
		require.ErrorContains(t, err, victim.resp)
		break
	}

	// SIGKILL the leader of key:0's shard; writes to that shard resume on
	// another member.
	victim.srv.Kill()
	victim.srv = nil
	start := time.Now()
	for {
		err := rc.Set(ctx, "key:0", "after", 0).Err()
		if err == nil {
			break
		}
		if time.Since(start) > 20*time.Second {
			for _, m := range c.ms {
				if m.srv != nil {
					d := redis.NewClient(&redis.Options{Addr: m.resp})
					s, serr := d.ClusterShards(ctx).Result()
					t.Logf("member %d slots: %+v %v\nlog:\n%s", m.id, s, serr, m.srv.Log())
					d.Close()
				}
			}
			t.Fatalf("no write to key:0 in 20s after the leader died: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("failover: key:0 writable again %v after SIGKILL of member %d", time.Since(start).Round(time.Millisecond), victim.id)
	// The survivors' jury convicts it: CLUSTER NODES marks it failed.
	var survivor *member
	for _, m := range c.ms {
		if m.srv != nil {
			survivor = m
		}
	}
	sc := redis.NewClient(&redis.Options{Addr: survivor.resp})
	defer sc.Close()
	failedLine := func() bool {
		nodes, err := sc.ClusterNodes(ctx).Result()
		require.NoError(t, err)
		for _, line := range strings.Split(nodes, "\n") {
			if strings.HasPrefix(line, cluster.NodeID(victim.id)) {
				return strings.Contains(line, ",fail")
			}
		}
		return false
	}
	convicted := regexp.MustCompile(fmt.Sprintf(`temporalstore_cluster_member_convicted\{member="%d"\} 1`, victim.id))
	require.Eventually(t, failedLine, 10*time.Second, 50*time.Millisecond, "member %d marked failed", victim.id)
	require.Eventually(t, func() bool {
		return convicted.Match(metricsOf(survivor.http))
	}, 10*time.Second, 50*time.Millisecond, "the jury convicts member %d", victim.id)
	acked["key:0"] = "after"
	for k, v := range acked {
		got, err := rc.Get(ctx, k).Result()
		require.NoError(t, err, k)
		require.Equal(t, v, got, k)
	}

	// The killed member comes back and catches up: READONLY reads of its
	// own replica see every acknowledged write.
	c.start(victim, 3)
	direct := redis.NewClient(&redis.Options{Addr: victim.resp})
	defer direct.Close()
	require.NoError(t, direct.Do(ctx, "READONLY").Err())
	deadline = time.Now().Add(30 * time.Second)
	for k, v := range acked {
		for {
			got, err := direct.Get(ctx, k).Result()
			if err == nil && got == v {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("restarted member's %s: %q, %v; want %q", k, got, err, v)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	require.Equal(t, cluster.NodeID(victim.id), direct.ClusterMyID(ctx).Val())
	require.Eventually(t, func() bool { return !failedLine() }, 10*time.Second, 50*time.Millisecond, "member %d acquitted once back", victim.id)
}

// bytesOf reads a JSON reply's bytes, an array of numbers.
func bytesOf(v any) string {
	var b []byte
	for _, x := range v.([]any) {
		b = append(b, byte(x.(float64)))
	}
	return string(b)
}

// postJSON posts body to url and returns the status and the decoded reply.
func postJSON(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

// Any member takes an HTTP command: one for a shard another member leads
// is forwarded to it; a batch whose keys are all on one other member's
// shard too; a batch spread over shards runs here, and its commands of
// other members' shards answer not_leader.
func TestClusterHTTPForwardsToTheLeader(t *testing.T) {
	c := startCluster(t, 3)
	ctx := t.Context()
	for _, m := range c.ms {
		waitServed(t, m.resp)
	}
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.addrs(), ClusterStateReloadInterval: 250 * time.Millisecond})
	defer rc.Close()
	// Wait for balancing, so each member leads one shard.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if c.leaderOf(ctx, rc, "{a}") != c.leaderOf(ctx, rc, "{b}") || time.Now().After(deadline) {
			break
		}
	}
	var key string
	var other *member
	for i := 0; other == nil; i++ {
		key = fmt.Sprint("http-key-", i)
		if l := c.leaderOf(ctx, rc, key); l != c.ms[0] {
			other = l
		}
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	code, out := postJSON(t, "http://"+c.ms[0].http+"/execute", fmt.Sprintf(`{"command":{"kind":"string_set","key":%q,"value":%q}}`, key, b64("via-1")))
	require.Equal(t, http.StatusOK, code, "%v", out)
	require.Equal(t, true, out["status"].(map[string]any)["ok"], "%v", out)
	got, err := rc.Get(ctx, key).Result()
	require.NoError(t, err)
	require.Equal(t, "via-1", got)
	code, out = postJSON(t, "http://"+c.ms[0].http+"/execute", fmt.Sprintf(`{"command":{"kind":"string_get","key":%q}}`, key))
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "via-1", bytesOf(out["response"].(map[string]any)["value"]), "%v", out)

	// A batch for that one shard goes whole.
	code, out = postJSON(t, "http://"+c.ms[0].http+"/batch_execute", fmt.Sprintf(`{"commands":[{"kind":"string_set","key":%q,"value":%q},{"kind":"string_get","key":%q}]}`, key, b64("batched"), key))
	require.Equal(t, http.StatusOK, code, "%v", out)
	rs := out["responses"].([]any)
	require.Len(t, rs, 2)
	require.Equal(t, "batched", bytesOf(rs[1].(map[string]any)["response"].(map[string]any)["value"]), "%v", out)

	// Spread over members: this member's own run, the others say where.
	var mine string
	for i := 0; mine == ""; i++ {
		if k := fmt.Sprint("mine-", i); c.leaderOf(ctx, rc, k) == c.ms[0] {
			mine = k
		}
	}
	code, out = postJSON(t, "http://"+c.ms[0].http+"/batch_execute", fmt.Sprintf(`{"commands":[{"kind":"string_set","key":%q,"value":%q},{"kind":"string_set","key":%q,"value":%q}]}`, mine, b64("m"), key, b64("x")))
	require.Equal(t, http.StatusOK, code, "%v", out)
	rs = out["responses"].([]any)
	require.Equal(t, true, rs[0].(map[string]any)["status"].(map[string]any)["ok"], "%v", out)
	require.Equal(t, "not_leader", rs[1].(map[string]any)["status"].(map[string]any)["code"], "%v", out)
	got, err = rc.Get(ctx, key).Result()
	require.NoError(t, err)
	require.Equal(t, "batched", got, "the refused command changed nothing")
	resp, err := http.Get("http://" + c.ms[0].http + "/metrics")
	require.NoError(t, err)
	metrics, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, string(metrics), "temporalstore_http_forwarded_total 3")
}

// Membership under load: a fourth member joins (a learner sent every
// shard's state, then a voter), a first one leaves (its leaderships moved
// away first), and a writer going on meanwhile loses nothing.
func TestClusterMembershipChanges(t *testing.T) {
	c := startCluster(t, 3)
	ctx := t.Context()
	for _, m := range c.ms {
		waitServed(t, m.resp)
	}
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.addrs(), MaxRedirects: 8, ClusterStateReloadInterval: 250 * time.Millisecond})
	defer rc.Close()
	for i := range 200 {
		require.NoError(t, rc.Set(ctx, fmt.Sprint("before:", i), i, 0).Err())
	}
	// A writer runs through both changes.
	var mu sync.Mutex
	acked := map[string]string{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			k, v := fmt.Sprint("during:", i%50), fmt.Sprint(i)
			if rc.Set(ctx, k, v, 0).Err() == nil {
				mu.Lock()
				acked[k] = v
				mu.Unlock()
			}
			time.Sleep(2 * time.Millisecond)
		}
	})

	// Member 4 starts empty and is added through member 1.
	m4 := &member{id: 4, data: t.TempDir(), resp: servertest.FreeAddr(t), http: servertest.FreeAddr(t)}
	raft4 := servertest.FreeAddr(t)
	peers := c.peers + fmt.Sprintf(",4@%s@%s@%s", raft4, m4.resp, m4.http)
	m4.srv = servertest.Start(t, c.bin, "--data", m4.data, "--resp", m4.resp, "--http", m4.http, "--s3", "",
		"--shards", "3", "--cluster-id", "4", "--cluster-peers", peers, "--cluster-join")
	admin := redis.NewClient(&redis.Options{Addr: c.ms[0].resp, ReadTimeout: 5 * time.Minute})
	defer admin.Close()
	require.NoError(t, admin.Do(ctx, "CLUSTER", "ADDMEMBER", "4", raft4, m4.resp, m4.http).Err())
	// Each shard's leader made the change; a member that follows the
	// shard sees it once it has applied it.
	holdersAre := func(c *redis.Client, n int, without string) func() bool {
		return func() bool {
			shards, err := c.ClusterShards(ctx).Result()
			if err != nil || len(shards) != 3 {
				return false
			}
			for _, sh := range shards {
				if len(sh.Nodes) != n {
					return false
				}
				for _, nd := range sh.Nodes {
					if nd.ID == without {
						return false
					}
				}
			}
			return true
		}
	}
	require.Eventually(t, holdersAre(admin, 4, ""), 10*time.Second, 20*time.Millisecond, "every shard holds the new member")
	r4 := redis.NewClient(&redis.Options{Addr: m4.resp})
	defer r4.Close()
	require.NoError(t, r4.Do(ctx, "READONLY").Err())
	for i := range 200 {
		k := fmt.Sprint("before:", i)
		require.Eventually(t, func() bool { v, err := r4.Get(ctx, k).Int(); return err == nil && v == i }, 10*time.Second, 10*time.Millisecond, k)
	}

	// Member 1 leaves, through member 2, and is stopped.
	other := redis.NewClient(&redis.Options{Addr: c.ms[1].resp, ReadTimeout: 5 * time.Minute})
	defer other.Close()
	require.NoError(t, other.Do(ctx, "CLUSTER", "FORGET", cluster.NodeID(1)).Err())
	require.Eventually(t, holdersAre(other, 3, cluster.NodeID(1)), 10*time.Second, 20*time.Millisecond, "member 1 in no shard")
	require.NoError(t, c.ms[0].srv.Stop())
	c.ms[0].srv = nil
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()

	// Every acknowledged write is there, through the members left.
	rc2 := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{c.ms[1].resp, c.ms[2].resp, m4.resp}, MaxRedirects: 8})
	defer rc2.Close()
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, acked)
	for k, v := range acked {
		got, err := rc2.Get(ctx, k).Result()
		require.NoError(t, err, k)
		require.Equal(t, v, got, k)
	}
	for i := range 200 {
		got, err := rc2.Get(ctx, fmt.Sprint("before:", i)).Int()
		require.NoError(t, err)
		require.Equal(t, i, got)
	}
	require.NoError(t, rc2.Set(ctx, "after", "x", 0).Err())

	// With member 3 down, taking member 2 out would leave every shard two
	// voters, one of them down: no quorum. It is refused, and changes
	// nothing.
	require.NoError(t, c.ms[2].srv.Stop())
	c.ms[2].srv = nil
	// The members left agree it is down.
	down3 := regexp.MustCompile(`temporalstore_cluster_member_convicted\{member="3"\} 1`)
	require.Eventually(t, func() bool { return down3.Match(metricsOf(m4.http)) }, 30*time.Second, 50*time.Millisecond, "member 3 convicted")
	r4admin := redis.NewClient(&redis.Options{Addr: m4.resp, ReadTimeout: time.Minute})
	defer r4admin.Close()
	err := r4admin.Do(ctx, "CLUSTER", "FORGET", "2").Err()
	require.ErrorContains(t, err, "below quorum")
	shards, err := r4admin.ClusterShards(ctx).Result()
	require.NoError(t, err)
	for _, sh := range shards {
		require.Len(t, sh.Nodes, 3, "nothing removed")
	}
	require.ErrorContains(t, r4admin.Do(ctx, "CLUSTER", "FORGET", "x").Err(), "member id")
}

// A member down while its shards' raft logs were compacted past it (over
// 10,000 writes a shard) comes back and is sent each shard's state (a
// checkpoint image and the value log) over the raft transport.
func TestClusterMemberBehindTheCompactedLogCatchesUp(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 36,000 keys one at a time")
	}
	c := startCluster(t, 3)
	ctx := t.Context()
	for _, m := range c.ms {
		waitServed(t, m.resp)
	}
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.addrs(), MaxRedirects: 8, ClusterStateReloadInterval: 250 * time.Millisecond})
	defer rc.Close()
	down := c.ms[2]
	require.NoError(t, down.srv.Stop())
	down.srv = nil
	// Some 12,000 writes a shard, each its own raft entry (a pipeline's
	// would share one): past a raft snapshot (every 10,000 entries) and
	// the 5,000 kept behind it.
	const keys, writers = 36_000, 32
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := w; i < keys; i += writers {
				// The stopped member may have led a shard: its writes
				// wait out the election (a SET of the same value is safe
				// to repeat); this test is about the catch-up.
				deadline := time.Now().Add(15 * time.Second)
				for {
					err := rc.Set(ctx, fmt.Sprint("bulk:", i), i, 0).Err()
					if err == nil {
						break
					}
					if time.Now().After(deadline) {
						errs <- err
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	require.NoError(t, <-errs)
	c.start(down, 3)
	r := redis.NewClient(&redis.Options{Addr: down.resp})
	defer r.Close()
	require.NoError(t, r.Do(ctx, "READONLY").Err())
	for _, i := range []int{0, 1, keys / 3, keys / 2, keys - 1} {
		k := fmt.Sprint("bulk:", i)
		require.Eventually(t, func() bool { v, err := r.Get(ctx, k).Int(); return err == nil && v == i }, 30*time.Second, 20*time.Millisecond, k)
	}
	installed := regexp.MustCompile(`matrixraft_snapshots_installed_total\{shard="\d"\} [1-9]`)
	require.Eventually(t, func() bool { return installed.Match(metricsOf(down.http)) }, 10*time.Second, 20*time.Millisecond, "caught up from a snapshot")
	n, err := r.DBSize(ctx).Result()
	require.NoError(t, err)
	require.Equal(t, int64(keys), n, "every key on the member that was down")
}

// Four members in three zones, three voters a shard: each shard's leader
// moves its voters onto one member of each zone, the fourth holding the
// shard as a learner that still serves READONLY reads.
func TestClusterPlacementAcrossZones(t *testing.T) {
	bin := buildServer(t)
	zones := []string{"a", "a", "b", "c"}
	var ms []*member
	var peers []string
	for i := range 4 {
		m := &member{id: uint64(i + 1), data: t.TempDir(), resp: servertest.FreeAddr(t), http: servertest.FreeAddr(t)}
		peers = append(peers, fmt.Sprintf("%d@%s@%s@%s@%s", m.id, servertest.FreeAddr(t), m.resp, m.http, zones[i]))
		ms = append(ms, m)
	}
	for _, m := range ms {
		m.srv = servertest.Start(t, bin, "--data", m.data, "--resp", m.resp, "--http", m.http, "--s3", "",
			"--shards", "3", "--cluster-id", fmt.Sprint(m.id), "--cluster-peers", strings.Join(peers, ","), "--cluster-replicas", "3")
	}
	ctx := t.Context()
	type shardView struct {
		Voters   []uint64 `json:"voters"`
		Learners []uint64 `json:"learners"`
	}
	zoneOf := map[uint64]string{1: "a", 2: "a", 3: "b", 4: "c"}
	placed := func() bool {
		resp, err := http.Get("http://" + ms[3].http + "/cluster/members")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var v struct {
			Shards []shardView `json:"shards"`
		}
		if json.NewDecoder(resp.Body).Decode(&v) != nil || len(v.Shards) != 3 {
			return false
		}
		for _, sh := range v.Shards {
			if len(sh.Voters) != 3 || len(sh.Learners) != 1 {
				return false
			}
			z := map[string]bool{}
			for _, id := range sh.Voters {
				z[zoneOf[id]] = true
			}
			if len(z) != 3 {
				return false
			}
		}
		return true
	}
	require.Eventually(t, placed, 60*time.Second, 200*time.Millisecond, "three voters a shard, one per zone")
	var addrs []string
	for _, m := range ms {
		addrs = append(addrs, m.resp)
	}
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 8, ClusterStateReloadInterval: 250 * time.Millisecond})
	defer rc.Close()
	for i := range 100 {
		require.NoError(t, rc.Set(ctx, fmt.Sprint("p:", i), i, 0).Err())
	}
	// Member 1 or 2 (zone a) is a learner somewhere; every member holds
	// every shard, so READONLY reads anywhere see the writes.
	for _, m := range ms {
		r := redis.NewClient(&redis.Options{Addr: m.resp})
		require.NoError(t, r.Do(ctx, "READONLY").Err())
		require.Eventually(t, func() bool { v, err := r.Get(ctx, "p:99").Int(); return err == nil && v == 99 }, 10*time.Second, 20*time.Millisecond, "member %d", m.id)
		r.Close()
	}
}

// A member the others convict as down is replaced in its shards' voters:
// four members, three voters a shard; a voter killed, every shard again
// has three live voters, the learners promoted in its place.
func TestClusterReplacesAConvictedVoter(t *testing.T) {
	bin := buildServer(t)
	var ms []*member
	var peers []string
	for i := range 4 {
		m := &member{id: uint64(i + 1), data: t.TempDir(), resp: servertest.FreeAddr(t), http: servertest.FreeAddr(t)}
		peers = append(peers, fmt.Sprintf("%d@%s@%s@%s", m.id, servertest.FreeAddr(t), m.resp, m.http))
		ms = append(ms, m)
	}
	for _, m := range ms {
		m.srv = servertest.Start(t, bin, "--data", m.data, "--resp", m.resp, "--http", m.http, "--s3", "",
			"--shards", "3", "--cluster-id", fmt.Sprint(m.id), "--cluster-peers", strings.Join(peers, ","), "--cluster-replicas", "3")
	}
	type shardView struct {
		Voters   []uint64 `json:"voters"`
		Learners []uint64 `json:"learners"`
	}
	shardsSeenBy := func(m *member) []shardView {
		resp, err := http.Get("http://" + m.http + "/cluster/members")
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		var v struct {
			Shards []shardView `json:"shards"`
		}
		if json.NewDecoder(resp.Body).Decode(&v) != nil {
			return nil
		}
		return v.Shards
	}
	// Placed: three voters and a learner a shard.
	require.Eventually(t, func() bool {
		sh := shardsSeenBy(ms[0])
		for _, s := range sh {
			if len(s.Voters) != 3 || len(s.Learners) != 1 {
				return false
			}
		}
		return len(sh) == 3
	}, 60*time.Second, 200*time.Millisecond)
	// Kill a voter of shard 0.
	victim := ms[shardsSeenBy(ms[0])[0].Voters[0]-1]
	victim.srv.Kill()
	victim.srv = nil
	var survivor *member
	for _, m := range ms {
		if m.srv != nil {
			survivor = m
			break
		}
	}
	require.Eventually(t, func() bool {
		sh := shardsSeenBy(survivor)
		for _, s := range sh {
			if len(s.Voters) != 3 || slices.Contains(s.Voters, victim.id) {
				return false
			}
		}
		return len(sh) == 3
	}, 60*time.Second, 200*time.Millisecond, "every shard votes without member %d", victim.id)
	var addrs []string
	for _, m := range ms {
		if m.srv != nil {
			addrs = append(addrs, m.resp)
		}
	}
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 8, ClusterStateReloadInterval: 250 * time.Millisecond})
	defer rc.Close()
	for i := range 50 {
		require.NoError(t, rc.Set(t.Context(), fmt.Sprint("r:", i), i, 0).Err())
	}
}

// metricsOf is the /metrics page of the member serving HTTP at addr, or
// nothing when it does not answer.
func metricsOf(addr string) []byte {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return body
}

// The context and memory routes are served by the member leading the
// context table's shard, whichever member a request reaches: a memory
// added through one member is found through every other, and still after
// that leader is killed, through the member that leads the table next
// (its indexes rebuilt from the replicated table).
func TestClusterContextRoutesFollowTheLeader(t *testing.T) {
	c := startCluster(t, 3)
	for _, m := range c.ms {
		waitServed(t, m.resp)
	}
	call := func(m *member, path, body string) (int, string, string) {
		res, err := http.Post("http://"+m.http+path, "application/json", strings.NewReader(body))
		if err != nil {
			return 0, err.Error(), ""
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), res.Header.Get("X-Temporalstore-Member")
	}
	code, body, servedBy := call(c.ms[0], "/memories", `{"messages":[{"role":"user","content":"My office moved to Lisbon."}],"user_id":"alice"}`)
	require.Equal(t, 200, code, body)
	require.NotEmpty(t, servedBy)
	var leader *member
	for _, m := range c.ms {
		code, body, by := call(m, "/search", `{"query":"where is the office","user_id":"alice"}`)
		require.Equal(t, 200, code, body)
		require.Contains(t, body, "Lisbon", "through member %d", m.id)
		require.Equal(t, servedBy, by, "served by the context table's leader")
		if cluster.NodeID(m.id) == servedBy {
			leader = m
		}
	}
	require.NotNil(t, leader)
	// The context_* kinds of /execute go there too: an event written
	// through one member is retrieved through each.
	code, body, _ = call(c.ms[1], "/execute", `{"tenant":"acme","command":{"kind":"context_write_event","source_id":"ticket-1","source_kind":"ticket","title":"Checkout outage","text":"Payments failed at checkout after the deploy.","event_time_ms":1764460800000,"user_id":"ada"}}`)
	require.Equal(t, 200, code, body)
	require.Contains(t, body, `"ok":true`)
	for _, m := range c.ms {
		code, body, _ := call(m, "/execute", `{"tenant":"acme","command":{"kind":"context_retrieve","query":"checkout payments","user_id":"ada"}}`)
		require.Equal(t, 200, code, body)
		require.Contains(t, body, "Payments failed", "through member %d", m.id)
	}
	leader.srv.Kill()
	leader.srv = nil
	var survivor *member
	for _, m := range c.ms {
		if m.srv != nil {
			survivor = m
		}
	}
	require.Eventually(t, func() bool {
		code, body, by := call(survivor, "/search", `{"query":"where is the office","user_id":"alice"}`)
		return code == 200 && strings.Contains(body, "Lisbon") && by != servedBy
	}, 20*time.Second, 50*time.Millisecond, "found through the next leader")
	code, body, _ = call(survivor, "/memories", `{"messages":[{"role":"user","content":"My car is blue."}],"user_id":"bob"}`)
	require.Equal(t, 200, code, body)
}
