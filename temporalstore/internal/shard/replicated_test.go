package shard

import (
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixraft"
	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/raftlog"
)

// replicas are three shards whose logs replicate one another: a raft
// group, or a shared log.
type replicas struct {
	t    *testing.T
	dirs []string
	s    []*Shard
	// open opens replica i's logs; the function it returns closes what
	// they need beside the shard.
	open func(i int) (storage.OpenLogFunc, func())
	// leads says replica i's log takes writes.
	leads   func(l storage.Log, i int) bool
	closers []func()
}

func newReplicas(t *testing.T, raft matrixraft.Options) *replicas {
	raft.TickInterval, raft.ElectionTick, raft.HeartbeatTick = 5*time.Millisecond, 10, 1
	nw := matrixraft.NewMemNetwork(1)
	r := &replicas{t: t}
	r.open = func(i int) (storage.OpenLogFunc, func()) {
		host, err := matrixraft.OpenHost(filepath.Join(r.dirs[i], "raft"), matrixraft.HostOptions{WAL: wal.Options{NoDirectIO: true}})
		require.NoError(t, err)
		id := uint64(i + 1)
		logs, err := raftlog.New(raftlog.Options{
			Host: host, NodeID: id, Peers: []matrixraft.Peer{{ID: 1}, {ID: 2}, {ID: 3}},
			Transport: func(uint64) (matrixraft.Transport, error) { return nw.Transport(id), nil },
			Raft:      raft,
		})
		require.NoError(t, err)
		return logs.OpenLog, func() { require.NoError(t, host.Close()) }
	}
	r.leads = func(l storage.Log, i int) bool { return l.(*raftlog.Log).Node().Leader() == uint64(i+1) }
	r.startAll()
	return r
}

func (r *replicas) startAll() {
	for range 3 {
		r.dirs = append(r.dirs, r.t.TempDir())
	}
	r.s, r.closers = make([]*Shard, 3), make([]func(), 3)
	for i := range 3 {
		r.start(i)
	}
	r.t.Cleanup(func() {
		for i := range 3 {
			r.stop(i)
		}
	})
}

func (r *replicas) start(i int) {
	openLog, closer := r.open(i)
	s, err := Open(filepath.Join(r.dirs[i], "shard"), Options{OpenLog: openLog, SegmentSize: 1 << 20})
	require.NoError(r.t, err)
	r.s[i], r.closers[i] = s, closer
}

func (r *replicas) stop(i int) {
	if r.s[i] == nil {
		return
	}
	require.NoError(r.t, r.s[i].Close())
	r.closers[i]()
	r.s[i] = nil
}

// leader returns the shard whose replica leads, once one does.
func (r *replicas) leader() int {
	r.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for i, s := range r.s {
			if s == nil {
				continue
			}
			if r.leads(s.log, i) {
				return i
			}
		}
	}
	r.t.Fatal("no leader")
	return -1
}

