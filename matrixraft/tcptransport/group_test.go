package tcptransport

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

// startGroups starts groups ids on tr, each with a recorder of its own.
func startGroups(t *testing.T, tr *Transport, ids ...uint64) (map[uint64]matrixraft.Transport, map[uint64]*recorder) {
	t.Helper()
	views, recs := map[uint64]matrixraft.Transport{}, map[uint64]*recorder{}
	for _, id := range ids {
		views[id], recs[id] = tr.Group(id), newRecorder()
		require.NoError(t, views[id].Start(recs[id]))
	}
	return views, recs
}

// inboundConns is how many connections tr is serving.
func inboundConns(tr *Transport) int {
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	return len(tr.inbound)
}

// indexesFrom returns how many messages r holds, and checks they all carry
// index base + their position, so each arrived in order and only once.
func indexesFrom(t *testing.T, r *recorder, base uint64) int {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, m := range r.msgs {
		require.Equal(t, base+uint64(i), m.GetIndex(), "message %d", i)
	}
	return len(r.msgs)
}

func TestGroupsShareOneConnection(t *testing.T) {
	a, b := newTransport(t, 1, nil), newTransport(t, 2, nil)
	// Neither Transport is started itself: its groups' Start serve it.
	ga, ra := startGroups(t, a, 1, 2, 3)
	_, rb := startGroups(t, b, 1, 2)
	for _, g := range ga {
		g.AddPeer(2, b.Addr().String())
	}

	const n = 200
	for i := range uint64(n) {
		ga[1].Send([]*pb.Message{appMsg(1, 2, i, []byte("one"))})
		ga[2].Send([]*pb.Message{appMsg(1, 2, 1000+i, []byte("two"))})
	}
	// Group 3 is not started on b, nor is b itself: dropped and counted.
	ga[3].Send([]*pb.Message{appMsg(1, 2, 1, nil), appMsg(1, 2, 2, nil)})
	a.Send([]*pb.Message{appMsg(1, 2, 3, nil)})

	rb[1].waitFor(t, 10*time.Second, "group 1", func(r *recorder) bool { return len(r.msgs) == n })
	rb[2].waitFor(t, 10*time.Second, "group 2", func(r *recorder) bool { return len(r.msgs) == n })
	require.Eventually(t, func() bool { return b.Stats().UnknownGroupDrops == 3 }, 5*time.Second, 5*time.Millisecond)
	require.Equal(t, n, indexesFrom(t, rb[1], 0))
	require.Equal(t, n, indexesFrom(t, rb[2], 1000))
	for _, r := range ra {
		r.mu.Lock()
		require.Empty(t, r.msgs)
		r.mu.Unlock()
	}

	sa, sb := a.Stats(), b.Stats()
	require.EqualValues(t, 2*n+3, sa.MessagesSent)
	require.EqualValues(t, 2*n+2, sa.GroupMessagesSent)
	require.EqualValues(t, 2*n+3, sb.MessagesReceived)
	require.EqualValues(t, 2*n+2, sb.GroupMessagesReceived)
	require.Zero(t, sb.InboundDropped)
	require.Len(t, sa.Peers, 1)
	require.Zero(t, sa.Reconnects)
	require.Equal(t, 1, inboundConns(b), "every group on one connection")
}

func TestGroupStartAndClose(t *testing.T) {
	a, b := newTransport(t, 1, nil), newTransport(t, 2, nil)
	ga, _ := startGroups(t, a, 1, 2)
	gb, rb := startGroups(t, b, 1, 2)
	for _, g := range ga {
		g.AddPeer(2, b.Addr().String())
	}

	require.ErrorIs(t, b.Group(1).Start(newRecorder()), ErrStarted, "group 1 runs already")
	require.ErrorIs(t, gb[1].Start(newRecorder()), ErrStarted)
	require.ErrorIs(t, b.Group(0).Start(newRecorder()), ErrInvalidGroup)
	// The Transport's own handler is one more group, beside the others.
	rbase := newRecorder()
	require.NoError(t, b.Start(rbase))
	require.ErrorIs(t, b.Start(rbase), ErrStarted)
	a.Send([]*pb.Message{appMsg(1, 2, 7, nil)})
	rbase.waitFor(t, 5*time.Second, "un-grouped message", func(r *recorder) bool { return len(r.msgs) == 1 })

	// Closing group 1 leaves the Transport and group 2 running.
	require.NoError(t, gb[1].Close())
	require.NoError(t, gb[1].Close(), "idempotent")
	require.ErrorIs(t, gb[1].Start(newRecorder()), ErrClosed, "a closed group takes a new view")
	drops := b.Stats().UnknownGroupDrops
	ga[1].Send([]*pb.Message{appMsg(1, 2, 1, nil)})
	ga[2].Send([]*pb.Message{appMsg(1, 2, 1, nil)})
	rb[2].waitFor(t, 5*time.Second, "group 2", func(r *recorder) bool { return len(r.msgs) == 1 })
	require.Eventually(t, func() bool { return b.Stats().UnknownGroupDrops == drops+1 }, 5*time.Second, 5*time.Millisecond)
	rb[1].mu.Lock()
	require.Empty(t, rb[1].msgs, "nothing reaches a closed group")
	rb[1].mu.Unlock()

	// Started again with a new view, group 1 hears from a again.
	again := newRecorder()
	require.NoError(t, b.Group(1).Start(again))
	ga[1].Send([]*pb.Message{appMsg(1, 2, 2, nil)})
	again.waitFor(t, 5*time.Second, "group 1 restarted", func(r *recorder) bool { return len(r.msgs) == 1 })

	// The Transport's Close ends every group.
	require.NoError(t, b.Close())
	require.ErrorIs(t, b.Group(3).Start(newRecorder()), ErrClosed)
	require.NoError(t, gb[2].Close())
}

