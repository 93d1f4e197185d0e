package matrixraft

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// kvSM is the test state machine: put, append and get over string keys.
// Commands: "p<key>\x00<value>" and "a<key>\x00<value>"; a result is the
// value after the command. Wrapped in capturingKV it is a
// SnapshotCapturer.
type kvSM struct {
	mu      sync.Mutex
	data    map[string]string
	applied uint64
	// shared says a capture holds data: the next write copies it first.
	shared bool
}

func newKV() *kvSM { return &kvSM{data: map[string]string{}} }

func kvCmd(op byte, key, value string) []byte {
	return append(append([]byte{op}, key+"\x00"...), value...)
}

func (s *kvSM) Apply(batch []Command) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, len(batch))
	if s.shared && len(batch) > 0 {
		s.data, s.shared = maps.Clone(s.data), false
	}
	for i, c := range batch {
		k, v, _ := bytes.Cut(c.Data[1:], []byte{0})
		switch c.Data[0] {
		case 'p':
			s.data[string(k)] = string(v)
		case 'a':
			s.data[string(k)] += string(v)
		}
		out[i] = []byte(s.data[string(k)])
		s.applied = c.Index
	}
	return out
}

func (s *kvSM) Snapshot(w io.Writer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return json.NewEncoder(w).Encode(s.data)
}

func (s *kvSM) Restore(r io.Reader) error {
	m := map[string]string{}
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return err
	}
	s.mu.Lock()
	s.data, s.shared = m, false
	s.mu.Unlock()
	return nil
}

// capturingKV is kvSM as a SnapshotCapturer: a capture is the map itself,
// copied on the next write rather than now.
type capturingKV struct{ *kvSM }

func (s capturingKV) CaptureSnapshot() (io.WriterTo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shared = true
	return jsonCapture{s.data}, nil
}

// jsonCapture writes a map as kvSM.Snapshot does.
type jsonCapture struct{ m map[string]string }

func (c jsonCapture) WriteTo(w io.Writer) (int64, error) {
	b, err := json.Marshal(c.m)
	if err != nil {
		return 0, err
	}
	n, err := w.Write(append(b, '\n'))
	return int64(n), err
}

// withCapture makes a cluster's state machines SnapshotCapturers.
func withCapture(o *Options) {
	if kv, ok := o.StateMachine.(*kvSM); ok {
		o.StateMachine = capturingKV{kv}
	}
}

func (s *kvSM) get(k string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.data[k]
}

// cluster is the deterministic in-memory harness: a seeded MemNetwork,
// nodes with manual ticks, and a driver that ticks every live node and the
// network in rounds.
type cluster struct {
	t     *testing.T
	nw    *MemNetwork
	dirs  map[uint64]string
	mu    sync.Mutex
	nodes map[uint64]*Node
	sms   map[uint64]*kvSM
	peers []Peer
	opts  func(*Options)

	stopTick chan struct{}
	tickDone chan struct{}
	roundMu  sync.Mutex
	round    uint64
	roundC   *sync.Cond
	frozen   map[uint64]bool
}

func newCluster(t *testing.T, n int, seed uint64, opts func(*Options)) *cluster {
	c := &cluster{t: t, nw: NewMemNetwork(seed), dirs: map[uint64]string{}, nodes: map[uint64]*Node{}, sms: map[uint64]*kvSM{}, opts: opts, frozen: map[uint64]bool{}}
	c.roundC = sync.NewCond(&c.roundMu)
	for i := 1; i <= n; i++ {
		c.peers = append(c.peers, Peer{ID: uint64(i), Addr: fmt.Sprintf("n%d", i)})
	}
	for _, p := range c.peers {
		c.start(p.ID, c.peers)
	}
	c.stopTick, c.tickDone = make(chan struct{}), make(chan struct{})
	go c.driver()
	t.Cleanup(c.stopAll)
	return c
}

// driver ticks every live, unfrozen node and the network in rounds. Each
// round is one raft tick; pacing keeps it from outrunning the loops.
func (c *cluster) driver() {
	defer close(c.tickDone)
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-c.stopTick:
			return
		case <-t.C:
		}
		c.mu.Lock()
		var live []*Node
		for id, n := range c.nodes {
			if !c.frozen[id] {
				live = append(live, n)
			}
		}
		c.mu.Unlock()
		for _, n := range live {
			n.Tick()
		}
		c.nw.Tick()
		c.roundMu.Lock()
		c.round++
		c.roundC.Broadcast()
		c.roundMu.Unlock()
	}
}

func (c *cluster) start(id uint64, peers []Peer) *Node {
	c.mu.Lock()
	dir, ok := c.dirs[id]
	if !ok {
		dir = c.t.TempDir()
		c.dirs[id] = dir
	}
	c.mu.Unlock()
	sm := newKV()
	o := Options{
		ID: id, Dir: dir, Peers: peers, StateMachine: sm, Transport: c.nw.Transport(id),
		ManualTick: true, SnapshotEntries: 200, CatchUpEntries: 50,
		Storage: StorageOptions{WAL: wal.Options{SegmentSize: 256 << 10, Sync: wal.SyncNever}},
	}
	if c.opts != nil {
		c.opts(&o)
	}
	n, err := StartNode(o)
	require.NoError(c.t, err)
	c.mu.Lock()
	c.nodes[id], c.sms[id] = n, sm
	c.mu.Unlock()
	return n
}