// converged waits until every running replica has applied what the
// leader's log holds and returns their strings (contents), equal.
func (r *replicas) converged(lead int) map[string]string {
	r.t.Helper()
	last := r.s[lead].log.LastIndex()
	for i, s := range r.s {
		if s == nil {
			continue
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			var applied uint64
			s.rlocked(func() { applied = s.applied })
			if applied >= last {
				break
			}
			if time.Now().After(deadline) {
				r.t.Fatalf("replica %d applied %d of %d", i+1, applied, last)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	want := contents(r.t, r.s[lead])
	for i, s := range r.s {
		if s != nil {
			require.Equal(r.t, want, contents(r.t, s), "replica %d", i+1)
		}
	}
	return want
}

func TestReplicatedShardsConverge(t *testing.T) {
	checkConverge(t, newReplicas(t, matrixraft.Options{}))
}

// checkConverge writes through the replica that leads, checks every
// replica holds the same, that the others refuse writes, and that after
// the leader stops another takes over with the same state, and the old
// one catches up when it comes back.
func checkConverge(t *testing.T, r *replicas) {
	ctx := t.Context()
	model := map[string]string{}
	write := func(s *Shard, step int) {
		k := fmt.Sprintf("k%d", step%17)
		switch step % 5 {
		case 0, 1:
			v := fmt.Sprint(step)
			require.NoError(t, s.Set(ctx, []byte(k), []byte(v), time.Time{}))
			model[k] = v
		case 2:
			require.NoError(t, s.Update(ctx, []byte("counter"), incrDecimal))
			n := 0
			fmt.Sscan(model["counter"], &n)
			model["counter"] = fmt.Sprint(n + 1)
		case 3:
			require.NoError(t, s.Delete(ctx, []byte(k)))
			delete(model, k)
		case 4:
			require.NoError(t, s.Exclusive(ctx, func(s *Shard) error {
				if err := s.Set(ctx, []byte("tx-a"), []byte(k), time.Time{}); err != nil {
					return err
				}
				return s.SetBatch(ctx, []command.Command{StringSet([]byte("tx-b"), []byte(k), time.Time{})})
			}))
			model["tx-a"], model["tx-b"] = k, k
		}
	}
	lead := r.leader()
	for step := range 200 {
		write(r.s[lead], step)
	}
	require.Equal(t, model, r.converged(lead))
	// A follower refuses writes and changes nothing.
	f := (lead + 1) % 3
	err := r.s[f].Set(ctx, []byte("nope"), []byte("x"), time.Time{})
	require.ErrorIs(t, err, storage.ErrNotLeader)
	err = r.s[f].Update(ctx, []byte("counter"), incrDecimal)
	require.ErrorIs(t, err, storage.ErrNotLeader)
	err = r.s[f].Exclusive(ctx, func(s *Shard) error {
		return s.Set(ctx, []byte("nope"), []byte("x"), time.Time{})
	})
	require.ErrorIs(t, err, storage.ErrNotLeader)
	require.Equal(t, model, r.converged(lead))

	// The leader goes; another takes over with the same state and writes
	// on; the old one comes back and catches up.
	r.stop(lead)
	old := lead
	lead = r.leader()
	require.Equal(t, model, r.converged(lead))
	for step := 200; step < 300; step++ {
		write(r.s[lead], step)
	}
	r.start(old)
	got := r.converged(lead)
	require.Equal(t, model, got)
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("%d keys agree on 3 replicas: %v", len(keys), keys)
}

// A replica down while its group compacted its raft log past it is sent
// the leader's image and value log when it comes back, and converges.
func TestReplicaBehindTheRaftLogGetsTheImage(t *testing.T) {
	r := newReplicas(t, matrixraft.Options{SnapshotEntries: 16, CatchUpEntries: 4})
	ctx := t.Context()
	lead := r.leader()
	model := map[string]string{}
	for i := range 50 {
		k, v := fmt.Sprint("k", i%7), fmt.Sprint(i)
		require.NoError(t, r.s[lead].Set(ctx, []byte(k), []byte(v), time.Time{}))
		model[k] = v
	}
	require.NoError(t, r.s[lead].Update(ctx, []byte("n"), incrDecimal))
	model["n"] = "1"
	require.Equal(t, model, r.converged(lead))
	down := (lead + 1) % 3
	downApplied := r.s[down].log.(*raftlog.Log).Node().Status().Applied
	r.stop(down)
	leadNode := r.s[lead].log.(*raftlog.Log).Node()
	// Written until the leader's raft log starts past the replica's place
	// (a snapshot, then CatchUpEntries kept behind it), however slowly
	// its snapshots are taken.
	for i := 0; i < 300 || leadNode.Status().SnapshotIndex <= downApplied+4+1; i++ {
		require.Less(t, i, 20_000, "the leader's raft log was never compacted")
		k, v := fmt.Sprint("k", i%11), fmt.Sprint("after-", i)
		require.NoError(t, r.s[lead].Set(ctx, []byte(k), []byte(v), time.Time{}))
		model[k] = v
		if i%50 == 0 {
			// Checkpoints and reclaims move the leader's log front on.
			_, err := r.s[lead].ReclaimLog(ctx)
			require.NoError(t, err)
		}
	}
	require.NoError(t, r.s[lead].Delete(ctx, []byte("k0")))
	delete(model, "k0")
	r.start(down)
	require.Equal(t, model, r.converged(lead))
	// The node counts the install once its state machine has returned,
	// a moment after the shard applied it.
	require.Eventually(t, func() bool { return r.s[down].log.(*raftlog.Log).Node().Status().SnapshotsInstalled > 0 },
		5*time.Second, 5*time.Millisecond, "caught up from a snapshot, not the raft log")
	// It applies what follows as any follower does.
	require.NoError(t, r.s[lead].Set(ctx, []byte("last"), []byte("x"), time.Time{}))
	model["last"] = "x"
	require.Equal(t, model, r.converged(lead))
	// And restarts from what it installed.
	r.stop(down)
	r.start(down)
	require.Equal(t, model, r.converged(lead))
}
