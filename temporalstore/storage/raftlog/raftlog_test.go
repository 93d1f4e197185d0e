package raftlog_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixraft"
	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/raftlog"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/storagetest"
)

// fastRaft ticks every 5 ms, so a group elects in tens of milliseconds.
var fastRaft = matrixraft.Options{TickInterval: 5 * time.Millisecond, ElectionTick: 10, HeartbeatTick: 1}

// networks hands each group an in-memory network shared by the nodes of
// one test.
type networks struct {
	mu  sync.Mutex
	nws map[uint64]*matrixraft.MemNetwork
}

func (n *networks) transport(id uint64) func(uint64) (matrixraft.Transport, error) {
	return func(group uint64) (matrixraft.Transport, error) {
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.nws == nil {
			n.nws = map[uint64]*matrixraft.MemNetwork{}
		}
		nw := n.nws[group]
		if nw == nil {
			nw = matrixraft.NewMemNetwork(group)
			n.nws[group] = nw
		}
		return nw.Transport(id), nil
	}
}

// singleNode opens a one-voter replicated log with a host of its own in
// o.Dir, waiting until it leads; closing the log closes the host.
func singleNode(ctx context.Context, o storage.LogOptions) (storage.Log, error) {
	host, err := matrixraft.OpenHost(filepath.Join(o.Dir, "raft"), matrixraft.HostOptions{WAL: wal.Options{NoDirectIO: true}})
	if err != nil {
		if errors.Is(err, wal.ErrLocked) {
			return nil, fmt.Errorf("%w: %w", storage.ErrLocked, err)
		}
		return nil, err
	}
	var nws networks
	logs, err := raftlog.New(raftlog.Options{Host: host, NodeID: 1, Peers: []matrixraft.Peer{{ID: 1}}, Transport: nws.transport(1), Raft: fastRaft})
	if err != nil {
		host.Close()
		return nil, err
	}
	l, err := logs.OpenLog(ctx, o)
	if err != nil {
		host.Close()
		return nil, err
	}
	rl := l.(*raftlog.Log)
	for rl.Node().Leader() != 1 {
		time.Sleep(time.Millisecond)
	}
	return &ownHost{Log: rl, host: host}, nil
}

type ownHost struct {
	*raftlog.Log
	host *matrixraft.Host
}

func (o *ownHost) Close() error {
	err := o.Log.Close()
	if !errors.Is(err, storage.ErrClosed) {
		o.host.Close()
	}
	return err
}

func TestLogContract(t *testing.T) { storagetest.Log(t, singleNode) }

// replica is one node of a test cluster: a host and the logs on it.
type replica struct {
	id   uint64
	dir  string
	host *matrixraft.Host
	logs *raftlog.Logs
	log  *raftlog.Log
}

type cluster struct {
	t    *testing.T
	nws  networks
	raft matrixraft.Options
	reps []*replica
	lo   storage.LogOptions
}

func newCluster(t *testing.T, n int, raft matrixraft.Options) *cluster {
	c := &cluster{t: t, raft: raft, lo: storage.LogOptions{Namespace: "ns", Table: "t", Shard: 0, SegmentBytes: 64 << 10}}
	for i := range n {
		c.reps = append(c.reps, &replica{id: uint64(i + 1), dir: t.TempDir()})
	}
	for _, r := range c.reps {
		c.start(r)
	}
	t.Cleanup(func() {
		for _, r := range c.reps {
			c.stop(r)
		}
	})
	return c
}

func (c *cluster) peers() []matrixraft.Peer {
	var ps []matrixraft.Peer
	for _, r := range c.reps {
		ps = append(ps, matrixraft.Peer{ID: r.id})
	}
	return ps
}

func (c *cluster) start(r *replica) {
	t := c.t
	host, err := matrixraft.OpenHost(filepath.Join(r.dir, "raft"), matrixraft.HostOptions{WAL: wal.Options{NoDirectIO: true}})
	require.NoError(t, err)
	logs, err := raftlog.New(raftlog.Options{Host: host, NodeID: r.id, Peers: c.peers(), Transport: c.nws.transport(r.id), Raft: c.raft})
	require.NoError(t, err)
	o := c.lo
	o.Dir = filepath.Join(r.dir, "shard")
	l, err := logs.OpenLog(t.Context(), o)
	require.NoError(t, err)
	r.host, r.logs, r.log = host, logs, l.(*raftlog.Log)
}

