package matrixraft

import (
	"math/bits"
	"slices"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"

	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
)

// latencyBuckets is the number of power-of-two microsecond buckets.
const latencyBuckets = 24

// Latency is a latency histogram: Counts[i] holds observations up to
// 2^i µs (see LatencyBucketBound); the last bucket holds everything longer.
type Latency struct {
	Counts [latencyBuckets]uint64
	// Sum is the total of every observation.
	Sum time.Duration
}

// LatencyBuckets is the number of buckets of a Latency.
const LatencyBuckets = latencyBuckets

// LatencyBucketBound returns the inclusive upper bound of Latency bucket i.
func LatencyBucketBound(i int) time.Duration { return time.Duration(1<<i) * time.Microsecond }

// sizeBuckets is the number of power-of-two buckets of a Sizes.
const sizeBuckets = 17

// SizeBuckets is the number of buckets of a Sizes.
const SizeBuckets = sizeBuckets

// Sizes is a histogram of counts (entries per Ready): Counts[i] holds
// observations up to 2^i; the last bucket holds everything larger.
type Sizes struct {
	Counts [sizeBuckets]uint64
	// Sum is the total of every observation.
	Sum uint64
}

type sizes struct {
	counts [sizeBuckets]atomic.Uint64
	sum    atomic.Uint64
}

func (h *sizes) observe(v uint64) {
	i := min(bits.Len64(max(v, 1)-1), sizeBuckets-1)
	h.counts[i].Add(1)
	h.sum.Add(v)
}

func (h *sizes) snapshot() Sizes {
	var out Sizes
	for i := range h.counts {
		out.Counts[i] = h.counts[i].Load()
	}
	out.Sum = h.sum.Load()
	return out
}

// Total returns the number of observations.
func (h Latency) Total() uint64 {
	var t uint64
	for _, c := range h.Counts {
		t += c
	}
	return t
}

// Quantile returns the upper bound of the bucket holding quantile q.
func (h Latency) Quantile(q float64) time.Duration {
	total := h.Total()
	if total == 0 {
		return 0
	}
	want := uint64(q*float64(total-1)) + 1
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen >= want {
			return time.Duration(1<<i) * time.Microsecond
		}
	}
	return time.Duration(1<<(latencyBuckets-1)) * time.Microsecond
}

type latency struct {
	counts [latencyBuckets]atomic.Uint64
	sum    atomic.Int64 // nanoseconds
}

func (h *latency) observe(d time.Duration) {
	us := uint64(max(d.Microseconds(), 1))
	i := min(bits.Len64(us-1), latencyBuckets-1)
	h.counts[i].Add(1)
	h.sum.Add(int64(d))
}

func (h *latency) snapshot() Latency {
	var out Latency
	for i := range h.counts {
		out.Counts[i] = h.counts[i].Load()
	}
	out.Sum = time.Duration(h.sum.Load())
	return out
}

type metrics struct {
	isLeader             atomic.Bool
	leaderChanges        atomic.Uint64
	proposalsPending     atomic.Int64
	proposalsCommitted   atomic.Uint64
	proposalsFailed      atomic.Uint64
	proposalsDropped     atomic.Uint64
	readies              atomic.Uint64
	readyEntries         atomic.Uint64
	readRetries          atomic.Uint64
	leaseReads           atomic.Uint64
	readFailures         atomic.Uint64
	msgsSent             atomic.Uint64
	msgsRecv             atomic.Uint64
	snapshotsCreated     atomic.Uint64
	snapshotsInstalled   atomic.Uint64
	snapshotsForced      atomic.Uint64
	snapshotSendFailures atomic.Uint64
	unreachable          atomic.Uint64
	readySizes           sizes
	readyLatency         latency
	saveLatency          latency
	readLatency          latency
	snapshotSaveLatency  latency
	snapshotApplyLatency latency
	removedIDs           atomic.Pointer[[]uint64]

	// snapshotCaptureLatency is the part of snapshotSaveLatency spent on
	// the loop: capturing the state.
	snapshotCaptureLatency latency
}

// PeerStatus is the leader's view of one follower.
type PeerStatus struct {
	// Match is the highest log index known to be replicated on the peer.
	Match uint64
	// Lag is the leader's last index minus Match.
	Lag uint64
	// State is the replication state: StateProbe, StateReplicate or
	// StateSnapshot (raft's tracker.StateType names).
	State string
	// Learner says whether the peer is a non-voting member.
	Learner bool
	// Active says a message from the peer arrived within the last
	// election timeout: false for one that is down or cut off.
	Active bool
	// RTT is the last measured round trip of a heartbeat to the peer and
	// its answer (leader only; zero before the first).
	RTT time.Duration
}

