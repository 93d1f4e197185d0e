package tcptransport

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// recorder is a Handler that records what the transport delivers.
type recorder struct {
	mu          sync.Mutex
	msgs        []*pb.Message
	unreachable map[uint64]int
	snaps       map[uint64][]raft.SnapshotStatus
	stepErr     error
	changed     chan struct{}
}

func newRecorder() *recorder {
	return &recorder{unreachable: map[uint64]int{}, snaps: map[uint64][]raft.SnapshotStatus{}, changed: make(chan struct{}, 1)}
}

func (r *recorder) poke() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) Step(_ context.Context, m *pb.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.poke()
	if r.stepErr != nil {
		return r.stepErr
	}
	r.msgs = append(r.msgs, m)
	return nil
}

func (r *recorder) ReportUnreachable(id uint64) {
	r.mu.Lock()
	r.unreachable[id]++
	r.mu.Unlock()
	r.poke()
}

func (r *recorder) ReportSnapshot(id uint64, s raft.SnapshotStatus) {
	r.mu.Lock()
	r.snaps[id] = append(r.snaps[id], s)
	r.mu.Unlock()
	r.poke()
}

// waitFor polls cond after every delivery, failing after d.
func (r *recorder) waitFor(t *testing.T, d time.Duration, what string, cond func(r *recorder) bool) {
	t.Helper()
	deadline := time.After(d)
	for {
		r.mu.Lock()
		ok := cond(r)
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func newTransport(t *testing.T, id uint64, tweak func(*Options)) *Transport {
	t.Helper()
	o := Options{ID: id, ListenAddr: "127.0.0.1:0", MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	if tweak != nil {
		tweak(&o)
	}
	tr, err := New(o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tr.Close()) })
	return tr
}

func appMsg(from, to, index uint64, data []byte) *pb.Message {
	return &pb.Message{Type: new(pb.MsgApp), From: new(from), To: new(to), Term: new(uint64(1)), Index: new(index),
		Entries: []*pb.Entry{{Term: new(uint64(1)), Index: new(index + 1), Data: data}}}
}

func snapMsg(from, to, index uint64, data []byte) *pb.Message {
	return &pb.Message{Type: new(pb.MsgSnap), From: new(from), To: new(to), Term: new(uint64(2)),
		Snapshot: &pb.Snapshot{Data: data, Metadata: &pb.SnapshotMetadata{Index: new(index), Term: new(uint64(2)),
			ConfState: &pb.ConfState{Voters: []uint64{1, 2, 3}}}}}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		ok   bool
	}{
		{"defaults", Options{ID: 1, ListenAddr: ":0"}, true},
		{"no ID", Options{ListenAddr: ":0"}, false},
		{"no address", Options{ID: 1}, false},
		{"chunk over message limit", Options{ID: 1, ListenAddr: ":0", MaxMessageSize: 1024, SnapshotChunkSize: 2048}, false},
		{"small message limit takes a small chunk", Options{ID: 1, ListenAddr: ":0", MaxMessageSize: 1024}, true},
		{"negative queue", Options{ID: 1, ListenAddr: ":0", QueueSize: -1}, false},
		{"backoff inverted", Options{ID: 1, ListenAddr: ":0", MinBackoff: time.Second, MaxBackoff: time.Millisecond}, false},
		{"half TLS", Options{ID: 1, ListenAddr: ":0", ClientTLS: selfSigned(t).client}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrInvalidOptions)
			}
		})
	}
}

