package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixraft"
	"github.com/temporalstore/temporalstore-go/matrixraft/tcptransport"
	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/httpapi"
	"github.com/temporalstore/temporalstore-go/temporalstore/resp"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/raftlog"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/sharedlog"
)

// Errors of this package, matched with errors.Is.
var (
	// ErrInvalidOptions is returned by Start for unusable Options.
	ErrInvalidOptions = errors.New("cluster: invalid options")
	// ErrNotAttached is returned by a node asked about its engine before
	// Attach.
	ErrNotAttached = errors.New("cluster: no engine attached")
)

// Peer is one member of the cluster.
type Peer struct {
	// ID is the member's raft ID, the same in every shard's group.
	ID uint64
	// RaftAddr is where its raft transport listens; RESPAddr where its
	// Redis-protocol clients connect (what MOVED and CLUSTER SLOTS give);
	// HTTPAddr, when known, where its HTTP surface listens (requests are
	// forwarded there).
	RaftAddr, RESPAddr, HTTPAddr string
	// Zone is the member's failure domain: a shard's voters are spread
	// over zones first. Empty: a zone of its own.
	Zone string
}

// ParsePeers reads peers written id@raft-addr@resp-addr[@http-addr[@zone]],
// comma-separated, as the server's --cluster-peers flag takes them.
func ParsePeers(s string) ([]Peer, error) {
	var out []Peer
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		parts := strings.Split(p, "@")
		if len(parts) < 3 || len(parts) > 5 || slices.Contains(parts[1:], "") {
			return nil, fmt.Errorf("%w: peer %q is not id@raft-addr@resp-addr[@http-addr[@zone]]", ErrInvalidOptions, p)
		}
		id, err := strconv.ParseUint(parts[0], 10, 64)
		if err != nil || id == 0 {
			return nil, fmt.Errorf("%w: peer %q: the id is a number above 0", ErrInvalidOptions, p)
		}
		if slices.ContainsFunc(out, func(q Peer) bool { return q.ID == id }) {
			return nil, fmt.Errorf("%w: peer id %d twice", ErrInvalidOptions, id)
		}
		peer := Peer{ID: id, RaftAddr: parts[1], RESPAddr: parts[2]}
		if len(parts) >= 4 {
			peer.HTTPAddr = parts[3]
		}
		if len(parts) == 5 {
			peer.Zone = parts[4]
		}
		out = append(out, peer)
	}
	return out, nil
}

// Defaults of Options.
const (
	// DefaultTickInterval is the raft tick: heartbeats every tick, an
	// election after DefaultElectionTicks to twice that without one.
	DefaultTickInterval  = 50 * time.Millisecond
	DefaultElectionTicks = 10
)

