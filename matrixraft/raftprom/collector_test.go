package raftprom_test

import (
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/temporalstore/temporalstore-go/matrixraft"
	"github.com/temporalstore/temporalstore-go/matrixraft/raftprom"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// countSM counts applied commands.
type countSM struct {
	mu sync.Mutex
	n  int
}

func (s *countSM) Apply(batch []matrixraft.Command) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n += len(batch)
	return make([][]byte, len(batch))
}
func (s *countSM) Snapshot(w io.Writer) error { _, err := fmt.Fprint(w, "x"); return err }
func (s *countSM) Restore(r io.Reader) error  { _, err := io.ReadAll(r); return err }

// startCluster starts three durable nodes (real files, fdatasync on) on an
// in-memory network with a 2 ms tick, and returns them.
func startCluster(t *testing.T) []*matrixraft.Node {
	nw := matrixraft.NewMemNetwork(1)
	peers := []matrixraft.Peer{{ID: 1, Addr: "n1"}, {ID: 2, Addr: "n2"}, {ID: 3, Addr: "n3"}}
	var nodes []*matrixraft.Node
	for _, p := range peers {
		n, err := matrixraft.StartNode(matrixraft.Options{
			ID: p.ID, Dir: t.TempDir(), Peers: peers, StateMachine: &countSM{},
			Transport: nw.Transport(p.ID), TickInterval: 2 * time.Millisecond,
		})
		require.NoError(t, err)
		t.Cleanup(n.Stop)
		nodes = append(nodes, n)
	}
	return nodes
}

func waitLeader(t *testing.T, nodes []*matrixraft.Node) *matrixraft.Node {
	var lead *matrixraft.Node
	require.Eventually(t, func() bool {
		for _, n := range nodes {
			if st := n.Status(); st.IsLeader {
				lead = n
				return true
			}
		}
		return false
	}, 10*time.Second, time.Millisecond)
	return lead
}

// gather scrapes c from a fresh pedantic registry (which checks every
// metric against its Desc) and indexes the families by name.
func gather(t *testing.T, c prometheus.Collector) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

func value(t *testing.T, mfs map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	mf, ok := mfs[name]
	require.True(t, ok, "metric %s missing", name)
	m := mf.GetMetric()[0]
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetHistogram() != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	t.Fatalf("metric %s has no value", name)
	return 0
}

