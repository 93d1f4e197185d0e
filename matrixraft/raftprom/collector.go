package raftprom

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/temporalstore/temporalstore-go/matrixraft"
	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
)

// DefaultNamespace is the prefix of every metric name unless
// Options.Namespace says otherwise.
const DefaultNamespace = "matrixraft"

// Options configure NewCollector.
type Options struct {
	// Namespace is the first part of every metric name. Default (empty):
	// DefaultNamespace ("matrixraft").
	Namespace string
	// Transport, when set, reports the transport's byte and drop counts
	// (for example a tcptransport.Transport's Stats), exported as
	// transport_sent_bytes_total, transport_received_bytes_total and
	// transport_dropped_messages_total. Default: nil, not exported.
	Transport func() TransportStats
	// ConstLabels are added to every metric, for example
	// prometheus.Labels{"group": "7"} to tell the groups of one process
	// apart. The label name "peer" is taken by the per-peer metrics.
	// Default: none.
	ConstLabels prometheus.Labels
}

func (o Options) withDefaults() Options {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	return o
}

// TransportStats are the transport counters a Collector exports.
type TransportStats struct {
	BytesSent, BytesReceived, MessagesDropped uint64
}

// StatusSource is what a Collector needs of a node: *matrixraft.Node
// implements it.
type StatusSource interface {
	Status() matrixraft.Status
}

// field is one number of a Status: its metric name after the namespace, its
// help, its type and how to read it.
type field struct {
	name, help string
	typ        prometheus.ValueType
	get        func(*matrixraft.Status) float64
}

