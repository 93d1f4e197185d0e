package resp

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testredis"
)

// Without a cluster, the cluster verbs answer what redis-server 7 without
// cluster support does.
func TestClusterVerbsWithoutACluster(t *testing.T) {
	addr, _ := start(t, Options{})
	ref := testredis.Start(t)
	ctx := t.Context()
	ours := client(t, addr, 2)
	for _, cmd := range [][]any{
		{"cluster", "keyslot", "foo"}, {"cluster", "info"}, {"cluster", "slots"}, {"cluster", "help"},
		{"cluster", "keyslot"}, {"cluster", "myid", "x"}, {"cluster", "foo"}, {"cluster"},
		{"readonly"}, {"readwrite"}, {"asking"},
	} {
		want := ref.Do(ctx, cmd...).Err()
		require.Error(t, want, "%v", cmd)
		got := ours.Do(ctx, cmd...).Err()
		require.Error(t, got, "%v", cmd)
		require.Equal(t, want.Error(), got.Error(), "%v", cmd)
	}
}

// fixedCluster is a cluster description that does not change: three
// shards, this node ("me") leading the first.
type fixedCluster struct{ barriers atomic.Int64 }

func (f *fixedCluster) Route(slot int, write, readonly bool) (bool, string) {
	sh := temporalstore.SlotShard(slot, 3)
	switch {
	case sh == 0 || readonly && !write:
		return true, ""
	case sh == 1:
		return false, "127.0.0.1:7001"
	}
	return false, "" // no leader
}

func (f *fixedCluster) ReadBarrier(context.Context, int) error {
	f.barriers.Add(1)
	return nil
}

func (f *fixedCluster) Self() string { return strings.Repeat("a", 40) }

func (f *fixedCluster) Shards() []ClusterShard {
	me := ClusterNode{ID: f.Self(), Addr: "127.0.0.1:7000", Online: true, Offset: 9}
	b := ClusterNode{ID: strings.Repeat("b", 40), Addr: "127.0.0.1:7001", Online: true}
	c := ClusterNode{ID: strings.Repeat("c", 40), Addr: "127.0.0.1:7002"}
	lead := func(n ClusterNode) ClusterNode { n.Leader = true; return n }
	return []ClusterShard{
		{Slots: [][2]int{{0, 5461}}, Nodes: []ClusterNode{lead(me), b, c}},
		{Slots: [][2]int{{5462, 10922}}, Nodes: []ClusterNode{lead(b), me, c}},
		{Slots: [][2]int{{10923, 16383}}, Nodes: []ClusterNode{me, b, c}},
	}
}

// keyOfShard is a key whose slot is in shard sh of three.
func keyOfShard(sh int) string {
	for i := 0; ; i++ {
		k := fmt.Sprint("k", i)
		if temporalstore.SlotShard(temporalstore.KeySlot([]byte(k)), 3) == sh {
			return k
		}
	}
}