func (c *cluster) stop(id uint64) {
	c.mu.Lock()
	n := c.nodes[id]
	delete(c.nodes, id)
	c.mu.Unlock()
	if n != nil {
		n.Stop()
	}
}

func (c *cluster) restart(id uint64) *Node {
	c.stop(id)
	return c.start(id, nil)
}

func (c *cluster) stopAll() {
	select {
	case <-c.stopTick:
	default:
		close(c.stopTick)
		<-c.tickDone
	}
	c.mu.Lock()
	nodes := c.nodes
	c.nodes = map[uint64]*Node{}
	c.mu.Unlock()
	for _, n := range nodes {
		n.Stop()
	}
}

func (c *cluster) node(id uint64) *Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[id]
}

func (c *cluster) sm(id uint64) *kvSM {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sms[id]
}

func (c *cluster) live() []*Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Node
	for _, n := range c.nodes {
		out = append(out, n)
	}
	return out
}

// waitRounds blocks until cond holds, checking after every driver round,
// and fails after max rounds.
func (c *cluster) waitRounds(max uint64, what string, cond func() bool) {
	c.t.Helper()
	c.roundMu.Lock()
	start := c.round
	c.roundMu.Unlock()
	for !cond() {
		c.roundMu.Lock()
		if c.round-start > max {
			c.roundMu.Unlock()
			c.t.Fatalf("not reached after %d ticks: %s", max, what)
		}
		cur := c.round
		for c.round == cur {
			c.roundC.Wait()
		}
		c.roundMu.Unlock()
	}
}

// until is waitRounds without failing: it reports whether cond held.
func (c *cluster) until(max uint64, cond func() bool) bool {
	c.roundMu.Lock()
	defer c.roundMu.Unlock()
	start := c.round
	for {
		c.roundMu.Unlock()
		ok := cond()
		c.roundMu.Lock()
		if ok {
			return true
		}
		if c.round-start > max {
			return false
		}
		cur := c.round
		for c.round == cur {
			c.roundC.Wait()
		}
	}
}

// pass lets n driver rounds go by.
func (c *cluster) pass(n uint64) { c.until(n, func() bool { return false }) }

// tryLeader is leader without failing: nil when none emerged.
func (c *cluster) tryLeader() *Node {
	var lead *Node
	c.until(3000, func() bool { lead = c.anyLeader(); return lead != nil })
	return lead
}

// leader waits for a live node that sees itself as leader, agreed by the
// other live nodes of its partition, and returns it.
func (c *cluster) leader() *Node {
	c.t.Helper()
	var lead *Node
	c.waitRounds(3000, "a leader", func() bool {
		for _, n := range c.live() {
			if n.Leader() == n.ID() && n.Status().IsLeader {
				lead = n
				return true
			}
		}
		return false
	})
	return lead
}

func TestClusterBasics(t *testing.T) {
	c := newCluster(t, 3, 1, nil)
	lead := c.leader()
	ctx := t.Context()
	for i := range 50 {
		res, err := lead.Propose(ctx, kvCmd('a', "k", fmt.Sprint(i%10)))
		require.NoError(t, err)
		require.NotEmpty(t, res)
	}
	for _, n := range c.live() {
		require.NoError(t, n.Read(ctx, ReadLinearizable))
		require.Len(t, c.sm(n.ID()).get("k"), 50, "node %d", n.ID())
	}
	// A follower answers with the leader's ID.
	for _, n := range c.live() {
		if n != lead {
			_, err := n.Propose(ctx, kvCmd('p', "x", "y"))
			var nl *NotLeaderError
			require.ErrorAs(t, err, &nl)
			require.Equal(t, lead.ID(), nl.Leader)
		}
	}
	st := lead.Status()
	require.True(t, st.IsLeader)
	require.Equal(t, []uint64{1, 2, 3}, st.Voters)
	require.Len(t, st.Peers, 2)
}

// A proposal pending when its leader loses leadership is answered with
// ErrUnknownOutcome, even when its context has no deadline: it must not
// wait for an answer that may never come.
func TestProposalPendingAcrossALeadershipChange(t *testing.T) {
	c := newCluster(t, 3, 7, nil)
	lead := c.leader()
	c.nw.Isolate(lead.ID())
	errc := make(chan error, 1)
	go func() {
		_, err := lead.Propose(context.Background(), kvCmd('p', "lost", "v"))
		errc <- err
	}()
	// CheckQuorum makes the isolated leader step down; a new leader is
	// elected among the others.
	var err error
	c.waitRounds(5000, "the pending proposal answered", func() bool {
		select {
		case err = <-errc:
			return true
		default:
			return false
		}
	})
	require.ErrorIs(t, err, ErrUnknownOutcome)
	c.nw.Heal()
	newLead := c.leader()
	res, err := newLead.Propose(t.Context(), kvCmd('p', "after", "v"))
	require.NoError(t, err)
	require.NotEmpty(t, res)
}