// Status is a point-in-time view of a node, with its metrics.
type Status struct {
	ID        uint64
	Leader    uint64
	HasLeader bool
	IsLeader  bool
	State     string
	Term      uint64
	Commit    uint64
	Applied   uint64
	// SnapshotIndex is the newest durable snapshot's index.
	SnapshotIndex uint64
	Voters        []uint64
	Learners      []uint64
	// Peers is filled on the leader only.
	Peers map[uint64]PeerStatus

	LeaderChanges      uint64
	ProposalsPending   int64
	ProposalsCommitted uint64
	ProposalsFailed    uint64
	ProposalsDropped   uint64
	// Readies and ReadyEntries count Ready batches and the entries they
	// persisted; their ratio is the batching factor.
	Readies      uint64
	ReadyEntries uint64
	// Fsyncs counts durable log writes of this node.
	Fsyncs      uint64
	ReadRetries uint64
	// LeaseReads counts the ReadLease reads served on the lease.
	LeaseReads         uint64
	ReadFailures       uint64
	MessagesSent       uint64
	MessagesReceived   uint64
	SnapshotsCreated   uint64
	SnapshotsInstalled uint64
	// SnapshotsForced counts the snapshots of SnapshotsCreated taken
	// before SnapshotEntries because the Host asked: the group held its
	// shared log back.
	SnapshotsForced uint64
	// Rehomes counts how often the Host wrote this group's HardState and
	// snapshot record again at the head of its shared log, so that the
	// group's older records could be dropped.
	Rehomes uint64
	// SnapshotSendFailures counts snapshots the transport failed to deliver.
	SnapshotSendFailures uint64
	// Unreachable counts the transport's reports that a message could not
	// be sent (a dropped message, a peer down or a full queue): the drops
	// this node knows of.
	Unreachable uint64
	// ReadySizes is the histogram of entries persisted per Ready.
	ReadySizes           Sizes
	ReadyLatency         Latency
	SaveLatency          Latency
	ReadLatency          Latency
	SnapshotSaveLatency  Latency
	SnapshotApplyLatency Latency
	// SnapshotCaptureLatency is the part of SnapshotSaveLatency (capture
	// to durable record and compaction) spent on the Ready loop, which
	// stalls every proposal meanwhile: capturing the state, which is the
	// whole Snapshot call unless the state machine is a SnapshotCapturer.
	SnapshotCaptureLatency Latency
	// WAL is the log's own statistics, with its fsync histogram.
	WAL wal.Stats
}

// Status returns the node's state and metrics. It is safe to call at any
// time, also after Stop.
func (n *Node) Status() Status {
	m := &n.metrics
	s := Status{
		ID:                   n.id,
		Leader:               n.leader.Load(),
		Term:                 n.term.Load(),
		Applied:              n.applied.Load(),
		SnapshotIndex:        n.storage.SnapshotIndex(),
		IsLeader:             m.isLeader.Load(),
		LeaderChanges:        m.leaderChanges.Load(),
		ProposalsPending:     m.proposalsPending.Load(),
		ProposalsCommitted:   m.proposalsCommitted.Load(),
		ProposalsFailed:      m.proposalsFailed.Load(),
		ProposalsDropped:     m.proposalsDropped.Load(),
		Readies:              m.readies.Load(),
		ReadyEntries:         m.readyEntries.Load(),
		Fsyncs:               n.storage.Fsyncs(),
		ReadRetries:          m.readRetries.Load(),
		LeaseReads:           m.leaseReads.Load(),
		ReadFailures:         m.readFailures.Load(),
		MessagesSent:         m.msgsSent.Load(),
		MessagesReceived:     m.msgsRecv.Load(),
		SnapshotsCreated:     m.snapshotsCreated.Load(),
		SnapshotsInstalled:   m.snapshotsInstalled.Load(),
		SnapshotsForced:      m.snapshotsForced.Load(),
		Rehomes:              n.storage.Rehomes(),
		SnapshotSendFailures: m.snapshotSendFailures.Load(),
		Unreachable:          m.unreachable.Load(),
		ReadySizes:           m.readySizes.snapshot(),
		ReadyLatency:         m.readyLatency.snapshot(),
		SaveLatency:          m.saveLatency.snapshot(),
		ReadLatency:          m.readLatency.snapshot(),
		SnapshotSaveLatency:  m.snapshotSaveLatency.snapshot(),
		SnapshotApplyLatency: m.snapshotApplyLatency.snapshot(),
		WAL:                  n.storage.log.Stats(),
	}
	s.SnapshotCaptureLatency = m.snapshotCaptureLatency.snapshot()
	s.HasLeader = s.Leader != 0
	select {
	case <-n.donec:
		s.State = "stopped"
		return s
	default:
	}
	rs := n.rn.Status()
	s.State = rs.RaftState.String()
	s.Commit = rs.HardState.GetCommit()
	for id := range rs.Config.Voters.IDs() {
		s.Voters = append(s.Voters, id)
	}
	slices.Sort(s.Voters)
	for id := range rs.Config.Learners {
		s.Learners = append(s.Learners, id)
	}
	if rs.RaftState == raft.StateLeader {
		last, _ := n.storage.LastIndex()
		s.Peers = map[uint64]PeerStatus{}
		for id, pr := range rs.Progress {
			if id == n.id {
				continue
			}
			s.Peers[id] = PeerStatus{Match: pr.Match, Lag: last - min(pr.Match, last), State: pr.State.String(), Learner: pr.IsLearner, Active: n.heardLately(id), RTT: n.peerRTT(id)}
		}
	}
	return s
}
