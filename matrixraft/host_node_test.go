package matrixraft

import (
	"context"
	"fmt"
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