// Options configures a cluster node.
type Options struct {
	// Dir holds the node's raft state (the shared raft log and each
	// group's snapshots). Required.
	Dir string
	// ID is this node's raft ID; it must be one of Peers. Required.
	ID uint64
	// Peers are the cluster's first members, this node among them: every
	// shard's group starts with them as voters. Required.
	Peers []Peer
	// AdminTokens, when set, are the bearer tokens AdminHandler takes;
	// the first is sent with the requests this member makes of others'.
	// Default: none, no token asked.
	AdminTokens []string
	// Join starts this member's groups empty, waiting to be added by the
	// cluster (AddMember on a member); Peers then only tell where the
	// others are. Default: false (the groups start with Peers as voters;
	// a member restarting on its data ignores both).
	Join bool
	// ListenAddr is where the raft transport listens. Default: this
	// node's Peers entry's RaftAddr.
	ListenAddr string
	// Namespace and Table name the table whose slots Redis Cluster
	// clients are routed by; Shards is its shard count, the same on
	// every node. Default: the engine's default table; Shards required.
	Namespace, Table string
	Shards           int
	// TickInterval and ElectionTicks time raft: see the defaults.
	TickInterval  time.Duration
	ElectionTicks int
	// Replicas is how many members vote in each shard's group, chosen on
	// matrixcache's topology ring across zones (Peer.Zone); the other
	// members hold the shard as learners. A shard's leader moves its
	// voters there, a step at a time. Default: DefaultReplicas (3).
	Replicas int
	// BalanceInterval is how often the member hands the shards it leads
	// and should not (shard i is led by the i-th member in ID order,
	// round robin) to the member that should, when that one is up to
	// date; negative turns balancing off. Default: DefaultBalanceInterval.
	BalanceInterval time.Duration
	// WatchInterval is how often the member asks every other member's
	// HTTP surface for its view of who is down (liveness): the answers
	// feed a φ-accrual detector, and the members' views a jury, whose
	// convictions CLUSTER NODES and SHARDS show as failed. Negative turns
	// it off; members without an HTTP address are not watched. Default:
	// DefaultWatchInterval.
	WatchInterval time.Duration
	// LeaseReads serves a leader's reads on its lease (no round to a
	// quorum; correct while clocks drift less than the election timeout)
	// instead of a ReadIndex round. Default: false.
	LeaseReads bool
	// Shared, when set, keeps every shard's log on this shared store
	// (package sharedlog) instead of in raft groups: one member writes
	// each shard, fenced by the store, the others tail it and take over
	// when it goes silent. Peers' raft addresses, membership changes,
	// placement, balancing and the liveness watcher do not apply.
	// Default: nil, raft.
	Shared sharedlog.Store
	// SharedLease is how long a shard's shared log may be silent before
	// another member takes it over (Shared only). Default:
	// sharedlog.DefaultLeaseTimeout.
	SharedLease time.Duration
	// Logger receives membership and leadership events. Default: discards.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Namespace == "" {
		o.Namespace = temporalstore.DefaultNamespace
	}
	if o.Table == "" {
		o.Table = temporalstore.DefaultTable
	}
	if o.TickInterval == 0 {
		o.TickInterval = DefaultTickInterval
	}
	if o.ElectionTicks == 0 {
		o.ElectionTicks = DefaultElectionTicks
	}
	if o.Replicas == 0 {
		o.Replicas = DefaultReplicas
	}
	if o.WatchInterval == 0 {
		o.WatchInterval = DefaultWatchInterval
	}
	if o.BalanceInterval == 0 {
		o.BalanceInterval = DefaultBalanceInterval
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Dir == "":
		return fmt.Errorf("%w: Dir is required", ErrInvalidOptions)
	case o.Shards < 1 || o.Shards > temporalstore.HashSlots:
		return fmt.Errorf("%w: Shards %d", ErrInvalidOptions, o.Shards)
	case !slices.ContainsFunc(o.Peers, func(p Peer) bool { return p.ID == o.ID }):
		return fmt.Errorf("%w: this node's id %d is not among the peers", ErrInvalidOptions, o.ID)
	}
	return nil
}

// Node is one member of a cluster: every shard of the routed table is a
// raft group with a replica here (a raftlog), over one transport and one
// raft log. It serves a RESP server's Redis Cluster routing (it is a
// resp.Cluster) once the engine over its logs is attached.
type Node struct {
	opts Options
	host *matrixraft.Host
	tr   *tcptransport.Transport
	logs *raftlog.Logs
	// shared holds the shards' logs in shared-storage mode (logs, host
	// and tr are then nil).
	shared *sharedlog.Logs
	book   addressBook
	// slots[i] is shard i's slot range, gids[i] its raft group: both
	// fixed, and looked up on every routed command.
	slots [][2]int
	gids  []uint64

	mu     sync.Mutex
	engine *temporalstore.Engine

	// client runs membership changes on other members' admin handlers.
	client *http.Client

	transfers   atomic.Uint64
	placeMoves  atomic.Uint64
	placeLeft   atomic.Int64
	placeMu     sync.Mutex
	placeStart  time.Time
	placeFrom   uint64
	stopBalance context.CancelFunc
	balanceDone chan struct{}
	watch       *watcher
	watchDone   chan struct{}
}

var _ resp.Cluster = (*Node)(nil)