type latencyField struct {
	name, help string
	get        func(*matrixraft.Status) matrixraft.Latency
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// fields are every scalar the Collector exports. They are never modified.
var fields = []field{
	{"has_leader", "1 when this node knows of a leader, else 0.", prometheus.GaugeValue, func(s *matrixraft.Status) float64 { return b2f(s.HasLeader) }},
	{"is_leader", "1 when this node is the leader, else 0.", prometheus.GaugeValue, func(s *matrixraft.Status) float64 { return b2f(s.IsLeader) }},
	{"term", "The node's raft term.", prometheus.GaugeValue, func(s *matrixraft.Status) float64 { return float64(s.Term) }},
	{"commit_index", "The highest log index known to be committed.", prometheus.GaugeValue, func(s *matrixraft.Status) float64 { return float64(s.Commit) }},
	{"applied_index", "The highest log index applied to the state machine.", prometheus.GaugeValue, func(s *matrixraft.Status) float64 { return float64(s.Applied) }},
	{"snapshot_index", "The index of the newest durable snapshot.", prometheus.GaugeValue, func(s *matrixraft.Status) float64 { return float64(s.SnapshotIndex) }},
	{"voters", "Voters in the node's configuration.", prometheus.GaugeValue, func(s *matrixraft.Status) float64 { return float64(len(s.Voters)) }},
	{"learners", "Learners in the node's configuration.", prometheus.GaugeValue, func(s *matrixraft.Status) float64 { return float64(len(s.Learners)) }},
	{"leader_changes_total", "Changes of the leader this node has seen.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.LeaderChanges) }},
	{"proposals_pending", "Proposals waiting to be applied on this node.", prometheus.GaugeValue, func(s *matrixraft.Status) float64 { return float64(s.ProposalsPending) }},
	{"proposals_committed_total", "Commands applied to the state machine.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.ProposalsCommitted) }},
	{"proposals_failed_total", "Proposals that returned an error or whose caller gave up after they were handed to raft.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.ProposalsFailed) }},
	{"proposals_dropped_total", "Proposals raft refused (no leader, backpressure, conf change pending).", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.ProposalsDropped) }},
	{"wal_fsyncs_total", "Durable log writes this node waited for.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.Fsyncs) }},
	{"ready_batches_total", "Ready batches handled.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.Readies) }},
	{"ready_entries_total", "Log entries persisted by Ready batches.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.ReadyEntries) }},
	{"read_index_failures_total", "Linearizable reads that failed or were abandoned.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.ReadFailures) }},
	{"read_index_retries_total", "ReadIndex requests re-sent under a fresh ID.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.ReadRetries) }},
	{"lease_reads_total", "Reads served on the leader's lease (ReadLease), without a round to a quorum.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.LeaseReads) }},
	{"messages_sent_total", "Raft messages handed to the transport.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.MessagesSent) }},
	{"messages_received_total", "Raft messages received from the transport.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.MessagesReceived) }},
	{"transport_unreachable_total", "Messages the transport reported it could not send (the drops this node knows of).", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.Unreachable) }},
	{"snapshot_send_failures_total", "Snapshots the transport failed to deliver.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.SnapshotSendFailures) }},
	{"snapshots_created_total", "Snapshots this node took of its state machine.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.SnapshotsCreated) }},
	{"snapshots_installed_total", "Snapshots received from a leader and restored.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.SnapshotsInstalled) }},
	{"snapshots_forced_total", "Snapshots taken before the entries threshold because the group held a Host's shared log back.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.SnapshotsForced) }},
	{"wal_rehomes_total", "Times a Host wrote this group's state again at the head of its shared log so older records could be dropped.", prometheus.CounterValue, func(s *matrixraft.Status) float64 { return float64(s.Rehomes) }},
}

var latencies = []latencyField{
	{"ready_duration_seconds", "Time to handle one Ready batch, from receipt to Advance.", func(s *matrixraft.Status) matrixraft.Latency { return s.ReadyLatency }},
	{"save_duration_seconds", "Time to persist one Ready batch (write and fsync).", func(s *matrixraft.Status) matrixraft.Latency { return s.SaveLatency }},
	{"snapshot_save_duration_seconds", "Time to take and persist a snapshot.", func(s *matrixraft.Status) matrixraft.Latency { return s.SnapshotSaveLatency }},
	{"snapshot_capture_duration_seconds", "Time the Ready loop spent capturing a snapshot's state (part of snapshot_save_duration_seconds).", func(s *matrixraft.Status) matrixraft.Latency { return s.SnapshotCaptureLatency }},
	{"snapshot_apply_duration_seconds", "Time to restore a received snapshot into the state machine.", func(s *matrixraft.Status) matrixraft.Latency { return s.SnapshotApplyLatency }},
	{"read_index_duration_seconds", "Time for a linearizable read to be confirmed and applied locally.", func(s *matrixraft.Status) matrixraft.Latency { return s.ReadLatency }},
}

// Collector is a prometheus.Collector over one node. Create it with
// NewCollector.
type Collector struct {
	src        StatusSource
	scalars    []*prometheus.Desc
	hists      []*prometheus.Desc
	fsync      *prometheus.Desc
	readySizes *prometheus.Desc
	peerMatch  *prometheus.Desc
	peerLag    *prometheus.Desc
	peerRTT    *prometheus.Desc
	transport  func() TransportStats
	tSent      *prometheus.Desc
	tRecv      *prometheus.Desc
	tDropped   *prometheus.Desc
}

// NewCollector returns a Collector that exports src's Status. An invalid
// namespace or constant label is reported when the Collector is registered.
func NewCollector(src StatusSource, o Options) *Collector {
	o = o.withDefaults()
	newDesc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(o.Namespace, "", name), help, labels, o.ConstLabels)
	}
	c := &Collector{src: src}
	for _, f := range fields {
		c.scalars = append(c.scalars, newDesc(f.name, f.help))
	}
	for _, f := range latencies {
		c.hists = append(c.hists, newDesc(f.name, f.help))
	}
	c.fsync = newDesc("wal_fsync_duration_seconds", "fdatasync latency of the node's log.")
	c.readySizes = newDesc("ready_batch_entries", "Log entries persisted per Ready batch that had any.")
	c.peerMatch = newDesc("peer_match_index", "The highest log index known to be replicated on the peer (leader only).", "peer")
	c.peerLag = newDesc("peer_lag_entries", "The leader's last index minus the peer's match index (leader only).", "peer")
	c.peerRTT = newDesc("peer_round_trip_seconds", "The last measured round trip of a heartbeat to the peer and its answer (leader only).", "peer")
	c.transport = o.Transport
	c.tSent = newDesc("transport_sent_bytes_total", "Bytes the transport wrote to peers.")
	c.tRecv = newDesc("transport_received_bytes_total", "Bytes the transport read from peers.")
	c.tDropped = newDesc("transport_dropped_messages_total", "Outbound messages the transport dropped.")
	return c
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.scalars {
		ch <- d
	}
	for _, d := range c.hists {
		ch <- d
	}
	ch <- c.fsync
	ch <- c.readySizes
	ch <- c.peerMatch
	ch <- c.peerLag
	ch <- c.peerRTT
	if c.transport != nil {
		ch <- c.tSent
		ch <- c.tRecv
		ch <- c.tDropped
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.src.Status()
	for i, f := range fields {
		ch <- prometheus.MustNewConstMetric(c.scalars[i], f.typ, f.get(&s))
	}
	for i, f := range latencies {
		h := f.get(&s)
		ch <- latencyHistogram(c.hists[i], h.Counts[:], h.Sum.Seconds(), matrixraft.LatencyBucketBound)
	}
	ch <- latencyHistogram(c.fsync, s.WAL.FsyncLatency.Counts[:], s.WAL.FsyncLatency.Sum.Seconds(), wal.BucketBound)
	buckets := make(map[float64]uint64, matrixraft.SizeBuckets-1)
	var count uint64
	for i, n := range s.ReadySizes.Counts {
		count += n
		if i < matrixraft.SizeBuckets-1 {
			buckets[float64(uint64(1)<<i)] = count
		}
	}
	ch <- prometheus.MustNewConstHistogram(c.readySizes, count, float64(s.ReadySizes.Sum), buckets)
	for id, p := range s.Peers {
		peer := strconv.FormatUint(id, 10)
		ch <- prometheus.MustNewConstMetric(c.peerMatch, prometheus.GaugeValue, float64(p.Match), peer)
		ch <- prometheus.MustNewConstMetric(c.peerLag, prometheus.GaugeValue, float64(p.Lag), peer)
		ch <- prometheus.MustNewConstMetric(c.peerRTT, prometheus.GaugeValue, p.RTT.Seconds(), peer)
	}
	if c.transport != nil {
		t := c.transport()
		ch <- prometheus.MustNewConstMetric(c.tSent, prometheus.CounterValue, float64(t.BytesSent))
		ch <- prometheus.MustNewConstMetric(c.tRecv, prometheus.CounterValue, float64(t.BytesReceived))
		ch <- prometheus.MustNewConstMetric(c.tDropped, prometheus.CounterValue, float64(t.MessagesDropped))
	}
}

// latencyHistogram turns power-of-two buckets into a cumulative Prometheus
// histogram; the last bucket (everything longer) becomes +Inf only.
func latencyHistogram[D interface{ Seconds() float64 }](d *prometheus.Desc, counts []uint64, sum float64, bound func(int) D) prometheus.Metric {
	buckets := make(map[float64]uint64, len(counts)-1)
	var count uint64
	for i, n := range counts {
		count += n
		if i < len(counts)-1 {
			buckets[bound(i).Seconds()] = count
		}
	}
	return prometheus.MustNewConstHistogram(d, count, sum, buckets)
}
