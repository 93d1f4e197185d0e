package matrixraft

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hostCluster is three hosts (as three processes would be), each running
// one node of every group; every group has its own network.
type hostCluster struct {
	t      *testing.T
	dirs   [3]string
	hosts  [3]*Host
	nets   map[uint64]*MemNetwork
	nodes  map[[2]uint64]*Node // {group, node ID}
	sms    map[[2]uint64]*kvSM
	groups []uint64
	opts   HostOptions
}

func newHostCluster(t *testing.T, groups int, opts HostOptions) *hostCluster {
	c := &hostCluster{t: t, nets: map[uint64]*MemNetwork{}, opts: opts}
	for i := range c.dirs {
		c.dirs[i] = t.TempDir()
	}
	for g := uint64(1); g <= uint64(groups); g++ {
		c.groups = append(c.groups, g)
		c.nets[g] = NewMemNetwork(g)
	}
	c.start()
	t.Cleanup(c.stop)
	return c
}

func (c *hostCluster) start() {
	c.nodes, c.sms = map[[2]uint64]*Node{}, map[[2]uint64]*kvSM{}
	peers := []Peer{{ID: 1, Addr: "n1"}, {ID: 2, Addr: "n2"}, {ID: 3, Addr: "n3"}}
	for i := range c.hosts {
		h, err := OpenHost(c.dirs[i], c.opts)
		require.NoError(c.t, err)
		c.hosts[i] = h
	}
	for _, g := range c.groups {
		for i, h := range c.hosts {
			id := uint64(i + 1)
			sm := newKV()
			n, err := h.StartNode(Options{
				ID: id, Peers: peers, StateMachine: sm, Transport: c.nets[g].Transport(id),
				TickInterval: 2 * time.Millisecond, SnapshotEntries: 50, CatchUpEntries: 10,
				Storage: StorageOptions{Group: g},
			})
			require.NoError(c.t, err)
			c.nodes[[2]uint64{g, id}], c.sms[[2]uint64{g, id}] = n, sm
		}
	}
}

func (c *hostCluster) stop() {
	for _, n := range c.nodes {
		n.Stop()
	}
	c.nodes = map[[2]uint64]*Node{}
	for i, h := range c.hosts {
		if h != nil {
			require.NoError(c.t, h.Close())
			c.hosts[i] = nil
		}
	}
}

func (c *hostCluster) leader(g uint64) *Node {
	var lead *Node
	require.Eventually(c.t, func() bool {
		for id := uint64(1); id <= 3; id++ {
			if n := c.nodes[[2]uint64{g, id}]; n.Status().IsLeader {
				lead = n
				return true
			}
		}
		return false
	}, 20*time.Second, time.Millisecond, "group %d has no leader", g)
	return lead
}

// propose puts key=value in group g, retrying through leader changes (a
// put is idempotent).
func (c *hostCluster) propose(ctx context.Context, g uint64, key, value string) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var lead *Node
		for id := uint64(1); id <= 3; id++ {
			if n := c.nodes[[2]uint64{g, id}]; n.Leader() == id {
				lead = n
			}
		}
		if lead == nil {
			time.Sleep(time.Millisecond)
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := lead.Propose(pctx, kvCmd('p', key, value))
		cancel()
		if err == nil {
			return nil
		}
	}
	return fmt.Errorf("group %d: put %s not applied within 20s", g, key)
}