func TestGroupUnreachableReports(t *testing.T) {
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	goneAddr := gone.Addr().String()
	require.NoError(t, gone.Close())
	a := newTransport(t, 1, nil)
	ga, ra := startGroups(t, a, 1, 2, 3)

	// A message dropped by Send is reported to its own group only.
	ga[1].Send([]*pb.Message{appMsg(1, 9, 1, nil)})
	ra[1].waitFor(t, 5*time.Second, "unreachable in group 1", func(r *recorder) bool { return r.unreachable[9] > 0 })

	// A connection that fails is every listing group's concern.
	ga[1].AddPeer(5, goneAddr)
	ga[2].AddPeer(5, goneAddr)
	for _, g := range []uint64{1, 2} {
		ra[g].waitFor(t, 5*time.Second, "unreachable", func(r *recorder) bool { return r.unreachable[5] > 0 })
	}
	for _, g := range []uint64{2, 3} {
		ra[g].mu.Lock()
		require.Zero(t, ra[g].unreachable[9], "group %d heard of group 1's drop", g)
		ra[g].mu.Unlock()
	}
	ra[3].mu.Lock()
	require.Zero(t, ra[3].unreachable[5], "group 3 does not list peer 5")
	ra[3].mu.Unlock()
}

func TestGroupRemovePeerKeepsSharedPeer(t *testing.T) {
	a, b := newTransport(t, 1, nil), newTransport(t, 2, nil)
	ga, _ := startGroups(t, a, 1, 2, 3)
	_, rb := startGroups(t, b, 1, 2)
	for _, g := range ga {
		g.AddPeer(2, b.Addr().String())
	}
	ga[1].Send([]*pb.Message{appMsg(1, 2, 0, nil)})
	ga[2].Send([]*pb.Message{appMsg(1, 2, 0, nil)})
	rb[1].waitFor(t, 5*time.Second, "group 1", func(r *recorder) bool { return len(r.msgs) == 1 })
	rb[2].waitFor(t, 5*time.Second, "group 2", func(r *recorder) bool { return len(r.msgs) == 1 })

	// Groups 1 and 3 are done with node 2, group 2 is not: the peer, its
	// queue and its connection stay.
	ga[1].RemovePeer(2)
	require.NoError(t, ga[3].Close())
	for i := uint64(1); i <= 50; i++ {
		ga[2].Send([]*pb.Message{appMsg(1, 2, i, nil)})
	}
	rb[2].waitFor(t, 5*time.Second, "group 2 after the removal", func(r *recorder) bool { return len(r.msgs) == 51 })
	require.Equal(t, 51, indexesFrom(t, rb[2], 0))
	st := a.Stats()
	require.Contains(t, st.Peers, uint64(2))
	require.True(t, st.Peers[2].Connected)
	require.Zero(t, st.Reconnects, "the connection was never dropped")
	require.Equal(t, 1, inboundConns(b))

	// The last group to list node 2 removes it: the peer goes.
	ga[2].RemovePeer(2)
	require.NotContains(t, a.Stats().Peers, uint64(2))
	require.Eventually(t, func() bool { return inboundConns(b) == 0 }, 5*time.Second, 5*time.Millisecond, "the connection closes")
}

// snapSink accepts connections, reads their hello and then nothing: a
// snapshot sent to it stays in flight until the sender gives up. It says
// when a snapshot stream opens and when one is closed by the sender.
type snapSink struct {
	ln             net.Listener
	opened, closed chan struct{}
}

