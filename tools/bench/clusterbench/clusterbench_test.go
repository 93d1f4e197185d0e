package clusterbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/tools/bench/raftbench"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

func TestMain(m *testing.M) {
	// The etcd members are this test binary started again.
	raftbench.MaybeRunEtcdMember()
	os.Exit(m.Run())
}

// The benchmark's keys: 16 bytes, the probes in the failover key's slot.
func TestKeys(t *testing.T) {
	for _, k := range []string{writeKey(0), writeKey(99_999), readKeys(1)[0]} {
		require.Len(t, k, 16, k)
	}
	require.Equal(t, keySlot(failoverKey(3)), keySlot(probeKey(3)), "the probes write the failover key's slot")
	require.NotEqual(t, failoverKey(3), probeKey(3))
}

func TestSlotLeader(t *testing.T) {
	node := func(port int64, role string) redis.Node { return redis.Node{IP: "127.0.0.1", Port: port, Role: role} }
	shards := []redis.ClusterShard{
		{Slots: []redis.SlotRange{{Start: 0, End: 5461}}, Nodes: []redis.Node{node(1, "master"), node(2, "replica"), node(3, "replica")}},
		{Slots: []redis.SlotRange{{Start: 5462, End: 10922}}, Nodes: []redis.Node{node(2, "replica"), node(1, "master"), node(3, "replica")}},
		{Slots: []redis.SlotRange{{Start: 10923, End: 12000}, {Start: 12001, End: 16383}}, Nodes: []redis.Node{node(3, "master")}},
	}
	require.Equal(t, "127.0.0.1:1", slotLeader(shards, 0))
	require.Equal(t, "127.0.0.1:1", slotLeader(shards, 5462), "the master need not come first")
	require.Equal(t, "127.0.0.1:3", slotLeader(shards, 16383))
	require.Equal(t, "127.0.0.1:3", slotLeader(shards, 12001))
	require.Empty(t, slotLeader(shards, 16384))
	led, total := ledSlots(shards)
	require.Equal(t, map[string]int{"127.0.0.1:1": 10923, "127.0.0.1:3": 5461}, led)
	require.Equal(t, temporalstore.HashSlots, total)

	// A shard without a leader (an election under way) leads nothing.
	shards[2].Nodes = []redis.Node{node(3, "replica")}
	require.Empty(t, slotLeader(shards, 12001))
	_, total = ledSlots(shards)
	require.Equal(t, 10923, total)
}

func TestLogSink(t *testing.T) {
	require.Equal(t, [2]string{"INFO", "ready"}, pair(levelAndMsg(`time=2026-12-07T08:32:19.361Z level=INFO msg=ready data=d1`)))
	require.Equal(t, [2]string{"WARN", "raft peer connection lost"}, pair(levelAndMsg(`time=x level=WARN msg="raft peer connection lost" raft_id=1 err="EOF"`)))
	require.Equal(t, [2]string{"ERROR", `a "quoted" msg`}, pair(levelAndMsg(`level=ERROR msg="a \"quoted\" msg"`)))
	require.Equal(t, [2]string{"", ""}, pair(levelAndMsg("panic: boom")))
	require.Equal(t, [2]string{"INFO", ""}, pair(levelAndMsg("level=INFO xmsg=ready")), "only the msg key")

	s := newLogSink()
	fmt.Fprint(s, "level=INFO msg=\"engine open\"\nlevel=WARN msg=\"raft peer ")
	select {
	case <-s.ready:
		t.Fatal("ready before the ready line")
	default:
	}
	fmt.Fprint(s, "unreachable\" addr=x\nlevel=INFO msg=ready\nlevel=WARN msg=\"raft peer unreachable\"\nlevel=INFO msg=ready\n")
	<-s.ready
	require.Equal(t, map[string]int{"WARN raft peer unreachable": 2}, s.Counts())
	require.True(t, strings.HasSuffix(s.Tail(), "level=INFO msg=ready"))
}

func pair(a, b string) [2]string { return [2]string{a, b} }

