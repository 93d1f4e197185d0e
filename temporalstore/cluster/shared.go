package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/resp"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/raftlog"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/sharedlog"
)

// ErrSharedMode is returned for what only a raft cluster does (membership
// changes) asked of a member in shared-storage mode.
var ErrSharedMode = errors.New("cluster: not in shared-storage mode: a member joins by starting on the shared store with the peers list, and leaves by stopping")

// startShared opens the shards' logs on the shared store: the member's
// name in the logs' fences is its ID, which the peers list maps to its
// addresses.
func (n *Node) startShared() (*Node, error) {
	for _, p := range n.opts.Peers {
		n.book.learn(p)
	}
	ids := make([]uint64, 0, len(n.opts.Peers))
	for _, p := range n.opts.Peers {
		ids = append(ids, p.ID)
	}
	slices.Sort(ids)
	logs, err := sharedlog.New(sharedlog.Options{
		Store: n.opts.Shared, Member: strconv.FormatUint(n.opts.ID, 10), LeaseTimeout: n.opts.SharedLease, Logger: n.opts.Logger,
		// Shard i is first taken by the i-th member in ID order, round
		// robin, when it is up: the writers spread over the members.
		Prefer: func(o storage.LogOptions) bool { return ids[o.Shard%len(ids)] == n.opts.ID },
	})
	if err != nil {
		return nil, err
	}
	n.shared = logs
	n.slots = slotRanges(n.opts.Shards)
	n.opts.BalanceInterval, n.opts.WatchInterval = -1, -1
	n.startLoops()
	return n, nil
}

// sharedLog is shard sh's shared log here, nil before it opened.
func (n *Node) sharedLog(sh int) *sharedlog.Log {
	return n.shared.Log(sharedlog.DefaultPrefix(storage.LogOptions{Namespace: n.opts.Namespace, Table: n.opts.Table, Shard: sh}))
}

// leader is the member leading shard sh of the routed table (0 for none
// now) and whether the shard is open here.
func (n *Node) leader(sh int) (uint64, bool) {
	return n.leaderOf(storage.LogOptions{Namespace: n.opts.Namespace, Table: n.opts.Table, Shard: sh})
}

// leaderOf is leader for any table's shard.
func (n *Node) leaderOf(o storage.LogOptions) (uint64, bool) {
	if n.shared == nil {
		if n.logs == nil {
			return 0, false
		}
		g := n.logs.Node(raftlog.GroupOf(o))
		if g == nil {
			return 0, false
		}
		return g.Leader(), true
	}
	l := n.shared.Log(sharedlog.DefaultPrefix(o))
	if l == nil {
		return 0, false
	}
	id, _ := strconv.ParseUint(l.Writer(), 10, 64)
	return id, true
}

// TableLeader is the HTTP base URL of the member leading shard sh of table
// namespace/name, "" when it is this one: for a surface other than the
// engine's own (matrixark's context routes) to forward to it. It fails
// when the shard is not open here, has no leader now, or its leader's
// HTTP address is not known.
func (n *Node) TableLeader(namespace, name string, sh int) (string, error) {
	leader, open := n.leaderOf(storage.LogOptions{Namespace: namespace, Table: name, Shard: sh})
	return n.leaderHTTP(leader, open, fmt.Sprintf("%s/%s shard %d", namespace, name, sh))
}

// sharedReadBarrier confirms this member still writes shard sh's log (or,
// with lease, that it appended lately enough) and waits for the shard to
// apply what it holds.
func (n *Node) sharedReadBarrier(ctx context.Context, sh int, lease bool) error {
	l := n.sharedLog(sh)
	if l == nil {
		return temporalstore.ErrNotLeader
	}
	barrier := l.ReadBarrier
	if lease {
		barrier = l.LeaseBarrier
	}
	if err := barrier(ctx); err != nil {
		return err
	}
	return n.caughtUp(ctx, sh)
}

// sharedShards describes the shards: every member holds every shard, its
// writer first.
func (n *Node) sharedShards() []resp.ClusterShard {
	out := make([]resp.ClusterShard, n.opts.Shards)
	for sh := range out {
		out[sh].Slots = [][2]int{n.slots[sh]}
		leader, open := n.leader(sh)
		if !open {
			continue
		}
		ids := make([]uint64, 0, len(n.opts.Peers))
		for _, p := range n.opts.Peers {
			if p.ID == leader {
				ids = append([]uint64{p.ID}, ids...)
			} else {
				ids = append(ids, p.ID)
			}
		}
		var applied uint64
		if e := n.attached(); e != nil {
			applied, _, _ = e.ShardProgress(n.opts.Namespace, n.opts.Table, sh)
		}
		for _, id := range ids {
			cn := resp.ClusterNode{ID: NodeID(id), Addr: n.book.get(id).RESPAddr, Leader: id == leader, Online: true}
			if id == n.opts.ID {
				cn.Offset = applied
			}
			out[sh].Nodes = append(out[sh].Nodes, cn)
		}
	}
	return out
}

// sharedReady: every shard open with a writer, and this member's replica
// applied what its log holds.
func (n *Node) sharedReady() (bool, string) {
	e := n.attached()
	for sh := range n.opts.Shards {
		l := n.sharedLog(sh)
		switch {
		case l == nil:
			return false, fmt.Sprintf("shard %d is not open", sh)
		case l.Writer() == "":
			return false, fmt.Sprintf("shard %d has no writer", sh)
		case l.SharedStats().Behind > 0:
			return false, fmt.Sprintf("shard %d is catching up: %d bytes of the shared log to apply", sh, l.SharedStats().Behind)
		}
		if e != nil {
			if applied, last, err := e.ShardProgress(n.opts.Namespace, n.opts.Table, sh); err == nil && applied < last {
				return false, fmt.Sprintf("shard %d is catching up: applied %d of %d", sh, applied, last)
			}
		}
	}
	return true, ""
}

func (n *Node) attached() *temporalstore.Engine {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.engine
}