func TestSendDeliversInOrder(t *testing.T) {
	a, b := newTransport(t, 1, nil), newTransport(t, 2, nil)
	ra, rb := newRecorder(), newRecorder()
	require.NoError(t, a.Start(ra))
	require.NoError(t, b.Start(rb))
	require.ErrorIs(t, a.Start(ra), ErrStarted)
	a.AddPeer(2, b.Addr().String())

	const n = 2000
	for i := range uint64(n) {
		a.Send([]*pb.Message{appMsg(1, 2, i, []byte{byte(i)})})
	}
	rb.waitFor(t, 10*time.Second, "all messages", func(r *recorder) bool { return len(r.msgs) == n })
	rb.mu.Lock()
	for i, m := range rb.msgs {
		require.Equal(t, uint64(i), m.GetIndex(), "delivery order")
		require.Equal(t, []byte{byte(i)}, m.GetEntries()[0].GetData())
	}
	rb.mu.Unlock()
	sa, sb := a.Stats(), b.Stats()
	require.EqualValues(t, n, sa.MessagesSent)
	require.EqualValues(t, n, sb.MessagesReceived)
	require.Zero(t, sa.MessagesDropped)
	require.Positive(t, sa.BytesSent)
	require.Equal(t, sa.BytesSent, sb.BytesReceived, "every byte sent arrived")
	require.True(t, sa.Peers[2].Connected)
}

// TestSendBatchesQueuedMessages queues many messages while the connection
// is still being made: the writer must gather them into few writes.
func TestSendBatchesQueuedMessages(t *testing.T) {
	a, b := newTransport(t, 1, nil), newTransport(t, 2, nil)
	rb := newRecorder()
	require.NoError(t, a.Start(newRecorder()))
	require.NoError(t, b.Start(rb))
	const n = 1000
	msgs := make([]*pb.Message, n)
	for i := range msgs {
		msgs[i] = appMsg(1, 2, uint64(i), []byte("x"))
	}
	a.AddPeer(2, b.Addr().String())
	a.Send(msgs)
	rb.waitFor(t, 10*time.Second, "all messages", func(r *recorder) bool { return len(r.msgs) == n })
	st := a.Stats()
	require.EqualValues(t, n, st.MessagesSent)
	require.LessOrEqual(t, st.Flushes, uint64(n/10), "messages per write: %d / %d", st.MessagesSent, st.Flushes)
}

func TestSendToUnknownPeerReportsUnreachable(t *testing.T) {
	a := newTransport(t, 1, nil)
	r := newRecorder()
	require.NoError(t, a.Start(r))
	a.Send([]*pb.Message{appMsg(1, 9, 1, nil), snapMsg(1, 9, 5, []byte("s"))})
	r.waitFor(t, 5*time.Second, "reports", func(r *recorder) bool {
		return r.unreachable[9] > 0 && len(r.snaps[9]) == 1
	})
	r.mu.Lock()
	require.Equal(t, []raft.SnapshotStatus{raft.SnapshotFailure}, r.snaps[9])
	r.mu.Unlock()
	require.EqualValues(t, 1, a.Stats().MessagesDropped)
	require.EqualValues(t, 1, a.Stats().SnapshotsFailed)
}

// TestQueueFullDropsAndReportsUnreachable points a peer at a listener that
// never reads: once the socket buffers fill, the writer blocks, the
// queue fills, and Send must drop (not block) and report the peer.
func TestQueueFullDropsAndReportsUnreachable(t *testing.T) {
	sink, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer sink.Close()
	a := newTransport(t, 1, func(o *Options) { o.QueueSize = 4; o.WriteTimeout = time.Minute })
	r := newRecorder()
	require.NoError(t, a.Start(r))
	a.AddPeer(2, sink.Addr().String())

	big := bytes.Repeat([]byte{7}, 1<<20)
	send := func(from, to uint64) {
		start := time.Now()
		for i := from; i < to; i++ {
			a.Send([]*pb.Message{appMsg(1, 2, i, big)})
		}
		require.Less(t, time.Since(start), 5*time.Second, "Send must not block on a stalled peer")
	}
	send(0, 200)
	r.waitFor(t, 10*time.Second, "unreachable report", func(r *recorder) bool { return r.unreachable[2] > 0 })
	// Let the writer fill the socket buffers and stall, then send more:
	// all of it must be dropped or queued, never waited for.
	require.Eventually(t, func() bool {
		s1 := a.Stats().MessagesSent
		time.Sleep(100 * time.Millisecond)
		return s1 == a.Stats().MessagesSent
	}, 10*time.Second, time.Millisecond, "the writer never stalled")
	sentBefore := a.Stats().MessagesSent
	send(200, 400)
	st := a.Stats()
	require.Equal(t, sentBefore, st.MessagesSent, "nothing more reached a stalled peer")
	require.Equal(t, st.MessagesDropped, st.Peers[2].Dropped)
	require.LessOrEqual(t, st.Peers[2].Queued, 4)
	// Every message is accounted for: written, dropped, queued, or the one
	// the blocked writer holds.
	total := st.MessagesSent + st.MessagesDropped + uint64(st.Peers[2].Queued)
	require.True(t, total == 400 || total == 399, "sent %d + dropped %d + queued %d", st.MessagesSent, st.MessagesDropped, st.Peers[2].Queued)
	require.Less(t, st.MessagesSent, uint64(100))
}

