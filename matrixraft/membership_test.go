package matrixraft

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/stretchr/testify/require"
)

// Membership changes made at once, on a leader that has just been elected,
// are each answered: raft would replace a conf change proposed while
// another may be unapplied with an empty entry, and its waiter would never
// hear of it.
func TestMembershipChangesRightAfterElection(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			c := newCluster(t, 3, 11, func(o *Options) { o.AsyncStorageWrites = async })
			lead := c.leader()
			require.NoError(t, lead.TransferLeadership(t.Context(), otherThan(c, lead.ID())))
			lead = c.leader()
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Go(func() {
					// No deadline: an answer must come without one.
					errs[i] = lead.AddLearner(context.Background(), uint64(10+i), fmt.Sprintf("n%d", 10+i))
				})
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			receive(c, 20000, "every membership change answered", done)
			for i, err := range errs {
				if err != nil {
					// Only a replaced proposal may fail; it said so.
					require.ErrorIs(t, err, ErrProposalDropped, "learner %d", 10+i)
				}
			}
			require.NoError(t, lead.Read(t.Context(), ReadLinearizable))
			learners := lead.Status().Learners
			for i, err := range errs {
				if err == nil {
					require.Contains(t, learners, uint64(10+i))
				}
			}
		})
	}
}

// A conf change raft replaced with an empty entry is answered
// ErrProposalDropped, and the one raft took is answered once applied.
func TestReplacedConfChangeIsAnswered(t *testing.T) {
	var hold atomic.Bool
	gate := make(chan struct{})
	c := newCluster(t, 3, 13, func(o *Options) {
		o.beforeSave = func() {
			if hold.Load() {
				<-gate
			}
		}
	})
	lead := c.leader()
	require.NoError(t, lead.Read(t.Context(), ReadLinearizable))
	// Two conf changes proposed back to back, past the node's one-at-a-
	// time guard, while the loops are held before they save: raft takes
	// the first and replaces the second.
	hold.Store(true)
	reqs := make([]uint64, 2)
	chs := make([]chan result, 2)
	for i := range reqs {
		reqs[i] = lead.nextReq.Add(1)
		chs[i] = lead.register(reqs[i])
		lead.wmu.Lock()
		lead.confQueue = append(lead.confQueue, reqs[i])
		lead.wmu.Unlock()
		id := uint64(20 + i)
		cc := &pb.ConfChangeV2{
			Changes: []*pb.ConfChangeSingle{{Type: new(pb.ConfChangeAddLearnerNode), NodeId: new(id)}},
			Context: encodeCCContext(lead.ID(), reqs[i], fmt.Sprintf("n%d", id)),
		}
		require.NoError(t, lead.rn.ProposeConfChange(t.Context(), cc))
	}
	hold.Store(false)
	close(gate)
	got := make([]error, 2)
	for i, ch := range chs {
		got[i] = receive(c, 5000, "conf change answered", ch).err
	}
	require.NoError(t, got[0])
	require.ErrorIs(t, got[1], ErrProposalDropped)
	require.Contains(t, lead.Status().Learners, uint64(20))
	require.NotContains(t, lead.Status().Learners, uint64(21))
	// The node's own path still works afterwards.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	require.NoError(t, lead.AddLearner(ctx, 21, "n21"))
	require.Contains(t, lead.Status().Learners, uint64(21))
}

// A removed leader's successor refuses the removed ID even when asked at
// once, before it has applied the removal: it waits for its own term's
// first entry.
func TestRemovedIDRefusedByTheNextLeader(t *testing.T) {
	c := newCluster(t, 3, 17, nil)
	lead := c.leader()
	victim := lead.ID()
	require.NoError(t, lead.RemoveMember(t.Context(), victim))
	receive(c, 5000, "the removed leader stops", lead.Done())
	require.ErrorIs(t, lead.Err(), ErrRemoved)
	c.stop(victim)
	next := c.leader()
	errc := make(chan error, 1)
	go func() { errc <- next.AddVoter(context.Background(), victim, "again") }()
	require.ErrorIs(t, receive(c, 5000, "re-adding answered", errc), ErrIDReused)
}

