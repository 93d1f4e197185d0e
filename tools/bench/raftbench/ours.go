package raftbench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

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
			StateMachine: newKVState(), Transport: tr.Transport(p.ID),
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
// run's figures can be explained: fsync, persisting a Ready (and its
// longest), handling a Ready end to end (p50, p99 and the longest, a stall
// of the loop), taking a snapshot and the loop's share of it, and entries
// per Ready.
func (c *oursCluster) Explain() map[string]float64 {
	lead := c.leader()
	if lead == nil {
		return nil
	}
	st := lead.Status()
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	out := map[string]float64{
		"fsync_p50_ms":            ms(st.WAL.FsyncLatency.Quantile(0.5)),
		"fsync_p99_ms":            ms(st.WAL.FsyncLatency.Quantile(0.99)),
		"save_p50_ms":             ms(st.SaveLatency.Quantile(0.5)),
		"save_p99_ms":             ms(st.SaveLatency.Quantile(0.99)),
		"save_max_ms":             ms(st.SaveLatency.Quantile(1)),
		"ready_p50_ms":            ms(st.ReadyLatency.Quantile(0.5)),
		"ready_p99_ms":            ms(st.ReadyLatency.Quantile(0.99)),
		"ready_max_ms":            ms(st.ReadyLatency.Quantile(1)),
		"snapshots":               float64(st.SnapshotsCreated),
		"snapshot_save_max_ms":    ms(st.SnapshotSaveLatency.Quantile(1)),
		"snapshot_capture_max_ms": ms(st.SnapshotCaptureLatency.Quantile(1)),
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