func TestSnapshotStreamedInChunks(t *testing.T) {
	a := newTransport(t, 1, func(o *Options) { o.SnapshotChunkSize = 1000 })
	b := newTransport(t, 2, func(o *Options) { o.MaxMessageSize = 4096 })
	ra, rb := newRecorder(), newRecorder()
	require.NoError(t, a.Start(ra))
	require.NoError(t, b.Start(rb))
	a.AddPeer(2, b.Addr().String())

	// 100 KiB of data against a 4 KiB frame limit on the receiver: it
	// only arrives if it is chunked.
	data := make([]byte, 100<<10)
	for i := range data {
		data[i] = byte(i * 7)
	}
	a.Send([]*pb.Message{snapMsg(1, 2, 42, data), appMsg(1, 2, 43, []byte("after"))})
	ra.waitFor(t, 10*time.Second, "snapshot report", func(r *recorder) bool { return len(r.snaps[2]) == 1 })
	ra.mu.Lock()
	require.Equal(t, []raft.SnapshotStatus{raft.SnapshotFinish}, ra.snaps[2])
	ra.mu.Unlock()
	rb.waitFor(t, 5*time.Second, "both messages", func(r *recorder) bool { return len(r.msgs) == 2 })
	rb.mu.Lock()
	var snap *pb.Message
	for _, m := range rb.msgs {
		if m.GetType() == pb.MsgSnap {
			snap = m
		}
	}
	rb.mu.Unlock()
	require.NotNil(t, snap)
	require.Equal(t, uint64(42), snap.GetSnapshot().GetMetadata().GetIndex())
	require.Equal(t, []uint64{1, 2, 3}, snap.GetSnapshot().GetMetadata().GetConfState().GetVoters())
	require.True(t, bytes.Equal(data, snap.GetSnapshot().GetData()))
	require.EqualValues(t, 1, a.Stats().SnapshotsSent)
	require.EqualValues(t, 1, b.Stats().SnapshotsReceived)
}