func TestClusterRouting(t *testing.T) {
	fc := &fixedCluster{}
	addr, _ := start(t, Options{Cluster: fc})
	ctx := t.Context()
	rc := client(t, addr, 2)
	mine, moved, down := keyOfShard(0), keyOfShard(1), keyOfShard(2)

	require.NoError(t, rc.Set(ctx, mine, "v", 0).Err())
	got, err := rc.Get(ctx, mine).Result()
	require.NoError(t, err)
	require.Equal(t, "v", got)
	require.Positive(t, fc.barriers.Load(), "a leader's read passes the barrier")

	slot := temporalstore.KeySlot([]byte(moved))
	require.EqualError(t, rc.Set(ctx, moved, "v", 0).Err(), fmt.Sprintf("MOVED %d 127.0.0.1:7001", slot))
	require.EqualError(t, rc.Get(ctx, moved).Err(), fmt.Sprintf("MOVED %d 127.0.0.1:7001", slot))
	require.EqualError(t, rc.Set(ctx, down, "v", 0).Err(), "CLUSTERDOWN Hash slot not served")
	require.EqualError(t, rc.MSet(ctx, mine, "1", moved, "2").Err(), "CROSSSLOT Keys in request don't hash to the same slot")
	// A pipeline's SETs take the fast path only for keys served here.
	cmds, _ := rc.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, mine, "p1", 0)
		p.Set(ctx, moved, "p2", 0)
		p.Set(ctx, mine, "p3", 0)
		return nil
	})
	require.NoError(t, cmds[0].Err())
	require.ErrorContains(t, cmds[1].Err(), "MOVED")
	require.NoError(t, cmds[2].Err())

	// READONLY reads a followed slot here, and writes still go to leaders.
	ro := client(t, addr, 2)
	require.NoError(t, ro.Do(ctx, "READONLY").Err())
	require.ErrorIs(t, ro.Get(ctx, moved).Err(), redis.Nil)
	require.ErrorContains(t, ro.Set(ctx, moved, "v", 0).Err(), "MOVED")
	require.NoError(t, ro.Do(ctx, "READWRITE").Err())
	require.ErrorContains(t, ro.Get(ctx, moved).Err(), "MOVED")

	// MULTI queues only what this node serves.
	tx := rc.TxPipeline()
	set := tx.Set(ctx, moved, "x", 0)
	_, err = tx.Exec(ctx)
	require.ErrorContains(t, err, "EXECABORT")
	require.ErrorContains(t, set.Err(), "MOVED")

	//lint:ignore SA1019 the command go-redis's ClusterClient reads
	slots, err := rc.ClusterSlots(ctx).Result()
	require.NoError(t, err)
	require.Len(t, slots, 2, "a shard without a leader is left out")
	require.Equal(t, redis.ClusterSlot{Start: 0, End: 5461, Nodes: []redis.ClusterNode{
		{ID: fc.Self(), Addr: "127.0.0.1:7000"}, {ID: strings.Repeat("b", 40), Addr: "127.0.0.1:7001"}, {ID: strings.Repeat("c", 40), Addr: "127.0.0.1:7002"},
	}}, slots[0])
	shards, err := rc.ClusterShards(ctx).Result()
	require.NoError(t, err)
	require.Len(t, shards, 3)
	require.Equal(t, []redis.SlotRange{{Start: 5462, End: 10922}}, shards[1].Slots)
	require.Equal(t, "master", shards[1].Nodes[0].Role)
	require.Equal(t, "replica", shards[1].Nodes[1].Role)
	require.Equal(t, "fail", shards[0].Nodes[2].Health)
	require.Equal(t, int64(9), shards[0].Nodes[0].ReplicationOffset)
	nodes, err := rc.ClusterNodes(ctx).Result()
	require.NoError(t, err)
	require.Contains(t, nodes, fc.Self()+" 127.0.0.1:7000@17000 myself,master - 0 0 0 connected 0-5461\n")
	require.Contains(t, nodes, strings.Repeat("c", 40)+" 127.0.0.1:7002@17002 master,fail - 0 0 0 disconnected\n")
	info, err := rc.ClusterInfo(ctx).Result()
	require.NoError(t, err)
	require.Contains(t, info, "cluster_state:fail")
	require.Contains(t, info, "cluster_slots_ok:10923")
	require.Equal(t, fc.Self(), rc.ClusterMyID(ctx).Val())
	require.Equal(t, int64(12182), rc.ClusterKeySlot(ctx, "foo").Val())
	require.NoError(t, rc.Do(ctx, "ASKING").Err())
	repl, err := rc.Info(ctx, "replication").Result()
	require.NoError(t, err)
	for _, want := range []string{"role:master", "connected_slaves:1", "cluster_shards_led:1", "cluster_shards_followed:2", "shard0:role=leader,offset=9", "shard1:role=follower"} {
		require.Contains(t, repl, want)
	}
	help, err := rc.Do(ctx, "CLUSTER", "HELP").StringSlice()
	require.NoError(t, err)
	require.Contains(t, help, "SHARDS")
}
