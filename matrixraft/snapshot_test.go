package matrixraft

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"
)

// TestSnapshotStateEncoding checks the snapshot data format: a captured
// state machine and one written by Snapshot give the same bytes, laid out
// as before the capture existed (magic, the replicated state's length and
// body, then the user's state), and they decode to what was captured.
func TestSnapshotStateEncoding(t *testing.T) {
	reps := []struct {
		name string
		rep  func() replicated
		body []byte // the replicated state's encoding
	}{
		{"empty", newReplicated, []byte{0, 0, 0}},
		{"sessions, removed and addresses", func() replicated {
			r := newReplicated()
			r.removed[9] = true
			r.addrs[2] = "n2"
			r.sessions[7] = &session{seq: 3, result: []byte("ok"), index: 40}
			return r
		}, []byte{1, 9, 1, 2, 2, 'n', '2', 1, 7, 3, 40, 2, 'o', 'k'}},
	}
	sms := []struct {
		name string
		sm   func(*kvSM) StateMachine
	}{
		{"Snapshot", func(kv *kvSM) StateMachine { return kv }},
		{"SnapshotCapturer", func(kv *kvSM) StateMachine { return capturingKV{kv} }},
	}
	for _, r := range reps {
		for _, s := range sms {
			t.Run(r.name+"/"+s.name, func(t *testing.T) {
				kv := newKV()
				kv.Apply([]Command{{Index: 1, Data: kvCmd('p', "a", "1")}, {Index: 2, Data: kvCmd('p', "b", "2")}})
				st, err := captureState(r.rep(), s.sm(kv))
				require.NoError(t, err)
				data, err := st.encode()
				require.NoError(t, err)

				want := append([]byte(snapDataMagic), byte(len(r.body)))
				want = append(want, r.body...)
				want = append(want, "{\"a\":\"1\",\"b\":\"2\"}\n"...)
				require.Equal(t, want, data)

				rep, rest, err := decodeSnapshotData(data)
				require.NoError(t, err)
				require.Equal(t, r.rep(), rep)
				got := newKV()
				require.NoError(t, got.Restore(bytes.NewReader(rest)))
				require.Equal(t, kv.data, got.data)
			})
		}
	}
}

// TestCapturedStateIgnoresLaterChanges changes the replicated state and the
// state machine after a capture: the capture, encoded afterwards as it is
// beside the loop, still holds the state of its moment.
func TestCapturedStateIgnoresLaterChanges(t *testing.T) {
	tests := []struct {
		name   string
		change func(rep *replicated, kv *kvSM)
	}{
		{"apply", func(_ *replicated, kv *kvSM) {
			kv.Apply([]Command{{Index: 3, Data: kvCmd('a', "a", "+")}, {Index: 4, Data: kvCmd('p', "c", "3")}})
		}},
		{"restore", func(_ *replicated, kv *kvSM) {
			require.NoError(t, kv.Restore(bytes.NewReader([]byte(`{"z":"26"}`))))
		}},
		{"sessions, removed and addresses", func(rep *replicated, _ *kvSM) {
			rep.sessions[7] = &session{seq: 4, result: []byte("later"), index: 50}
			rep.sessions[8] = &session{seq: 1, index: 51}
			rep.removed[2] = true
			delete(rep.addrs, 2)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv := newKV()
			kv.Apply([]Command{{Index: 1, Data: kvCmd('p', "a", "1")}, {Index: 2, Data: kvCmd('p', "b", "2")}})
			rep := newReplicated()
			rep.addrs[2] = "n2"
			rep.sessions[7] = &session{seq: 3, result: []byte("ok"), index: 40}
			before, err := captureState(rep, kv)
			require.NoError(t, err)
			wantData, err := before.encode()
			require.NoError(t, err)

			st, err := captureState(rep, capturingKV{kv})
			require.NoError(t, err)
			tt.change(&rep, kv)
			data, err := st.encode()
			require.NoError(t, err)
			require.Equal(t, wantData, data)
		})
	}
}