// TestHostGroups runs eight groups on three hosts with durable shared logs,
// writes to all groups at once, restarts every host, and checks that each
// group recovered exactly its own data and that the shared logs made
// fewer fsyncs than the groups' Ready batches waited for.
func TestHostGroups(t *testing.T) {
	const groups, perGroup = 8, 120
	c := newHostCluster(t, groups, HostOptions{})
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, groups*4)
	for _, g := range c.groups {
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < perGroup; i += 4 {
					if err := c.propose(ctx, g, fmt.Sprintf("k%d", i), fmt.Sprintf("g%d-v%d", g, i)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	// Group commit: the groups waited for more durable writes than the
	// shared logs made.
	var waited uint64
	for _, n := range c.nodes {
		waited += n.Status().Fsyncs
	}
	var fsyncs uint64
	for _, h := range c.hosts {
		fsyncs += h.Stats().Fsyncs
	}
	t.Logf("%d groups: %d durable writes waited for, %d fsyncs", groups, waited, fsyncs)
	require.Less(t, fsyncs, waited)

	// Every node of every group converges; snapshots were taken.
	check := func() {
		for _, g := range c.groups {
			lead := c.leader(g)
			require.NoError(t, lead.Read(ctx, ReadLinearizable))
			for id := uint64(1); id <= 3; id++ {
				n, sm := c.nodes[[2]uint64{g, id}], c.sms[[2]uint64{g, id}]
				require.Eventually(t, func() bool {
					return sm.get(fmt.Sprintf("k%d", perGroup-1)) != "" && n.Status().Applied >= lead.Status().Commit
				}, 10*time.Second, time.Millisecond)
				for i := range perGroup {
					require.Equal(t, fmt.Sprintf("g%d-v%d", g, i), sm.get(fmt.Sprintf("k%d", i)), "group %d node %d key %d", g, id, i)
				}
			}
		}
	}
	check()
	require.Positive(t, c.nodes[[2]uint64{1, 1}].Status().SnapshotsCreated)

	c.stop()
	c.start()
	check()
	for _, g := range c.groups {
		require.NoError(t, c.propose(ctx, g, "after", "restart"))
	}
}

// TestHostQuietGroupsReleaseTheLog runs three single-voter groups on one
// host: one keeps writing and snapshotting, one writes a few entries (far
// fewer than its SnapshotEntries) and goes quiet, one goes quiet once its
// snapshot covers all its entries. The shared log's front must keep moving
// past the quiet groups' records — the first is asked for a snapshot, the
// second re-homed — and after the host is abandoned under running nodes
// every group restarts with all it committed. Both Ready loops take the
// request.
func TestHostQuietGroupsReleaseTheLog(t *testing.T) {
	for _, tt := range []struct {
		name  string
		async bool
	}{
		{"Ready loop", false},
		{"AsyncStorageWrites", true},
	} {
		t.Run(tt.name, func(t *testing.T) { testHostQuietGroupsReleaseTheLog(t, tt.async) })
	}
}

func testHostQuietGroupsReleaseTheLog(t *testing.T, async bool) {
	groups := []struct {
		name            string
		group           uint64
		snapshotEntries uint64
		puts            int // before the busy group writes
	}{
		{"busy", 1, 20, 0},
		// Applied entries 1 and 2 are the bootstrap membership change and
		// the leader's empty entry.
		{"quiet, entries after its snapshot", 2, DefaultSnapshotEntries, 5},
		{"quiet, covered by its snapshot", 3, 5, 3},
	}
	dir := t.TempDir()
	opts := HostOptions{WAL: testWAL, MaxPinnedBytes: testWAL.SegmentSize}
	want := map[uint64]map[string]string{}
	start := func(h *Host) (map[uint64]*Node, map[uint64]*kvSM) {
		nodes, sms := map[uint64]*Node{}, map[uint64]*kvSM{}
		for _, g := range groups {
			sm := newKV()
			n, err := h.StartNode(Options{
				ID: 1, Peers: []Peer{{ID: 1, Addr: "n1"}}, StateMachine: sm,
				Transport: NewMemNetwork(g.group).Transport(1), TickInterval: 2 * time.Millisecond,
				SnapshotEntries: g.snapshotEntries, CatchUpEntries: 5, AsyncStorageWrites: async,
				Storage: StorageOptions{Group: g.group},
			})
			require.NoError(t, err)
			t.Cleanup(n.Stop)
			require.NoError(t, n.Campaign(t.Context()))
			require.Eventually(t, func() bool { return n.Status().IsLeader }, 10*time.Second, time.Millisecond, g.name)
			nodes[g.group], sms[g.group] = n, sm
		}
		return nodes, sms
	}
	put := func(n *Node, g uint64, k, v string) {
		_, err := n.Propose(t.Context(), kvCmd('p', k, v))
		require.NoError(t, err)
		if want[g] == nil {
			want[g] = map[string]string{}
		}
		want[g][k] = v
	}

	h, err := OpenHost(dir, opts)
	require.NoError(t, err)
	nodes, _ := start(h)
	for _, g := range groups {
		for i := range g.puts {
			put(nodes[g.group], g.group, fmt.Sprintf("k%d", i), fmt.Sprintf("g%d-%d", g.group, i))
		}
	}
	require.Eventually(t, func() bool { return nodes[3].Status().SnapshotIndex == 5 }, 10*time.Second, time.Millisecond)
	require.Zero(t, nodes[2].Status().SnapshotIndex)

	// The busy group writes incompressible values, filling a testWAL
	// segment every ~30 entries (150 fill 5); it snapshots every 20, so it
	// holds about a segment back itself, two if a snapshot lags.
	r := rand.New(rand.NewPCG(7, 8))
	value := func() string {
		b := make([]byte, 1800)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	for round := range 2 {
		quietLast := h.log.LastIndex()
		for i := range 150 {
			put(nodes[1], 1, fmt.Sprintf("k%d", i%10), value())
		}
		// Compaction runs after the busy group's snapshots: the quiet
		// groups' records must be gone from the front (the asked-for
		// snapshot is taken beside the busy group's writes, so wait for
		// the compaction after it).
		require.Eventually(t, func() bool {
			st := h.Stats()
			return st.FirstIndex > quietLast && st.Segments <= 5
		}, 10*time.Second, time.Millisecond, "round %d: log %+v, quiet groups' last record %d", round, h.Stats(), quietLast)
	}
	require.Positive(t, nodes[2].Status().SnapshotsForced, "the quiet group with entries was asked for a snapshot")
	require.Positive(t, nodes[3].Status().Rehomes, "the covered quiet group was re-homed")
	require.Zero(t, nodes[3].Status().SnapshotsForced, "a covered group is re-homed, never asked")

	// Abandon the host under its running nodes, as a crash would: nothing
	// more reaches the log, not even the flush on Stop.
	require.NoError(t, h.Close())
	for _, n := range nodes {
		n.Stop()
	}

	h, err = OpenHost(dir, opts)
	require.NoError(t, err)
	defer h.Close()
	require.Equal(t, []uint64{1, 2, 3}, h.Groups())
	nodes, sms := start(h)
	for _, g := range groups {
		n := nodes[g.group]
		require.NoError(t, n.Read(t.Context(), ReadLinearizable), g.name)
		require.Equal(t, want[g.group], sms[g.group].snapshotData(), g.name)
		require.Positive(t, n.Status().SnapshotIndex, g.name)
	}
	// The restarted groups go on.
	for _, g := range groups {
		put(nodes[g.group], g.group, "after", "restart")
	}
	for _, n := range nodes {
		n.Stop()
	}
}