func TestErrKind(t *testing.T) {
	require.Equal(t, "MOVED", errKind(errors.New("MOVED 12182 127.0.0.1:7001")))
	require.Equal(t, "CLUSTERDOWN", errKind(errors.New("CLUSTERDOWN the slot has no leader")))
	require.Equal(t, "EOF", errKind(io.EOF))
	require.Equal(t, "timeout", errKind(fmt.Errorf("set: %w", context.DeadlineExceeded)))
	require.Equal(t, "connection refused", errKind(fmt.Errorf("dial: %w", syscall.ECONNREFUSED)))
	require.Equal(t, "grpc Unavailable", errKind(errors.New("rpc error: code = Unavailable desc = no leader")))
	require.Equal(t, "etcdserver: leader changed", errKind(errors.New("etcdserver: leader changed")))
}

func TestLatencies(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Microsecond)
	}
	p50, p95, p99 := latencies(ds)
	require.InDelta(t, 50.5, p50, 1e-9)
	require.InDelta(t, 95.05, p95, 1e-9)
	require.InDelta(t, 99.01, p99, 1e-9)
	p50, _, _ = latencies(nil)
	require.True(t, math.IsNaN(p50))
}

// The report's ratios pair repeat i of ours with repeat i of etcd, and the
// summary line has the five keys in order; the shared-storage cells are
// set against the seed's rates.
func TestBuildReport(t *testing.T) {
	cfg := DefaultConfig(false)
	load := func(perSec, p50, p99 float64) loadResult {
		return loadResult{PerSec: perSec, P50Us: p50, P95Us: p99 * 0.8, P99Us: p99}
	}
	fo := func(ms float64) *failoverResult {
		return &failoverResult{Ms: benchkit.Float(ms), WritableMs: benchkit.Float(ms * 0.8), NewLeaderMs: benchkit.Float(ms / 2)}
	}
	runs := map[string][]systemRun{
		SystemOurs: {
			{Repeat: 1, Writes: []loadResult{load(1000, 800, 2000), load(9000, 1500, 4000)}, FollowerRead: ptr(load(20000, 40, 90)), LeaderRead: ptr(load(5000, 190, 400)), Failover: fo(1200)},
			{Repeat: 2, Writes: []loadResult{load(1100, 700, 2000), load(8000, 1600, 4000)}, FollowerRead: ptr(load(21000, 50, 90)), LeaderRead: ptr(load(5000, 210, 400)), Failover: fo(1800)},
		},
		SystemEtcd: {
			{Repeat: 1, Writes: []loadResult{load(500, 1600, 3000), load(4500, 3000, 6000)}, FollowerRead: ptr(load(8000, 100, 200)), LeaderRead: ptr(load(4000, 250, 400)), Failover: fo(2400)},
			{Repeat: 2, Writes: []loadResult{load(550, 1400, 3000), load(2000, 3200, 6000)}, FollowerRead: ptr(load(8000, 100, 200)), LeaderRead: ptr(load(4000, 250, 400)), Failover: &failoverResult{Ms: nan, WritableMs: nan, NewLeaderMs: nan, Error: "no write succeeded"}},
		},
		SystemShared: {
			{Repeat: 1, SharedEngines: []loadResult{load(4710, 400, 900), load(8420, 450, 1000), load(13200, 600, 1500)}, SharedConvergeMs: []float64{1, 2, 3},
				SharedWrites: []loadResult{load(1000, 900, 2000), load(2000, 900, 2000), load(3000, 900, 2000)}},
			{Repeat: 2, SharedEngines: []loadResult{load(4710, 400, 900), load(8420, 450, 1000), load(26400, 600, 1500)}, SharedConvergeMs: []float64{1, 2, 5},
				SharedWrites: []loadResult{load(1000, 900, 2000), load(2000, 900, 2000), load(3000, 900, 2000)}},
		},
	}
	rep := buildReport(cfg, runs)
	require.Len(t, rep.Writes, 2)
	require.Equal(t, benchkit.Summary{Min: 2, Median: 3, Max: 4}, *rep.Writes[1].WritesRatio)
	require.Equal(t, benchkit.Summary{Min: 2, Median: 2, Max: 2}, *rep.Writes[0].P50Ratio)
	require.Equal(t, benchkit.Summary{Min: 2, Median: 2.25, Max: 2.5}, *rep.Reads.FollowerP50Ratio)
	require.Equal(t, []string{"repeat 2: no write succeeded"}, rep.Failover.Systems[SystemEtcd].Problems)
	require.Equal(t, 2.0, rep.Failover.Ratio.Median, "the pair without a recovery is left out")

	line := summaryLine(rep.Summary[:5])
	require.Equal(t, "cluster: write_p50_us=750 follower_read_p50_us=45 writes_vs_etcd_ratio=3.00 shared_storage_8w_per_s=19800 failover_ms=1500", line)
	require.Len(t, rep.SharedStorage.Cells, 3)
	require.Equal(t, benchkit.Summary{Min: 10, Median: 15, Max: 20}, *rep.SharedStorage.Cells[2].VsSeed)
	require.Equal(t, 1320.0, rep.SharedStorage.Cells[2].SeedPerSec)
	require.Equal(t, 4.0, rep.SharedStorage.Cells[2].ConvergeMs.Median)
	require.Equal(t, 3000.0, rep.SharedStorage.Cells[2].RESP.PerSec.Median)
	got := map[string]float64{}
	for _, p := range rep.Summary {
		got[p.Key] = p.Value
	}
	require.Equal(t, 2.0, got["writes_c1_vs_etcd_ratio"])
	require.Equal(t, 2400.0, got["etcd_failover_ms"])
	require.Equal(t, 750.0, got["new_leader_ms"])
	require.Equal(t, 1200.0, got["writable_ms"])
	met := map[string]bool{}
	for _, g := range rep.Goals {
		require.NotNil(t, g.Met, g.Figure)
		met[g.Figure] = *g.Met
	}
	require.Equal(t, map[string]bool{keyWriteP50: true, keyFollowerP50: true, keyWritesRatio: true, keySharedStorage: true, keyFailover: true}, met)

	// Without etcd the ratios are not there, and print as n/a.
	rep = buildReport(cfg, map[string][]systemRun{SystemOurs: runs[SystemOurs]})
	require.Nil(t, rep.Writes[1].WritesRatio)
	require.Contains(t, summaryLine(rep.Summary[:5]), " writes_vs_etcd_ratio=n/a shared_storage_8w_per_s=n/a ")
	require.False(t, rep.SharedStorage.Run)
	_, err := json.Marshal(rep)
	require.NoError(t, err)
}

