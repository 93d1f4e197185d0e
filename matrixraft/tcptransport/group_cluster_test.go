package tcptransport

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

// groupCluster runs nodes as processes of a sharded database would: each
// node has one matrixraft.Host (one shared log) and one TCP transport, and
// runs a member of every raft group on them.
type groupCluster struct {
	t      *testing.T
	groups []uint64
	mu     sync.Mutex
	trs    map[uint64]*Transport
	hosts  map[uint64]*matrixraft.Host
	nodes  map[[2]uint64]*matrixraft.Node // by {group, node ID}
	sms    map[[2]uint64]*kv
}

func newGroupCluster(t *testing.T, nodes, groups int) *groupCluster {
	c := &groupCluster{t: t, trs: map[uint64]*Transport{}, hosts: map[uint64]*matrixraft.Host{},
		nodes: map[[2]uint64]*matrixraft.Node{}, sms: map[[2]uint64]*kv{}}
	for g := 1; g <= groups; g++ {
		c.groups = append(c.groups, uint64(g))
	}
	t.Cleanup(c.stopAll)
	// Bind every listener first: the bootstrap peer list needs the ports.
	var peers []matrixraft.Peer
	for i := 1; i <= nodes; i++ {
		id := uint64(i)
		tr, err := New(Options{ID: id, ListenAddr: "127.0.0.1:0", MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
		require.NoError(t, err)
		c.trs[id] = tr
		peers = append(peers, matrixraft.Peer{ID: id, Addr: tr.Addr().String()})
	}
	for id, tr := range c.trs {
		host, err := matrixraft.OpenHost(t.TempDir(), matrixraft.HostOptions{})
		require.NoError(t, err)
		c.hosts[id] = host
		for _, g := range c.groups {
			sm := newKV()
			n, err := host.StartNode(matrixraft.Options{ID: id, Peers: peers, StateMachine: sm,
				Transport: tr.Group(g), Storage: matrixraft.StorageOptions{Group: g},
				TickInterval: 10 * time.Millisecond, ElectionTick: 10, HeartbeatTick: 1})
			require.NoError(t, err)
			c.nodes[[2]uint64{g, id}], c.sms[[2]uint64{g, id}] = n, sm
		}
	}
	return c
}

// stop takes node id down as a whole process: its transport first, so
// every group loses it at once, then its raft nodes and its host.
func (c *groupCluster) stop(id uint64) {
	c.mu.Lock()
	tr, host := c.trs[id], c.hosts[id]
	delete(c.trs, id)
	delete(c.hosts, id)
	var nodes []*matrixraft.Node
	for key, n := range c.nodes {
		if key[1] == id {
			nodes = append(nodes, n)
			delete(c.nodes, key)
		}
	}
	c.mu.Unlock()
	if tr != nil {
		require.NoError(c.t, tr.Close())
	}
	for _, n := range nodes {
		n.Stop() // closes its group's view of the closed transport
	}
	if host != nil {
		require.NoError(c.t, host.Close())
	}
}

func (c *groupCluster) stopAll() {
	c.mu.Lock()
	var ids []uint64
	for id := range c.trs {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	for _, id := range ids {
		c.stop(id)
	}
}

// live returns group's running nodes.
func (c *groupCluster) live(group uint64) []*matrixraft.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*matrixraft.Node
	for key, n := range c.nodes {
		if key[0] == group {
			out = append(out, n)
		}
	}
	return out
}

func (c *groupCluster) leader(group uint64) *matrixraft.Node {
	c.t.Helper()
	var lead *matrixraft.Node
	require.Eventually(c.t, func() bool {
		for _, n := range c.live(group) {
			if n.Status().IsLeader {
				lead = n
				return true
			}
		}
		return false
	}, 20*time.Second, 10*time.Millisecond, "group %d elected no leader", group)
	return lead
}

// put proposes key=value in group through its leader, retrying across
// elections.
func (c *groupCluster) put(group uint64, key, value string) {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := c.leader(group).Propose(c.t.Context(), []byte(key+"="+value))
		if err == nil {
			return
		}
		require.True(c.t, time.Now().Before(deadline), "group %d: put %s: %v", group, key, err)
		time.Sleep(20 * time.Millisecond)
	}
}

// converged waits until group's every running node has applied key with
// value, and checks no other group has that key.
func (c *groupCluster) converged(group uint64, key, value string) {
	c.t.Helper()
	require.Eventually(c.t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for k := range c.nodes {
			v, ok := c.sms[k].get(key)
			if k[0] == group && v != value || k[0] != group && ok {
				return false
			}
		}
		return true
	}, 20*time.Second, 10*time.Millisecond, "group %d did not converge on %s=%s", group, key, value)
}

func TestGroupsClusterOverTCP(t *testing.T) {
	c := newGroupCluster(t, 3, 3)
	for _, g := range c.groups {
		c.leader(g)
	}
	for i := range 20 {
		for _, g := range c.groups {
			c.put(g, fmt.Sprintf("g%d-k%d", g, i), fmt.Sprint(i))
		}
	}
	for _, g := range c.groups {
		c.converged(g, fmt.Sprintf("g%d-k19", g), "19")
	}
	c.mu.Lock()
	for id, tr := range c.trs {
		st := tr.Stats()
		require.Len(t, st.Peers, 2, "node %d", id)
		require.Positive(t, st.GroupMessagesSent)
		require.Positive(t, st.GroupMessagesReceived)
		require.Equal(t, st.MessagesSent, st.GroupMessagesSent, "every message belongs to a group")
		require.Equal(t, 2, inboundConns(tr), "node %d: one connection per peer for all groups", id)
	}
	c.mu.Unlock()

	// Take down the node leading group 1, transport and host together:
	// every group carries on with the other two.
	down := c.leader(1).ID()
	c.stop(down)
	for _, g := range c.groups {
		require.NotEqual(t, down, c.leader(g).ID())
		c.put(g, fmt.Sprintf("g%d-after", g), "down")
	}
	for _, g := range c.groups {
		c.converged(g, fmt.Sprintf("g%d-after", g), "down")
		require.Len(t, c.live(g), 2)
	}
}