func TestSnapshotFailuresAreReported(t *testing.T) {
	t.Run("receiver refuses", func(t *testing.T) {
		a, b := newTransport(t, 1, nil), newTransport(t, 2, nil)
		ra, rb := newRecorder(), newRecorder()
		rb.stepErr = errors.New("raft stopped")
		require.NoError(t, a.Start(ra))
		require.NoError(t, b.Start(rb))
		a.AddPeer(2, b.Addr().String())
		a.Send([]*pb.Message{snapMsg(1, 2, 7, []byte("state"))})
		ra.waitFor(t, 10*time.Second, "failure report", func(r *recorder) bool { return len(r.snaps[2]) == 1 })
		ra.mu.Lock()
		defer ra.mu.Unlock()
		require.Equal(t, []raft.SnapshotStatus{raft.SnapshotFailure}, ra.snaps[2])
	})
	t.Run("peer down", func(t *testing.T) {
		gone, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := gone.Addr().String()
		gone.Close()
		a := newTransport(t, 1, nil)
		ra := newRecorder()
		require.NoError(t, a.Start(ra))
		a.AddPeer(2, addr)
		a.Send([]*pb.Message{snapMsg(1, 2, 7, []byte("state")), snapMsg(1, 2, 8, []byte("state"))})
		ra.waitFor(t, 10*time.Second, "failure reports", func(r *recorder) bool { return len(r.snaps[2]) == 2 })
		ra.mu.Lock()
		require.Equal(t, []raft.SnapshotStatus{raft.SnapshotFailure, raft.SnapshotFailure}, ra.snaps[2])
		ra.mu.Unlock()
		require.Positive(t, a.Stats().DialFailures)
	})
	t.Run("queued when closed", func(t *testing.T) {
		// A peer that accepts and never answers holds the first snapshot
		// in flight; Close must fail it and every one queued behind it.
		sink, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer sink.Close()
		a, err := New(Options{ID: 1, ListenAddr: "127.0.0.1:0", SnapshotQueueSize: 2})
		require.NoError(t, err)
		ra := newRecorder()
		require.NoError(t, a.Start(ra))
		a.AddPeer(2, sink.Addr().String())
		var msgs []*pb.Message
		for i := range uint64(5) {
			msgs = append(msgs, snapMsg(1, 2, 10+i, []byte("state")))
		}
		a.Send(msgs)
		require.NoError(t, a.Close())
		ra.mu.Lock()
		defer ra.mu.Unlock()
		require.Len(t, ra.snaps[2], 5, "one report per MsgSnap")
		for _, s := range ra.snaps[2] {
			require.Equal(t, raft.SnapshotFailure, s)
		}
	})
}

func TestReconnectAfterPeerRestart(t *testing.T) {
	a := newTransport(t, 1, nil)
	ra := newRecorder()
	require.NoError(t, a.Start(ra))
	b, err := New(Options{ID: 2, ListenAddr: "127.0.0.1:0"})
	require.NoError(t, err)
	addr := b.Addr().String()
	rb := newRecorder()
	require.NoError(t, b.Start(rb))
	a.AddPeer(2, addr)
	a.Send([]*pb.Message{appMsg(1, 2, 1, nil)})
	rb.waitFor(t, 5*time.Second, "first message", func(r *recorder) bool { return len(r.msgs) == 1 })
	require.NoError(t, b.Close())

	// Keep sending while the peer is down and after it is back on the
	// same address: the writer notices, reconnects and delivers again.
	b2, err := New(Options{ID: 2, ListenAddr: addr})
	require.NoError(t, err)
	defer b2.Close()
	rb2 := newRecorder()
	require.NoError(t, b2.Start(rb2))
	deadline := time.Now().Add(10 * time.Second)
	for i := uint64(2); ; i++ {
		a.Send([]*pb.Message{appMsg(1, 2, i, nil)})
		rb2.mu.Lock()
		got := len(rb2.msgs)
		rb2.mu.Unlock()
		if got > 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "no delivery after the peer restarted")
		time.Sleep(10 * time.Millisecond)
	}
	require.Positive(t, a.Stats().Reconnects)
	ra.mu.Lock()
	require.Positive(t, ra.unreachable[2], "the lost connection is reported")
	ra.mu.Unlock()
}

func TestWrongPeerRefused(t *testing.T) {
	a, c := newTransport(t, 1, nil), newTransport(t, 3, nil)
	ra, rc := newRecorder(), newRecorder()
	require.NoError(t, a.Start(ra))
	require.NoError(t, c.Start(rc))
	// a believes node 2 lives at c's address.
	a.AddPeer(2, c.Addr().String())
	for i := range uint64(50) {
		a.Send([]*pb.Message{appMsg(1, 2, i, nil)})
		time.Sleep(2 * time.Millisecond)
	}
	ra.waitFor(t, 5*time.Second, "unreachable report", func(r *recorder) bool { return r.unreachable[2] > 0 })
	rc.mu.Lock()
	require.Empty(t, rc.msgs, "a message for node 2 reached node 3")
	rc.mu.Unlock()
}