// receive waits up to max rounds for a value from ch.
func receive[T any](c *cluster, max uint64, what string, ch <-chan T) T {
	var v T
	c.waitRounds(max, what, func() bool {
		select {
		case v = <-ch:
			return true
		default:
			return false
		}
	})
	return v
}

func otherThan(c *cluster, id uint64) uint64 {
	for _, n := range c.live() {
		if n.ID() != id {
			return n.ID()
		}
	}
	return 0
}

// A waiter woken by the node's stop still gets a result delivered before
// it, rather than the stop's error.
func TestDeliveredResultWinsOverTheStop(t *testing.T) {
	tests := []struct {
		name string
		send *result
	}{
		{"delivered success", &result{val: []byte("v")}},
		{"delivered error", &result{err: ErrIDReused}},
		{"nothing delivered", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch := make(chan result, 1)
			if tc.send != nil {
				ch <- *tc.send
			}
			r, ok := delivered(ch)
			require.Equal(t, tc.send != nil, ok)
			if tc.send != nil {
				require.Equal(t, *tc.send, r)
			}
		})
	}
}

// A leader's view of its peers' activity holds steady for live peers
// across election timeouts (raft's RecentActive, which CheckQuorum clears
// every election timeout, would blink) and turns false for a stopped one.
func TestPeerActive(t *testing.T) {
	c := newCluster(t, 3, 17, nil)
	lead := c.leader()
	others := []uint64{}
	for id := uint64(1); id <= 3; id++ {
		if id != lead.ID() {
			others = append(others, id)
		}
	}
	c.waitRounds(200, "both followers heard from", func() bool {
		st := lead.Status()
		return st.Peers[others[0]].Active && st.Peers[others[1]].Active
	})
	// Ten election timeouts, checked every round.
	var seen int
	c.until(uint64(10*DefaultElectionTick), func() bool {
		st := lead.Status()
		require.True(t, st.IsLeader)
		for _, id := range others {
			require.True(t, st.Peers[id].Active, "peer %d after %d checks", id, seen)
		}
		seen++
		return false
	})
	require.Greater(t, seen, 2*DefaultElectionTick)

	c.stop(others[0])
	c.waitRounds(10*DefaultElectionTick, "stopped peer inactive", func() bool {
		return !lead.Status().Peers[others[0]].Active
	})
	require.True(t, lead.Status().Peers[others[1]].Active)
}

// ReadLease is served on the leader's lease, without a round to a
// quorum, and sees every write acknowledged before it; a leader cut off
// from the others loses its lease within half an election timeout, and
// its lease reads then wait for a quorum it cannot reach.
func TestReadLease(t *testing.T) {
	c := newCluster(t, 3, 23, nil)
	lead := c.leader()
	ctx := t.Context()
	_, err := lead.Propose(ctx, kvCmd('p', "k", "v1"))
	require.NoError(t, err)
	c.waitRounds(10*DefaultElectionTick, "a lease", func() bool {
		before := lead.Status().LeaseReads
		require.NoError(t, lead.Read(ctx, ReadLease))
		return lead.Status().LeaseReads > before
	})
	for i := range 20 {
		v := fmt.Sprint("v", i)
		_, err := lead.Propose(ctx, kvCmd('p', "k", v))
		require.NoError(t, err)
		require.NoError(t, lead.Read(ctx, ReadLease))
		require.Equal(t, v, c.smOf(lead).get("k"))
	}
	// A follower has no lease: it reads through the leader (ReadIndex).
	f := c.node(otherThan(c, lead.ID()))
	require.NoError(t, f.Read(ctx, ReadLease))
	require.Zero(t, f.Status().LeaseReads)

	// Cut off, the old leader's lease runs out; its reads then block.
	c.nw.Isolate(lead.ID())
	c.pass(uint64(DefaultElectionTick))
	served := lead.Status().LeaseReads
	rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	require.Error(t, lead.Read(rctx, ReadLease))
	require.Equal(t, served, lead.Status().LeaseReads, "no read on an expired lease")
}
