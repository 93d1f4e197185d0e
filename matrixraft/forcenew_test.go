package matrixraft

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// TestForceNewCluster loses two of three nodes for good, recovers the
// survivor as a single-voter cluster, and grows it again with a new node.
func TestForceNewCluster(t *testing.T) {
	tests := []struct {
		name      string
		snapshots bool // small SnapshotEntries: the survivor restarts from a snapshot plus log
	}{
		{"log only", false},
		{"snapshot plus log", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			force := false
			c := newCluster(t, 3, 7, func(o *Options) {
				o.ForceNewCluster = force && o.ID == 1
				if !tt.snapshots {
					o.SnapshotEntries = 100000
				} else {
					o.SnapshotEntries, o.CatchUpEntries = 40, 10
				}
			})
			ctx := t.Context()
			const n = 120
			for i := range n {
				// A put is idempotent: retry until one attempt is known to apply.
				for attempt := 0; ; attempt++ {
					pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					_, err := c.leader().Propose(pctx, kvCmd('p', fmt.Sprintf("k%d", i), fmt.Sprint(i)))
					cancel()
					if err == nil {
						break
					}
					require.Less(t, attempt, 20, "put %d: %v", i, err)
					require.True(t, errors.Is(err, ErrNotLeader) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrProposalDropped) || errors.Is(err, ErrUnknownOutcome), "put %d: %v", i, err)
				}
			}
			// Node 1 has applied everything before the others vanish.
			c.waitRounds(3000, "node 1 applied", func() bool { return c.sm(1).get(fmt.Sprintf("k%d", n-1)) == fmt.Sprint(n-1) })
			if tt.snapshots {
				require.Positive(t, c.node(1).Status().SnapshotIndex)
			}
			c.stop(2)
			c.stop(3)
			c.stop(1)

			// Without the flag the survivor cannot elect itself.
			c.start(1, nil)
			c.pass(60)
			require.False(t, c.node(1).Status().IsLeader)
			c.stop(1)

			force = true
			n1 := c.start(1, nil)
			c.waitRounds(3000, "node 1 leads alone", func() bool {
				st := n1.Status()
				return st.IsLeader && len(st.Voters) == 1
			})
			st := n1.Status()
			require.Equal(t, []uint64{1}, st.Voters)
			require.Empty(t, st.Learners)
			for i := range n {
				require.Equal(t, fmt.Sprint(i), c.sm(1).get(fmt.Sprintf("k%d", i)))
			}
			_, err := n1.Propose(ctx, kvCmd('p', "after", "force"))
			require.NoError(t, err)

			// Restarting with the flag still set while alone changes nothing.
			n1 = c.restart(1)
			c.waitRounds(3000, "node 1 leads alone again", func() bool { return n1.Status().IsLeader })
			require.Equal(t, []uint64{1}, n1.Status().Voters)
			require.Equal(t, "force", c.sm(1).get("after"))
			force = false

			// The removed IDs are never reused; a fresh node joins.
			require.ErrorIs(t, n1.AddVoter(ctx, 2, "n2"), ErrIDReused)
			require.NoError(t, n1.AddVoter(ctx, 4, "n4"))
			c.start(4, nil)
			c.waitRounds(3000, "node 4 caught up", func() bool { return c.sm(4).get("after") == "force" })
			if tt.snapshots {
				// It caught up from a snapshot taken while 2 and 3 were
				// members, sent with the configuration of today.
				require.Positive(t, c.node(4).Status().SnapshotsInstalled)
			}
			_, err = n1.Propose(ctx, kvCmd('p', "two", "voters"))
			require.NoError(t, err)
			c.waitRounds(3000, "node 4 applies new writes", func() bool { return c.sm(4).get("two") == "voters" })
			require.Equal(t, []uint64{1, 4}, n1.Status().Voters)

			// The grown cluster restarts as a normal one.
			c.restart(1)
			c.restart(4)
			lead := c.leader()
			require.Equal(t, []uint64{1, 4}, lead.Status().Voters)
			_, err = lead.Propose(ctx, kvCmd('p', "after", "restart"))
			require.NoError(t, err)
			require.Equal(t, "voters", c.sm(1).get("two"))
		})
	}
}