func (c *cluster) stop(r *replica) {
	if r.log == nil {
		return
	}
	r.log.Close()
	r.host.Close()
	r.log, r.host = nil, nil
}

// leader waits for a replica that leads and has appended in its term.
func (c *cluster) leader() *replica {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range c.reps {
			if r.log != nil && r.log.Node().Leader() == r.id {
				return r
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.t.Fatal("no leader in 10s")
	return nil
}

// appendBatch appends recs through whichever replica leads, again when
// the leader lost its term before taking them (ErrNotLeader: nothing was
// appended), as a client of a cluster does: on a loaded machine an
// election timeout of 50 ms passes now and then.
func (c *cluster) appendBatch(ctx context.Context, recs ...[]byte) uint64 {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		idx, err := c.leader().log.AppendBatch(ctx, recs)
		if errors.Is(err, storage.ErrNotLeader) && time.Now().Before(deadline) {
			continue
		}
		require.NoError(c.t, err)
		return idx
	}
}

// waitFor waits until r's value log holds index.
func (c *cluster) waitFor(r *replica, index uint64) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for r.log.LastIndex() < index {
		if time.Now().After(deadline) {
			c.t.Fatalf("replica %d holds %d records, want %d", r.id, r.log.LastIndex(), index)
		}
		select {
		case <-r.log.Appended():
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func rec(i int) []byte { return fmt.Appendf(nil, "record-%d", i) }

func TestReplicasHoldTheSameRecords(t *testing.T) {
	c := newCluster(t, 3, fastRaft)
	ctx := t.Context()
	var last uint64
	for i := range 50 {
		idx := c.appendBatch(ctx, rec(i))
		require.Equal(t, uint64(i+1), idx)
		last = idx
	}
	first := c.appendBatch(ctx, rec(50), rec(51))
	require.Equal(t, last+1, first)
	ld := c.leader()
	for _, r := range c.reps {
		c.waitFor(r, first+1)
		for i := range 52 {
			got, err := r.log.Read(uint64(i + 1))
			require.NoError(t, err)
			require.Equal(t, rec(i), got, "replica %d record %d", r.id, i+1)
		}
		if r != ld {
			_, err := r.log.Append(ctx, rec(0))
			require.ErrorIs(t, err, storage.ErrNotLeader)
			require.True(t, r.log.Foreign(1), "a follower's records are all foreign")
		}
	}
	// The leader's own records, handed to its caller, are not foreign.
	require.False(t, ld.log.Foreign(last+1))
}

func TestLeaderKillNewLeaderAppends(t *testing.T) {
	c := newCluster(t, 3, fastRaft)
	ctx := t.Context()
	old := c.leader()
	for i := range 10 {
		_, err := old.log.Append(ctx, rec(i))
		require.NoError(t, err)
	}
	c.stop(old)
	start := time.Now()
	ld := c.leader()
	require.NotEqual(t, old.id, ld.id)
	idx, err := ld.log.Append(ctx, rec(10))
	require.NoError(t, err)
	require.Equal(t, uint64(11), idx, "the new leader appends after every acknowledged record")
	t.Logf("failover to node %d and an append took %v", ld.id, time.Since(start))
	// The old leader comes back as a follower and catches up.
	c.start(old)
	c.waitFor(old, 11)
	got, err := old.log.Read(11)
	require.NoError(t, err)
	require.Equal(t, rec(10), got)
}

func TestRestartSkipsWhatTheValueLogHolds(t *testing.T) {
	raft := fastRaft
	raft.SnapshotEntries, raft.CatchUpEntries = 16, 4
	c := newCluster(t, 3, raft)
	ctx := t.Context()
	for i := range 100 {
		c.appendBatch(ctx, rec(i))
	}
	for _, r := range c.reps {
		c.waitFor(r, 100)
	}
	// Every replica restarts from its snapshot and log: nothing is
	// applied twice, and appends go on where they were.
	for _, r := range c.reps {
		c.stop(r)
	}
	for _, r := range c.reps {
		c.start(r)
	}
	require.Equal(t, uint64(101), c.appendBatch(ctx, rec(100)))
	for _, r := range c.reps {
		c.waitFor(r, 101)
		require.Equal(t, uint64(101), r.log.LastIndex(), "replica %d", r.id)
		got, err := r.log.Read(101)
		require.NoError(t, err)
		require.Equal(t, rec(100), got)
	}
}

func TestTornEntryIsAppliedAgain(t *testing.T) {
	c := newCluster(t, 3, fastRaft)
	ctx := t.Context()
	ld := c.leader()
	_, err := ld.log.Append(ctx, rec(0))
	require.NoError(t, err)
	first, err := ld.log.AppendBatch(ctx, [][]byte{rec(1), rec(2), rec(3)})
	require.NoError(t, err)
	var f *replica
	for _, r := range c.reps {
		if r != ld {
			f = r
		}
	}
	c.waitFor(f, first+2)
	c.stop(f)
	// A crash that kept a prefix of the entry's records.
	vl, err := wal.Open(filepath.Join(f.dir, "shard"), wal.Options{})
	require.NoError(t, err)
	require.NoError(t, vl.TruncateBack(ctx, first))
	require.NoError(t, vl.Close())
	c.start(f)
	c.waitFor(f, first+2)
	for i := range 3 {
		got, err := f.log.Read(first + uint64(i))
		require.NoError(t, err)
		require.Equal(t, rec(i+1), got)
	}
	require.Equal(t, first+2, f.log.LastIndex())
}

// A follower behind the leader's compacted raft log gets the shard's
// image and the value log's records with the snapshot, and holds the
// same records as the leader after it.
func TestFollowerBehindTheSnapshotGetsTheState(t *testing.T) {
	raft := fastRaft
	raft.SnapshotEntries, raft.CatchUpEntries = 16, 4
	c := newCluster(t, 3, raft)
	ctx := t.Context()
	imgs := map[uint64]*storagetest.Images{}
	attach := func(r *replica) {
		imgs[r.id] = &storagetest.Images{Label: fmt.Sprint("image of ", r.id)}
		r.log.Attach(imgs[r.id])
	}
	for _, r := range c.reps {
		attach(r)
	}
	ld := c.leader()
	var f *replica
	for _, r := range c.reps {
		if r != ld {
			f = r
		}
	}
	c.stop(f)
	for i := range 100 {
		_, err := ld.log.Append(ctx, rec(i))
		require.NoError(t, err)
	}
	c.start(f)
	attach(f)
	c.waitFor(f, 100)
	require.Equal(t, []string{fmt.Sprint("image of ", ld.id)}, imgs[f.id].Installs())
	for i := f.log.FirstIndex(); i <= 100; i++ {
		got, err := f.log.Read(i)
		require.NoError(t, err)
		require.Equal(t, rec(int(i-1)), got)
	}
	// It goes on following, and a restart keeps what it installed.
	_, err := ld.log.Append(ctx, rec(100))
	require.NoError(t, err)
	c.waitFor(f, 101)
	c.stop(f)
	c.start(f)
	attach(f)
	_, err = ld.log.Append(ctx, rec(101))
	require.NoError(t, err)
	c.waitFor(f, 102)
	got, err := f.log.Read(102)
	require.NoError(t, err)
	require.Equal(t, rec(101), got)
	require.Empty(t, imgs[f.id].Installs(), "nothing installed again after the restart")
}

// Without a shard attached there is no state to send: the follower
// waits rather than install a snapshot it cannot complete.
func TestNoStateSentWithoutAShard(t *testing.T) {
	raft := fastRaft
	raft.SnapshotEntries, raft.CatchUpEntries = 16, 4
	c := newCluster(t, 3, raft)
	ctx := t.Context()
	ld := c.leader()
	var f *replica
	for _, r := range c.reps {
		if r != ld {
			f = r
		}
	}
	c.stop(f)
	for i := range 100 {
		_, err := ld.log.Append(ctx, rec(i))
		require.NoError(t, err)
	}
	c.start(f)
	time.Sleep(300 * time.Millisecond)
	require.Less(t, f.log.LastIndex(), uint64(100))
	select {
	case <-f.log.Node().Done():
		t.Fatalf("the follower stopped: %v", f.log.Node().Err())
	default:
	}
}