// TestSnapshotFileWrittenInPieces checks that the file written piece by
// piece is exactly the encoding the decoder reads.
func TestSnapshotFileWrittenInPieces(t *testing.T) {
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"small", []byte("state")},
		{"large", bytes.Repeat([]byte{0xA5, 0x5A, 0x00}, 1<<20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			snap := &pb.Snapshot{Metadata: &pb.SnapshotMetadata{Index: new(uint64(12)), Term: new(uint64(3)), ConfState: &pb.ConfState{Voters: []uint64{1, 2}}}, Data: tt.data}
			require.NoError(t, writeSnapshotFile(dir, snap))
			got, err := os.ReadFile(filepath.Join(dir, snapName(12, 3)))
			require.NoError(t, err)
			want, err := encodeSnapshotFile(snap)
			require.NoError(t, err)
			require.Equal(t, want, got)
			back, err := readSnapshotFile(dir, 12, 3)
			require.NoError(t, err)
			require.Equal(t, len(tt.data), len(back.GetData()))
			require.True(t, bytes.Equal(tt.data, back.GetData()))
		})
	}
}

// histSM is kvSM keeping a copy of every command it applied, so a snapshot
// can be compared with a replay of the commands up to its index. Wrapped
// in gatedCapturer it is a SnapshotCapturer whose captures, when written,
// first wait for more commands to be applied.
type histSM struct {
	kv *kvSM

	mu      sync.Mutex
	history []Command
	written []writtenCapture
}

// writtenCapture is a capture's output and the last command applied when
// it was taken.
type writtenCapture struct {
	at   uint64
	data []byte
}

func (s *histSM) Apply(batch []Command) [][]byte {
	out := s.kv.Apply(batch)
	s.mu.Lock()
	for _, c := range batch {
		s.history = append(s.history, Command{Index: c.Index, Data: bytes.Clone(c.Data)})
	}
	s.mu.Unlock()
	return out
}

func (s *histSM) Snapshot(w io.Writer) error { return s.kv.Snapshot(w) }
func (s *histSM) Restore(r io.Reader) error  { return s.kv.Restore(r) }

func (s *histSM) last() (uint64, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.history) == 0 {
		return 0, 0
	}
	return s.history[len(s.history)-1].Index, len(s.history)
}

// replay is the state after applying the recorded commands up to index
// to an empty state machine.
func (s *histSM) replay(index uint64) map[string]string {
	s.mu.Lock()
	var cmds []Command
	for _, c := range s.history {
		if c.Index <= index {
			cmds = append(cmds, c)
		}
	}
	s.mu.Unlock()
	kv := newKV()
	kv.Apply(cmds)
	return kv.data
}

// gatedCapturer is histSM as a SnapshotCapturer.
type gatedCapturer struct {
	*histSM
	overlapped *atomic.Int64   // captures written after later commands applied
	release    <-chan struct{} // closed: stop holding captures
}

func (s gatedCapturer) CaptureSnapshot() (io.WriterTo, error) {
	inner, err := capturingKV{s.kv}.CaptureSnapshot()
	if err != nil {
		return nil, err
	}
	at, n := s.last()
	return writerToFunc(func(w io.Writer) (int64, error) {
		// Hold the capture until the loop has applied more commands,
		// which it must not see (or until the writes end).
	wait:
		for {
			if _, m := s.last(); m >= n+20 {
				s.overlapped.Add(1)
				break
			}
			select {
			case <-s.release:
				break wait
			case <-time.After(time.Millisecond):
			}
		}
		var b bytes.Buffer
		if _, err := inner.WriteTo(&b); err != nil {
			return 0, err
		}
		s.mu.Lock()
		s.written = append(s.written, writtenCapture{at: at, data: bytes.Clone(b.Bytes())})
		s.mu.Unlock()
		k, err := w.Write(b.Bytes())
		return int64(k), err
	}), nil
}

type writerToFunc func(io.Writer) (int64, error)

func (f writerToFunc) WriteTo(w io.Writer) (int64, error) { return f(w) }