// Start opens the node's raft state and transport. The engine opened
// with OpenLog then has each shard's log replicated; Attach it.
func Start(opts Options) (*Node, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	n := &Node{opts: opts, book: addressBook{peers: map[uint64]Peer{}}, client: &http.Client{Timeout: shardOpTimeout + catchUpTimeout}}
	if opts.Shared != nil {
		return n.startShared()
	}
	var raftPeers []matrixraft.Peer
	for _, p := range opts.Peers {
		n.book.learn(p)
		raftPeers = append(raftPeers, matrixraft.Peer{ID: p.ID, Addr: joinAddr(p)})
	}
	if opts.Join {
		raftPeers = nil // the groups wait to be added (AddMember)
	}
	listen := opts.ListenAddr
	if listen == "" {
		listen = n.book.get(opts.ID).RaftAddr
	}
	// The raft log is written on every write's path: S2 rather than
	// zstd, whose cost per batch the write waits for.
	host, err := matrixraft.OpenHost(filepath.Join(opts.Dir, "raft"), matrixraft.HostOptions{WAL: wal.Options{Compression: wal.CompressionFast}, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	tr, err := tcptransport.New(tcptransport.Options{ID: opts.ID, ListenAddr: listen, Logger: opts.Logger})
	if err != nil {
		host.Close()
		return nil, err
	}
	n.host, n.tr = host, tr
	n.logs, err = raftlog.New(raftlog.Options{
		Host: host, NodeID: opts.ID, Peers: raftPeers, Logger: opts.Logger,
		Transport: func(group uint64) (matrixraft.Transport, error) {
			g := peerTransport{tr.Group(group), &n.book}
			for _, p := range opts.Peers {
				if p.ID != opts.ID {
					g.AddPeer(p.ID, joinAddr(p))
				}
			}
			return g, nil
		},
		Raft: matrixraft.Options{TickInterval: opts.TickInterval, ElectionTick: opts.ElectionTicks, HeartbeatTick: 1, LeaseReads: opts.LeaseReads, Logger: opts.Logger},
	})
	if err != nil {
		tr.Close()
		host.Close()
		return nil, err
	}
	n.slots = slotRanges(opts.Shards)
	for sh := range opts.Shards {
		n.gids = append(n.gids, raftlog.GroupOf(storage.LogOptions{Namespace: opts.Namespace, Table: opts.Table, Shard: sh}))
	}
	n.startLoops()
	return n, nil
}

// startLoops starts leader balancing and the liveness watcher, when on.
func (n *Node) startLoops() {
	opts := n.opts
	ctx, cancel := context.WithCancel(context.Background())
	n.stopBalance, n.balanceDone = cancel, make(chan struct{})
	if opts.BalanceInterval > 0 {
		go n.balanceLoop(ctx, opts.BalanceInterval)
	} else {
		close(n.balanceDone)
	}
	n.watch, n.watchDone = newWatcher(), make(chan struct{})
	if opts.WatchInterval > 0 {
		go n.watchLoop(ctx, opts.WatchInterval)
	} else {
		close(n.watchDone)
	}
}

// slotRanges splits the hash slots as temporalstore.SlotShard does.
func slotRanges(shards int) [][2]int {
	out := make([][2]int, shards)
	for i := range out {
		out[i] = [2]int{-1, -1}
	}
	for slot := range temporalstore.HashSlots {
		sh := temporalstore.SlotShard(slot, shards)
		if out[sh][0] < 0 {
			out[sh][0] = slot
		}
		out[sh][1] = slot
	}
	return out
}

// OpenLog is the engine's storage.OpenLogFunc: a shard's log replicated
// by its group.
func (n *Node) OpenLog(ctx context.Context, o storage.LogOptions) (storage.Log, error) {
	if n.shared != nil {
		return n.shared.OpenLog(ctx, o)
	}
	return n.logs.OpenLog(ctx, o)
}

// Attach gives the node the engine opened over its logs.
func (n *Node) Attach(e *temporalstore.Engine) {
	n.mu.Lock()
	n.engine = e
	n.mu.Unlock()
}

// Close stops the transport and the raft host; close the engine first.
func (n *Node) Close() error {
	n.stopBalance()
	<-n.balanceDone
	<-n.watchDone
	if n.shared != nil {
		return nil
	}
	return errors.Join(n.tr.Close(), n.host.Close())
}

// NodeID is the 40-hexadecimal-character ID a Redis Cluster client sees
// for raft ID id.
func NodeID(id uint64) string { return fmt.Sprintf("%040x", id) }

// Self implements resp.Cluster.
func (n *Node) Self() string { return NodeID(n.opts.ID) }

// group returns the raft node of shard sh here, or nil before it opened.
func (n *Node) group(sh int) *matrixraft.Node {
	if n.logs == nil {
		return nil
	}
	return n.logs.Node(n.gids[sh])
}

// Route implements resp.Cluster.
func (n *Node) Route(slot int, write, readonly bool) (bool, string) {
	leader, open := n.leader(temporalstore.SlotShard(slot, n.opts.Shards))
	if !open {
		return false, ""
	}
	if leader == n.opts.ID || readonly && !write {
		return true, ""
	}
	return false, n.book.get(leader).RESPAddr // "" for none, or an unknown one
}

// ReadBarrier implements resp.Cluster: a ReadIndex round (or the lease),
// then the wait for the shard to apply what its log held at that point.
func (n *Node) ReadBarrier(ctx context.Context, slot int) error {
	return n.readBarrier(ctx, temporalstore.SlotShard(slot, n.opts.Shards), false)
}

// readBarrier is shard sh's read barrier, on the leader's lease if asked.
func (n *Node) readBarrier(ctx context.Context, sh int, lease bool) error {
	if n.shared != nil {
		return n.sharedReadBarrier(ctx, sh, lease)
	}
	g := n.group(sh)
	if g == nil {
		return temporalstore.ErrNotLeader
	}
	mode := matrixraft.ReadLinearizable
	if lease {
		mode = matrixraft.ReadLease
	}
	if err := g.Read(ctx, mode); err != nil {
		if errors.Is(err, matrixraft.ErrNotLeader) {
			return fmt.Errorf("%w: %w", temporalstore.ErrNotLeader, err)
		}
		return err
	}
	return n.caughtUp(ctx, sh)
}

// caughtUp waits until the engine's shard sh has applied every record its
// log holds now.
func (n *Node) caughtUp(ctx context.Context, sh int) error {
	n.mu.Lock()
	e := n.engine
	n.mu.Unlock()
	if e == nil {
		return ErrNotAttached
	}
	_, want, err := e.ShardProgress(n.opts.Namespace, n.opts.Table, sh)
	if err != nil {
		return err
	}
	for wait := time.Microsecond; ; wait = min(2*wait, time.Millisecond) {
		applied, _, err := e.ShardProgress(n.opts.Namespace, n.opts.Table, sh)
		if err != nil || applied >= want {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// Shards implements resp.Cluster.
func (n *Node) Shards() []resp.ClusterShard {
	if n.shared != nil {
		return n.sharedShards()
	}
	out := make([]resp.ClusterShard, n.opts.Shards)
	for sh := range out {
		out[sh].Slots = [][2]int{n.slots[sh]}
		g := n.group(sh)
		if g == nil {
			continue
		}
		st := g.Status()
		ids := holders(st)
		if i := slices.Index(ids, st.Leader); i > 0 {
			ids[0], ids[i] = ids[i], ids[0]
		}
		for _, id := range ids {
			cn := resp.ClusterNode{ID: NodeID(id), Addr: n.book.get(id).RESPAddr, Leader: id == st.Leader && st.HasLeader, Online: true}
			if id == n.opts.ID {
				cn.Offset = st.Applied
			} else if ps, ok := st.Peers[id]; ok {
				cn.Offset = ps.Match
				cn.Online = ps.State == "StateReplicate"
			}
			if n.Convicted(id) {
				cn.Online = false
			}
			out[sh].Nodes = append(out[sh].Nodes, cn)
		}
	}
	return out
}

// ShardStatus is one shard's replica here.
type ShardStatus struct {
	Shard                  int
	Group                  uint64
	Leader                 uint64
	IsLeader               bool
	Term, Commit, Applied  uint64
	LeaderChanges, Fsyncs  uint64
	SnapshotIndex, Readies uint64
}

// Status returns every shard's replica state here, for /ready and metrics.
func (n *Node) Status() []ShardStatus {
	out := make([]ShardStatus, 0, n.opts.Shards)
	for sh := range n.opts.Shards {
		g := n.group(sh)
		if g == nil {
			continue
		}
		st := g.Status()
		out = append(out, ShardStatus{
			Shard: sh, Group: n.gids[sh],
			Leader: st.Leader, IsLeader: st.IsLeader, Term: st.Term, Commit: st.Commit, Applied: st.Applied,
			LeaderChanges: st.LeaderChanges, Fsyncs: st.Fsyncs, SnapshotIndex: st.SnapshotIndex, Readies: st.Readies,
		})
	}
	return out
}

// Ready reports whether this node serves its part: every shard has a
// leader, and this replica has applied what its group committed. The
// reason says what is missing.
func (n *Node) Ready() (bool, string) {
	if n.shared != nil {
		return n.sharedReady()
	}
	sts := n.Status()
	if len(sts) < n.opts.Shards {
		return false, fmt.Sprintf("%d of %d shards open", len(sts), n.opts.Shards)
	}
	for _, st := range sts {
		switch {
		case st.Leader == 0:
			return false, fmt.Sprintf("shard %d has no leader", st.Shard)
		case st.Applied < st.Commit:
			return false, fmt.Sprintf("shard %d is catching up: applied %d of %d", st.Shard, st.Applied, st.Commit)
		}
	}
	return true, ""
}

// ErrNotReady is Check's error: the member does not serve its part yet.
var ErrNotReady = errors.New("cluster: not ready")

// Check is Ready as an error, for an HTTP /ready (httpapi.Options.Ready).
func (n *Node) Check(context.Context) error {
	if ok, why := n.Ready(); !ok {
		return fmt.Errorf("%w: %s", ErrNotReady, why)
	}
	return nil
}

// routed reports whether table namespace/name is the one the member
// routes ("" naming the engine's defaults), and key's shard in it.
func (n *Node) routed(namespace, name string, key []byte) (int, bool) {
	if namespace == "" {
		namespace = temporalstore.DefaultNamespace
	}
	if name == "" {
		name = temporalstore.DefaultTable
	}
	if namespace != n.opts.Namespace || name != n.opts.Table {
		return 0, false
	}
	return temporalstore.SlotShard(temporalstore.KeySlot(key), n.opts.Shards), true
}

// HTTP is the member as the HTTP surface's cluster
// (httpapi.Options.Cluster): requests go to the member leading their
// keys' shard, and reads run here pass their shard's read barrier.
func (n *Node) HTTP() httpapi.Cluster { return httpRoutes{n} }

type httpRoutes struct{ n *Node }

func (h httpRoutes) Leader(namespace, name string, key []byte) (string, error) {
	return h.n.leaderURL(namespace, name, key)
}

func (h httpRoutes) ReadBarrier(ctx context.Context, namespace, name string, key []byte, lease bool) error {
	return h.n.readBarrierKey(ctx, namespace, name, key, lease)
}

// leaderURL is the HTTP URL of the member leading key's shard, "" when it
// is this one or the table is not replicated.
func (n *Node) leaderURL(namespace, name string, key []byte) (string, error) {
	sh, ok := n.routed(namespace, name, key)
	if !ok {
		return "", nil
	}
	leader, open := n.leader(sh)
	return n.leaderHTTP(leader, open, fmt.Sprintf("shard %d", sh))
}

// leaderHTTP is the HTTP base URL of member leader, "" for this one, or
// why a request cannot be forwarded to what leads shard (named so).
func (n *Node) leaderHTTP(leader uint64, open bool, shard string) (string, error) {
	switch {
	case !open:
		return "", fmt.Errorf("%w: %s is not open here", temporalstore.ErrNotLeader, shard)
	case leader == n.opts.ID:
		return "", nil
	case leader == 0:
		return "", fmt.Errorf("%w: %s has no leader now", temporalstore.ErrNotLeader, shard)
	case n.book.get(leader).HTTPAddr == "":
		return "", fmt.Errorf("%w: %s is led by member %d, whose HTTP address is not known (--cluster-peers id@raft@resp@http)", temporalstore.ErrNotLeader, shard, leader)
	default:
		return "http://" + n.book.get(leader).HTTPAddr, nil
	}
}

// readBarrierKey is the read barrier of key's shard, none for a table
// that is not replicated.
func (n *Node) readBarrierKey(ctx context.Context, namespace, name string, key []byte, lease bool) error {
	sh, ok := n.routed(namespace, name, key)
	if !ok {
		return nil
	}
	return n.readBarrier(ctx, sh, lease)
}
