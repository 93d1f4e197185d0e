package raftbench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

// kvState is the state machine of ours: a map of the last value per key.
// A command is a 1-byte key length, the key, then the value.
type kvState struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *kvState) Apply(batch []matrixraft.Command) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range batch {
		if len(c.Data) == 0 || int(c.Data[0]) > len(c.Data)-1 {
			continue
		}
		k := c.Data[1 : 1+int(c.Data[0])]
		s.m[string(k)] = append([]byte(nil), c.Data[1+len(k):]...)
	}
	return make([][]byte, len(batch))
}

func (s *kvState) Snapshot(w io.Writer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	size := 0
	for k, v := range s.m {
		size += 2*binary.MaxVarintLen64 + len(k) + len(v)
	}
	b := make([]byte, 0, size)
	for k, v := range s.m {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	_, err := w.Write(b)
	return err
}

func (s *kvState) Restore(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m := map[string][]byte{}
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return errors.New("kvState: bad snapshot")
		}
		key := string(b[k : k+int(n)])
		b = b[k+int(n):]
		n, k = binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return errors.New("kvState: bad snapshot")
		}
		m[key] = append([]byte(nil), b[k:k+int(n)]...)
		b = b[k+int(n):]
	}
	s.mu.Lock()
	s.m = m
	s.mu.Unlock()
	return nil
}

// oursCluster is three matrixraft nodes in this process.
type oursCluster struct {
	nodes []*matrixraft.Node
	tr    transportSet
	bufs  sync.Pool
}

func startOurs(ctx context.Context, dir, transport string, async bool) (*oursCluster, error) {
	tr, err := transports[transport](3)
	if err != nil {
		return nil, err
	}
	c := &oursCluster{tr: tr}
	c.bufs.New = func() any { b := make([]byte, 0, 512); return &b }
	var peers []matrixraft.Peer
	for id := uint64(1); id <= 3; id++ {
		peers = append(peers, matrixraft.Peer{ID: id, Addr: tr.Addr(id)})
	}
	for _, p := range peers {
		n, err := matrixraft.StartNode(matrixraft.Options{
			ID: p.ID, Dir: filepath.Join(dir, fmt.Sprint(p.ID)), Peers: peers,
			StateMachine: &kvState{m: map[string][]byte{}}, Transport: tr.Transport(p.ID),
			AsyncStorageWrites: async,
		})
		if err != nil {
			c.Close()
			return nil, err
		}
		c.nodes = append(c.nodes, n)
	}
	// Elect node 1 now rather than after an election timeout.
	if err := c.nodes[0].Campaign(ctx); err != nil {
		c.Close()
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for c.leader() == nil {
		if time.Now().After(deadline) {
			c.Close()
			return nil, errors.New("no leader elected within 30s")
		}
		time.Sleep(time.Millisecond)
	}
	return c, nil
}

func (c *oursCluster) leader() *matrixraft.Node {
	for _, n := range c.nodes {
		if n.Leader() == n.ID() {
			return n
		}
	}
	return nil
}

func (c *oursCluster) Put(ctx context.Context, _ int, key, value []byte) error {
	bp := c.bufs.Get().(*[]byte)
	cmd := append(append(append((*bp)[:0], byte(len(key))), key...), value...)
	defer func() { *bp = cmd; c.bufs.Put(bp) }()
	for {
		lead := c.leader()
		if lead == nil {
			if err := ctx.Err(); err != nil {
				return err
			}
			time.Sleep(time.Millisecond)
			continue
		}
		_, err := lead.Propose(ctx, cmd)
		if errors.Is(err, matrixraft.ErrNotLeader) || errors.Is(err, matrixraft.ErrProposalDropped) {
			continue
		}
		return err
	}
}

func (c *oursCluster) Fsyncs() (uint64, error) {
	var n uint64
	for _, node := range c.nodes {
		n += node.Status().WAL.Fsyncs
	}
	return n, nil
}

// Explain returns the leader's internal latencies (ms) and batching, so a
// run's figures can be explained: fsync, persisting a Ready, handling a
// Ready end to end, taking a snapshot, and entries per Ready.
func (c *oursCluster) Explain() map[string]float64 {
	lead := c.leader()
	if lead == nil {
		return nil
	}
	st := lead.Status()
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	out := map[string]float64{
		"fsync_p50_ms":         ms(st.WAL.FsyncLatency.Quantile(0.5)),
		"fsync_p99_ms":         ms(st.WAL.FsyncLatency.Quantile(0.99)),
		"save_p50_ms":          ms(st.SaveLatency.Quantile(0.5)),
		"save_p99_ms":          ms(st.SaveLatency.Quantile(0.99)),
		"ready_p50_ms":         ms(st.ReadyLatency.Quantile(0.5)),
		"ready_p99_ms":         ms(st.ReadyLatency.Quantile(0.99)),
		"snapshots":            float64(st.SnapshotsCreated),
		"snapshot_save_max_ms": ms(st.SnapshotSaveLatency.Quantile(1)),
	}
	if st.Readies > 0 {
		out["entries_per_ready"] = float64(st.ReadyEntries) / float64(st.Readies)
	}
	return out
}

func (c *oursCluster) Close() error {
	for _, n := range c.nodes {
		n.Stop()
	}
	c.tr.Close()
	return nil
}