// TestSnapshotWhileWritesContinue snapshots a node under a steady stream
// of writes and checks every snapshot against a replay of the commands up
// to its index: captured off the loop while later commands are applied
// (SnapshotCapturer, with and without AsyncStorageWrites) or written on
// the loop (Snapshot). The node then restarts from its snapshot and log
// and must hold exactly the replay of everything applied.
func TestSnapshotWhileWritesContinue(t *testing.T) {
	tests := []struct {
		name    string
		capture bool
		async   bool
	}{
		{"Snapshot on the loop", false, false},
		{"SnapshotCapturer", true, false},
		{"SnapshotCapturer with AsyncStorageWrites", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			nw := NewMemNetwork(1)
			var overlapped atomic.Int64
			release := make(chan struct{})
			start := func(h *histSM) *Node {
				var sm StateMachine = h
				if tt.capture {
					sm = gatedCapturer{histSM: h, overlapped: &overlapped, release: release}
				}
				n, err := StartNode(Options{
					ID: 1, Dir: dir, Peers: []Peer{{ID: 1, Addr: "n1"}}, StateMachine: sm,
					Transport: nw.Transport(1), TickInterval: time.Millisecond,
					SnapshotEntries: 60, CatchUpEntries: 10, AsyncStorageWrites: tt.async,
				})
				require.NoError(t, err)
				require.NoError(t, n.Campaign(t.Context()))
				require.Eventually(t, func() bool { return n.Status().IsLeader }, 10*time.Second, time.Millisecond)
				return n
			}
			h := &histSM{kv: newKV()}
			n := start(h)

			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Go(func() {
					for i := 0; ctx.Err() == nil; i++ {
						_, err := n.Propose(ctx, kvCmd('a', fmt.Sprintf("k%d", (i*7+w)%16), fmt.Sprintf("%d.%d;", w, i)))
						if err != nil && ctx.Err() == nil {
							t.Errorf("propose: %v", err)
							return
						}
					}
				})
			}
			require.Eventually(t, func() bool {
				return n.Status().SnapshotsCreated >= 4 && (!tt.capture || overlapped.Load() >= 2)
			}, 60*time.Second, 5*time.Millisecond)
			cancel()
			wg.Wait()
			close(release)

			// Every capture holds exactly the state at its index, though
			// later commands were applied before it was written.
			h.mu.Lock()
			written := h.written
			h.mu.Unlock()
			if tt.capture {
				require.NotEmpty(t, written)
			}
			for _, wc := range written {
				got := newKV()
				require.NoError(t, got.Restore(bytes.NewReader(wc.data)))
				require.Equal(t, h.replay(wc.at), got.data, "capture at %d", wc.at)
			}

			// So does the newest durable snapshot, as the node stored it.
			snap, err := n.storage.Snapshot()
			require.NoError(t, err)
			index := snap.GetMetadata().GetIndex()
			require.Positive(t, index)
			_, rest, err := decodeSnapshotData(snap.GetData())
			require.NoError(t, err)
			got := newKV()
			require.NoError(t, got.Restore(bytes.NewReader(rest)))
			require.Equal(t, h.replay(index), got.data)
			last, _ := h.last()
			require.Greater(t, last, index, "writes went on after the snapshot")

			// A restart restores the newest snapshot and applies the log
			// after it: the same commands at the same indices as before,
			// then any the log held beyond them (cancelled proposals may
			// still commit).
			n.Stop()
			require.NoError(t, n.Err())
			last, _ = h.last()
			h2 := &histSM{kv: newKV()}
			n = start(h2)
			defer n.Stop()
			require.Eventually(t, func() bool { return n.Status().Applied >= last }, 10*time.Second, time.Millisecond)
			require.NoError(t, n.Read(t.Context(), ReadLinearizable))
			h2.mu.Lock()
			after := slices.Clone(h2.history)
			h2.mu.Unlock()
			restored, again := last, map[uint64]Command{}
			if len(after) > 0 {
				restored = after[0].Index - 1
			}
			for _, c := range after {
				again[c.Index] = c
			}
			h.mu.Lock()
			var all []Command
			for _, c := range h.history {
				if c.Index <= restored {
					all = append(all, c)
				} else {
					require.Equal(t, c, again[c.Index], "command %d re-applied from the log", c.Index)
				}
			}
			h.mu.Unlock()
			want := newKV()
			want.Apply(append(all, after...))
			require.Equal(t, want.data, h2.kv.snapshotData())
		})
	}
}