// TestForceNewClusterDiscardsUncommitted checks the storage rewrite alone:
// entries past the commit index go, the removals are committed after it,
// and the result survives a reopen.
func TestForceNewClusterDiscardsUncommitted(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStorage(dir, StorageOptions{})
	require.NoError(t, err)
	ctx := t.Context()
	boot := func(i uint64, id uint64) *pb.Entry {
		cc := &pb.ConfChange{Type: new(pb.ConfChangeAddNode), NodeId: new(id)}
		data, err := proto.Marshal(cc)
		require.NoError(t, err)
		return &pb.Entry{Type: new(pb.EntryConfChange), Term: new(uint64(1)), Index: new(i), Data: data}
	}
	ents := []*pb.Entry{boot(1, 1), boot(2, 2), boot(3, 3)}
	for i := uint64(4); i <= 10; i++ {
		ents = append(ents, &pb.Entry{Term: new(uint64(2)), Index: new(i), Data: []byte("x")})
	}
	require.NoError(t, s.Save(ctx, hs(2, 1, 7), ents, nil, true))
	removed, err := s.forceNewCluster(ctx, 2)
	require.NoError(t, err)
	require.Equal(t, []uint64{1, 3}, removed)
	require.NoError(t, s.Close())

	s, err = OpenStorage(dir, StorageOptions{})
	require.NoError(t, err)
	defer s.Close()
	last, _ := s.LastIndex()
	require.Equal(t, uint64(9), last, "entries 8..10 were uncommitted and are replaced by two removals")
	h, _, _ := s.InitialState()
	require.Equal(t, uint64(9), h.GetCommit())
	require.Equal(t, uint64(2), h.GetTerm())
	got, err := s.Entries(8, 10, 1<<20)
	require.NoError(t, err)
	members := map[uint64]bool{1: true, 2: true, 3: true}
	for _, e := range got {
		require.Equal(t, pb.EntryConfChangeV2, e.GetType())
		require.NoError(t, replayMembership(members, e))
	}
	require.Equal(t, map[uint64]bool{2: true}, members)

	// Already alone: nothing more is written.
	removed, err = s.forceNewCluster(ctx, 2)
	require.NoError(t, err)
	require.Empty(t, removed)
	last2, _ := s.LastIndex()
	require.Equal(t, last, last2)
}

// TestAsyncStorageWritesCluster runs the basic cluster checks, a snapshot
// install and a restart with AsyncStorageWrites.
func TestAsyncStorageWritesCluster(t *testing.T) {
	c := newCluster(t, 3, 5, func(o *Options) { o.AsyncStorageWrites = true; o.SnapshotEntries, o.CatchUpEntries = 30, 5 })
	ctx := t.Context()
	put := func(k, v string) {
		for attempt := 0; ; attempt++ {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err := c.leader().Propose(pctx, kvCmd('p', k, v))
			cancel()
			if err == nil {
				return
			}
			require.Less(t, attempt, 20, "put %s: %v", k, err)
		}
	}
	// Node 3 misses a stretch and catches up from a snapshot.
	c.stop(3)
	for i := range 100 {
		put(fmt.Sprintf("k%d", i), fmt.Sprint(i))
	}
	// The snapshots are written in the background: wait until one has
	// compacted the leader's log past everything node 3 has.
	c.waitRounds(3000, "leader snapshot", func() bool { return c.leader().Status().SnapshotIndex >= 60 })
	c.start(3, nil)
	c.waitRounds(3000, "node 3 caught up", func() bool { return c.sm(3).get("k99") == "99" })
	require.Positive(t, c.node(3).Status().SnapshotsInstalled)
	for _, n := range c.live() {
		require.NoError(t, n.Read(ctx, ReadLinearizable))
	}
	// Everything survives a restart of every node.
	for id := uint64(1); id <= 3; id++ {
		c.restart(id)
	}
	put("after", "restart")
	for id := uint64(1); id <= 3; id++ {
		c.waitRounds(3000, "converged", func() bool { return c.sm(id).get("after") == "restart" })
		for i := range 100 {
			require.Equal(t, fmt.Sprint(i), c.sm(id).get(fmt.Sprintf("k%d", i)))
		}
	}
}