func newSnapSink(t *testing.T) *snapSink {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &snapSink{ln: ln, opened: make(chan struct{}, 16), closed: make(chan struct{}, 16)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return s
}

func (s *snapSink) serve(c net.Conn) {
	defer c.Close()
	fr := frameReader{r: c, maxSize: 1 << 20}
	typ, payload, err := fr.next()
	if err != nil || typ != frameHello {
		return
	}
	if h, err := decodeHello(payload); err != nil || h.kind != streamSnapshot {
		return
	}
	s.opened <- struct{}{}
	// Read (and ignore) until the sender hangs up.
	for {
		if _, _, err := fr.next(); err != nil {
			s.closed <- struct{}{}
			return
		}
	}
}

func TestGroupSnapshotReports(t *testing.T) {
	t.Run("delivered or refused", func(t *testing.T) {
		a, b := newTransport(t, 1, nil), newTransport(t, 2, nil)
		ga, ra := startGroups(t, a, 1, 2, 3)
		_, rb := startGroups(t, b, 1, 2)
		rb[2].stepErr = raft.ErrStopped
		for _, g := range ga {
			g.AddPeer(2, b.Addr().String())
		}
		data := bytes.Repeat([]byte("snapshot"), 1000)
		for _, g := range ga {
			g.Send([]*pb.Message{snapMsg(1, 2, 42, data)})
		}
		want := map[uint64]raft.SnapshotStatus{
			1: raft.SnapshotFinish,  // delivered
			2: raft.SnapshotFailure, // raft refused it
			3: raft.SnapshotFailure, // no group 3 on b
		}
		for g, status := range want {
			ra[g].waitFor(t, 10*time.Second, "snapshot report", func(r *recorder) bool { return len(r.snaps[2]) > 0 })
			ra[g].mu.Lock()
			require.Equal(t, []raft.SnapshotStatus{status}, ra[g].snaps[2], "group %d", g)
			ra[g].mu.Unlock()
		}
		rb[1].mu.Lock()
		require.Len(t, rb[1].msgs, 1)
		require.True(t, bytes.Equal(data, rb[1].msgs[0].GetSnapshot().GetData()))
		rb[1].mu.Unlock()
		require.EqualValues(t, 1, a.Stats().SnapshotsSent)
		require.EqualValues(t, 2, a.Stats().SnapshotsFailed)
		require.EqualValues(t, 1, b.Stats().SnapshotsReceived)
		require.EqualValues(t, 1, b.Stats().UnknownGroupDrops)
	})

	t.Run("group closed or peer removed", func(t *testing.T) {
		sink := newSnapSink(t)
		a := newTransport(t, 1, func(o *Options) { o.SnapshotAckTimeout = time.Minute })
		ga, ra := startGroups(t, a, 1, 2)
		for _, g := range ga {
			g.AddPeer(3, sink.ln.Addr().String())
		}
		// Group 1's snapshot goes in flight (the sink never answers);
		// group 2's two wait behind it on the peer's snapshot stream.
		ga[1].Send([]*pb.Message{snapMsg(1, 3, 10, []byte("one"))})
		select {
		case <-sink.opened:
		case <-time.After(5 * time.Second):
			t.Fatal("no snapshot stream")
		}
		ga[2].Send([]*pb.Message{snapMsg(1, 3, 11, []byte("two")), snapMsg(1, 3, 12, []byte("two"))})

		// Group 2's Close fails its queued snapshots before it returns.
		require.NoError(t, ga[2].Close())
		ra[2].mu.Lock()
		require.Equal(t, []raft.SnapshotStatus{raft.SnapshotFailure, raft.SnapshotFailure}, ra[2].snaps[3])
		ra[2].mu.Unlock()

		// Group 1's Close aborts its stream in flight and fails it.
		require.NoError(t, ga[1].Close())
		ra[1].mu.Lock()
		require.Equal(t, []raft.SnapshotStatus{raft.SnapshotFailure}, ra[1].snaps[3])
		ra[1].mu.Unlock()
		select {
		case <-sink.closed:
		case <-time.After(5 * time.Second):
			t.Fatal("the snapshot stream of a closed group stayed open")
		}
		require.EqualValues(t, 3, a.Stats().SnapshotsFailed, "each reported once")
		require.NotContains(t, a.Stats().Peers, uint64(3), "no group lists the peer any more")

		// RemovePeer fails the group's snapshots to that peer, and only
		// its own, though the peer stays for another group.
		g3, g4 := a.Group(3), a.Group(4)
		r3, r4 := newRecorder(), newRecorder()
		require.NoError(t, g3.Start(r3))
		require.NoError(t, g4.Start(r4))
		g3.AddPeer(3, sink.ln.Addr().String())
		g4.AddPeer(3, sink.ln.Addr().String())
		g4.Send([]*pb.Message{snapMsg(1, 3, 20, []byte("four"))})
		select {
		case <-sink.opened:
		case <-time.After(5 * time.Second):
			t.Fatal("no snapshot stream")
		}
		g3.Send([]*pb.Message{snapMsg(1, 3, 21, []byte("three"))})
		g3.RemovePeer(3)
		r3.waitFor(t, 5*time.Second, "failure report", func(r *recorder) bool { return len(r.snaps[3]) == 1 })
		r3.mu.Lock()
		require.Equal(t, []raft.SnapshotStatus{raft.SnapshotFailure}, r3.snaps[3])
		r3.mu.Unlock()
		require.Contains(t, a.Stats().Peers, uint64(3))
		r4.mu.Lock()
		require.Empty(t, r4.snaps[3], "group 4's snapshot is still in flight")
		r4.mu.Unlock()
	})
}