func TestRemovePeerAndAddressChange(t *testing.T) {
	a, b, c := newTransport(t, 1, nil), newTransport(t, 2, nil), newTransport(t, 2, nil)
	ra, rb, rc := newRecorder(), newRecorder(), newRecorder()
	require.NoError(t, a.Start(ra))
	require.NoError(t, b.Start(rb))
	require.NoError(t, c.Start(rc))
	a.AddPeer(2, b.Addr().String())
	a.Send([]*pb.Message{appMsg(1, 2, 1, nil)})
	rb.waitFor(t, 5*time.Second, "delivery to b", func(r *recorder) bool { return len(r.msgs) == 1 })

	// Node 2 moved to c's address.
	a.AddPeer(2, c.Addr().String())
	deadline := time.Now().Add(5 * time.Second)
	for i := uint64(2); ; i++ {
		a.Send([]*pb.Message{appMsg(1, 2, i, nil)})
		rc.mu.Lock()
		got := len(rc.msgs)
		rc.mu.Unlock()
		if got > 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "no delivery at the new address")
		time.Sleep(5 * time.Millisecond)
	}

	a.RemovePeer(2)
	require.NotContains(t, a.Stats().Peers, uint64(2))
	a.Send([]*pb.Message{appMsg(1, 2, 100, nil)})
	ra.waitFor(t, 5*time.Second, "unreachable report", func(r *recorder) bool { return r.unreachable[2] > 0 })
}

func TestCloseIsIdempotentAndStopsStart(t *testing.T) {
	a, err := New(Options{ID: 1, ListenAddr: "127.0.0.1:0"})
	require.NoError(t, err)
	require.NoError(t, a.Close())
	require.NoError(t, a.Close())
	require.ErrorIs(t, a.Start(newRecorder()), ErrClosed)
	a.Send([]*pb.Message{appMsg(1, 2, 1, nil)}) // dropped, no panic
}

// TestCloseStopsEveryGoroutine closes transports in the middle of
// everything: connected streams both ways, a snapshot waiting for an
// acknowledgement that never comes, a peer being redialed. Nothing they
// started may outlive Close.
func TestCloseStopsEveryGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	sink, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer sink.Close()
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	goneAddr := gone.Addr().String()
	gone.Close()

	a, err := New(Options{ID: 1, ListenAddr: "127.0.0.1:0", MinBackoff: time.Millisecond})
	require.NoError(t, err)
	b, err := New(Options{ID: 2, ListenAddr: "127.0.0.1:0"})
	require.NoError(t, err)
	ra, rb := newRecorder(), newRecorder()
	require.NoError(t, a.Start(ra))
	require.NoError(t, b.Start(rb))
	a.AddPeer(2, b.Addr().String())
	b.AddPeer(1, a.Addr().String())
	a.AddPeer(3, sink.Addr().String())
	a.AddPeer(4, goneAddr)
	a.Send([]*pb.Message{appMsg(1, 2, 1, nil), snapMsg(1, 3, 9, []byte("never acknowledged")), appMsg(1, 4, 1, nil)})
	b.Send([]*pb.Message{appMsg(2, 1, 1, nil)})
	rb.waitFor(t, 5*time.Second, "a to b", func(r *recorder) bool { return len(r.msgs) == 1 })
	ra.waitFor(t, 5*time.Second, "b to a", func(r *recorder) bool { return len(r.msgs) == 1 })

	require.NoError(t, a.Close())
	require.NoError(t, b.Close())
	ra.mu.Lock()
	defer ra.mu.Unlock()
	require.Equal(t, []raft.SnapshotStatus{raft.SnapshotFailure}, ra.snaps[3], "the snapshot in flight is reported failed")
}