// TestSnapshotCaptureFailureStopsTheNode: a capture that cannot be taken
// or written fails the node as a failed Snapshot does, and no snapshot is
// recorded.
func TestSnapshotCaptureFailureStopsTheNode(t *testing.T) {
	errBroken := errors.New("broken capture")
	tests := []struct {
		name string
		sm   StateMachine
		want error
	}{
		{"capture fails", failingCapturer{kvSM: newKV(), captureErr: errBroken}, errBroken},
		{"write fails", failingCapturer{kvSM: newKV(), writeErr: errBroken}, errBroken},
		{"no capture", failingCapturer{kvSM: newKV(), none: true}, ErrInvalidOptions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := StartNode(Options{
				ID: 1, Dir: t.TempDir(), Peers: []Peer{{ID: 1, Addr: "n1"}}, StateMachine: tt.sm,
				Transport: NewMemNetwork(1).Transport(1), TickInterval: time.Millisecond, SnapshotEntries: 5,
			})
			require.NoError(t, err)
			defer n.Stop()
			require.NoError(t, n.Campaign(t.Context()))
			require.Eventually(t, func() bool { return n.Status().IsLeader }, 10*time.Second, time.Millisecond)
			var perr error
			for i := 0; ; i++ {
				if _, perr = n.Propose(t.Context(), kvCmd('p', "k", fmt.Sprint(i))); perr != nil {
					break
				}
				require.Less(t, i, 1000, "the node never failed")
			}
			select {
			case <-n.Done():
			case <-time.After(10 * time.Second):
				t.Fatalf("a proposal failed (%v) but the node runs on", perr)
			}
			require.ErrorIs(t, n.Err(), tt.want)
			require.Zero(t, n.Status().SnapshotsCreated)
		})
	}
}

type failingCapturer struct {
	*kvSM
	captureErr, writeErr error
	none                 bool // return no capture and no error
}

func (f failingCapturer) CaptureSnapshot() (io.WriterTo, error) {
	if f.captureErr != nil || f.none {
		return nil, f.captureErr
	}
	return writerToFunc(func(io.Writer) (int64, error) { return 0, f.writeErr }), nil
}

// snapshotData returns a copy of the map, taken under the lock.
func (s *kvSM) snapshotData() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.data)
}

// lightKV is kvSM as a state machine whose snapshots record nothing of
// its state (as one that keeps its state in files of its own): Restore
// of such a snapshot keeps what it has. It is a StateSender, so a replica
// that needs a snapshot gets the whole map.
type lightKV struct{ *kvSM }

const lightMark = "light\n"

func (s lightKV) Snapshot(w io.Writer) error {
	_, err := io.WriteString(w, lightMark)
	return err
}

func (s lightKV) Restore(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil || string(b) == lightMark {
		return err
	}
	return s.kvSM.Restore(bytes.NewReader(b))
}

func (s lightKV) SendState(w io.Writer) error { return s.kvSM.Snapshot(w) }

// A replica behind the leader's compacted log catches up from the state
// its StateSender writes when the snapshot is sent, not from the
// snapshot's own (light) data; sessions travel with it as with any.
func TestStateSentWithASnapshot(t *testing.T) {
	c := newCluster(t, 3, 9, func(o *Options) {
		if kv, ok := o.StateMachine.(*kvSM); ok {
			o.StateMachine = lightKV{kv}
		}
		o.SnapshotEntries, o.CatchUpEntries = 20, 5
	})
	defer c.stopAll()
	lead := c.leader()
	ctx := t.Context()
	var lag uint64
	for _, n := range c.live() {
		if n != lead {
			lag = n.ID()
		}
	}
	c.nw.Isolate(lag)
	for i := range 200 {
		_, err := lead.ProposeSession(ctx, 77, uint64(i+1), kvCmd('p', fmt.Sprint("k", i%13), fmt.Sprint(i)))
		require.NoError(t, err)
	}
	require.Positive(t, lead.Status().SnapshotIndex, "the leader compacted")
	c.nw.Heal()
	c.waitRounds(2000, "the lagging replica catches up", func() bool {
		return c.sm(lag).get("k12") == c.sm(lead.ID()).get("k12") && c.sm(lag).get("k0") == c.sm(lead.ID()).get("k0")
	})
	require.Positive(t, c.node(lag).Status().SnapshotsInstalled)
	for i := range 13 {
		k := fmt.Sprint("k", i)
		require.Equal(t, c.sm(lead.ID()).get(k), c.sm(lag).get(k), k)
	}
}