func TestCollectorMovesWithProposals(t *testing.T) {
	nodes := startCluster(t)
	lead := waitLeader(t, nodes)
	c := raftprom.NewCollector(lead, raftprom.Options{ConstLabels: prometheus.Labels{"group": "1"}})
	before := gather(t, c)

	ctx := t.Context()
	const proposals = 40
	for i := range proposals {
		_, err := lead.Propose(ctx, fmt.Appendf(nil, "cmd-%d", i))
		require.NoError(t, err)
	}
	require.NoError(t, lead.Read(ctx, matrixraft.ReadLinearizable))
	after := gather(t, c)

	tests := []struct {
		name string
		want func(before, after float64) bool
	}{
		{"matrixraft_has_leader", func(_, a float64) bool { return a == 1 }},
		{"matrixraft_is_leader", func(_, a float64) bool { return a == 1 }},
		{"matrixraft_term", func(_, a float64) bool { return a >= 1 }},
		{"matrixraft_voters", func(_, a float64) bool { return a == 3 }},
		{"matrixraft_leader_changes_total", func(_, a float64) bool { return a >= 1 }},
		{"matrixraft_proposals_committed_total", func(b, a float64) bool { return a-b == proposals }},
		{"matrixraft_proposals_pending", func(_, a float64) bool { return a == 0 }},
		{"matrixraft_commit_index", func(b, a float64) bool { return a-b >= proposals }},
		{"matrixraft_applied_index", func(b, a float64) bool { return a-b >= proposals }},
		{"matrixraft_wal_fsyncs_total", func(b, a float64) bool { return a > b }},
		{"matrixraft_wal_fsync_duration_seconds", func(b, a float64) bool { return a > b }},
		{"matrixraft_ready_entries_total", func(b, a float64) bool { return a-b >= proposals }},
		{"matrixraft_ready_batch_entries", func(b, a float64) bool { return a > b }},
		{"matrixraft_save_duration_seconds", func(b, a float64) bool { return a > b }},
		{"matrixraft_read_index_duration_seconds", func(b, a float64) bool { return a-b == 1 }},
		{"matrixraft_messages_sent_total", func(b, a float64) bool { return a > b }},
		{"matrixraft_messages_received_total", func(b, a float64) bool { return a > b }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, a := value(t, before, tt.name), value(t, after, tt.name)
			require.True(t, tt.want(b, a), "%s: before %v, after %v", tt.name, b, a)
		})
	}

	// The leader exports each follower's match and lag.
	peers := after["matrixraft_peer_match_index"].GetMetric()
	require.Len(t, peers, 2)
	for _, m := range peers {
		require.GreaterOrEqual(t, m.GetGauge().GetValue(), float64(proposals))
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		require.Equal(t, "1", labels["group"])
		require.Contains(t, []string{"1", "2", "3"}, labels["peer"])
	}

	// Heartbeats measure each follower's round trip.
	require.Eventually(t, func() bool {
		rtts := gather(t, c)["matrixraft_peer_round_trip_seconds"].GetMetric()
		if len(rtts) != 2 {
			return false
		}
		for _, m := range rtts {
			if v := m.GetGauge().GetValue(); v <= 0 || v > 5 {
				return false
			}
		}
		return true
	}, 10*time.Second, 20*time.Millisecond)

	// Transport counters are exported when the caller gives them.
	var sent uint64 = 1234
	ct := raftprom.NewCollector(lead, raftprom.Options{Transport: func() raftprom.TransportStats {
		return raftprom.TransportStats{BytesSent: sent, BytesReceived: 99, MessagesDropped: 3}
	}})
	got := gather(t, ct)
	require.Equal(t, 1234.0, value(t, got, "matrixraft_transport_sent_bytes_total"))
	require.Equal(t, 99.0, value(t, got, "matrixraft_transport_received_bytes_total"))
	require.Equal(t, 3.0, value(t, got, "matrixraft_transport_dropped_messages_total"))
	require.NotContains(t, after, "matrixraft_transport_sent_bytes_total", "not exported without a source")

	// A histogram's sum is a real duration sum, not a placeholder.
	h := after["matrixraft_save_duration_seconds"].GetMetric()[0].GetHistogram()
	require.Greater(t, h.GetSampleSum(), 0.0)
	require.Less(t, h.GetSampleSum(), float64(h.GetSampleCount())*10)
}

func TestCollectorFollowerAndLint(t *testing.T) {
	nodes := startCluster(t)
	lead := waitLeader(t, nodes)
	var follower *matrixraft.Node
	for _, n := range nodes {
		if n != lead {
			follower = n
		}
	}
	require.Eventually(t, func() bool { return follower.Leader() == lead.ID() }, 10*time.Second, time.Millisecond)
	c := raftprom.NewCollector(follower, raftprom.Options{Namespace: "kv"})
	mfs := gather(t, c)
	require.Equal(t, 0.0, value(t, mfs, "kv_is_leader"))
	require.Equal(t, 1.0, value(t, mfs, "kv_has_leader"))
	_, ok := mfs["kv_peer_match_index"]
	require.False(t, ok, "a follower exports no peer metrics")

	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	require.Empty(t, problems)

	n, err := testutil.GatherAndCount(func() prometheus.Gatherer {
		reg := prometheus.NewRegistry()
		reg.MustRegister(c)
		return reg
	}(), "kv_term")
	require.NoError(t, err)
	require.Equal(t, 1, n)

	// Two collectors for two groups coexist on one registry when their
	// labels differ, and clash when they do not.
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(raftprom.NewCollector(nodes[0], raftprom.Options{ConstLabels: prometheus.Labels{"group": "a"}})))
	require.NoError(t, reg.Register(raftprom.NewCollector(nodes[1], raftprom.Options{ConstLabels: prometheus.Labels{"group": "b"}})))
	err = reg.Register(raftprom.NewCollector(nodes[2], raftprom.Options{ConstLabels: prometheus.Labels{"group": "a"}}))
	var are prometheus.AlreadyRegisteredError
	require.ErrorAs(t, err, &are)
}