func ptr[T any](v T) *T { return &v }

// TestRunShort runs both systems for a moment, durable on the real disk:
// the server built from the checkout and three etcd processes.
func TestRunShort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server and three etcd processes")
	}
	cfg := DefaultConfig(true)
	cfg.Duration, cfg.Warmup, cfg.Repeats, cfg.ReadKeys = 300*time.Millisecond, 100*time.Millisecond, 1, 100
	cfg.Concurrency, cfg.SharedWriters, cfg.Dir, cfg.Out = []int{1, 4}, []int{2, 8}, t.TempDir(), filepath.Join(t.TempDir(), "cluster.json")
	var stdout bytes.Buffer
	require.NoError(t, Run(t.Context(), cfg, &stdout, benchkit.NewProgress(io.Discard)))
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Regexp(t, regexp.MustCompile(`^cluster: write_p50_us=\d+ follower_read_p50_us=\d+ writes_vs_etcd_ratio=[0-9.]+ shared_storage_8w_per_s=\d+ failover_ms=(\d+|n/a)$`), lines[len(lines)-1])

	b, err := os.ReadFile(cfg.Out)
	require.NoError(t, err)
	var rep struct {
		Runs          map[string][]systemRun `json:"runs"`
		SharedStorage sharedReport           `json:"shared_storage_writes"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	require.True(t, rep.SharedStorage.Run)
	require.Len(t, rep.Runs[SystemShared], 1)
	for _, w := range append(rep.Runs[SystemShared][0].SharedWrites, rep.Runs[SystemShared][0].SharedEngines...) {
		require.Positive(t, w.Ops)
	}
	for _, sys := range []string{SystemOurs, SystemEtcd} {
		require.Len(t, rep.Runs[sys], 1, sys)
		r := rep.Runs[sys][0]
		require.Len(t, r.Writes, 2)
		for _, w := range r.Writes {
			require.Positive(t, w.Ops, sys)
		}
		require.Positive(t, r.FollowerRead.Ops, sys)
		require.Zero(t, r.FollowerRead.Misses, sys)
		require.Positive(t, r.LeaderRead.Ops, sys)
		require.NotNil(t, r.Failover, sys)
	}
}
