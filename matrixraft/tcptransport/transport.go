package tcptransport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

// Transport is a matrixraft.Transport over TCP (optionally TLS). Create it
// with New; the node starts it and closes it. Several raft groups can share
// it through Group.
type Transport struct {
	opts Options
	log  *slog.Logger
	ln   net.Listener

	// ctx is the transport's lifetime: Close cancels it, which aborts
	// dials, waits and handler calls in flight.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// base is the Transport's own group (0), used by Start, Send, AddPeer
	// and RemovePeer.
	base *group

	// mu guards the fields below and every peer's members. Send holds it
	// for reading, so Close (which takes it for writing) happens wholly
	// before or after a Send.
	mu      sync.RWMutex
	serving bool
	closed  bool
	groups  map[uint64]*group // started and not closed, by group ID
	peers   map[uint64]*peer
	inbound map[net.Conn]struct{}

	// Reports owed to handlers by Send, delivered by one goroutine so Send
	// never calls back into a node. Unreachable reports coalesce per group
	// and peer.
	repMu      sync.Mutex
	repUnreach map[unreachable]struct{}
	repSnaps   []*outSnap
	repWake    chan struct{}

	stats counters
}

// unreachable is an owed ReportUnreachable: to group g, about peer.
type unreachable struct {
	g    *group
	peer uint64
}

var _ matrixraft.Transport = (*Transport)(nil)

// New validates opts and binds the listener, so the address is known (see
// Addr) before Start; connections are accepted from Start on.
func New(opts Options) (*Transport, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	ln, err := net.Listen("tcp", opts.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("tcptransport: listen %s: %w", opts.ListenAddr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Transport{
		opts:       opts,
		log:        opts.Logger.With("raft_id", opts.ID),
		ln:         ln,
		ctx:        ctx,
		cancel:     cancel,
		groups:     map[uint64]*group{},
		peers:      map[uint64]*peer{},
		inbound:    map[net.Conn]struct{}{},
		repUnreach: map[unreachable]struct{}{},
		repWake:    make(chan struct{}, 1),
	}
	t.base = newGroup(t, 0)
	return t, nil
}

// Addr returns the address the transport listens on.
func (t *Transport) Addr() net.Addr { return t.ln.Addr() }

// Start implements matrixraft.Transport: it accepts connections and
// delivers their un-grouped messages to h.
func (t *Transport) Start(h matrixraft.Handler) error { return t.base.Start(h) }

// serveLocked starts accepting connections and delivering reports, once:
// at the first Start, of the Transport or of any group. t.mu is held.
func (t *Transport) serveLocked() {
	if t.serving {
		return
	}
	t.serving = true
	t.wg.Add(2)
	go t.acceptLoop()
	go t.reportLoop()
	t.log.Info("raft transport listening", "addr", t.ln.Addr().String(), "tls", t.opts.ServerTLS != nil)
}

// startedGroup returns group id if it is started here, or nil.
func (t *Transport) startedGroup(id uint64) *group {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.groups[id]
}

// Send implements matrixraft.Transport. It never blocks on the network: a
// message goes to its peer's queue, or is dropped when the queue is full or
// the peer unknown, and the peer is reported unreachable. Every MsgSnap is
// reported back through Handler.ReportSnapshot, failures included. After
// Close, Send drops everything and reports nothing.
func (t *Transport) Send(msgs []*pb.Message) { t.send(t.base, msgs) }

// send is Send for group g.
func (t *Transport) send(g *group, msgs []*pb.Message) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed || g.isClosing() {
		return
	}
	for _, m := range msgs {
		p := t.peers[m.GetTo()]
		if m.GetType() == pb.MsgSnap {
			t.sendSnapshotLocked(g, p, m)
			continue
		}
		if p == nil {
			t.stats.dropped.Add(1)
			t.oweUnreachable(g, m.GetTo())
			continue
		}
		select {
		case p.queue <- outMsg{group: g.id, m: m}:
		default:
			p.dropped.Add(1)
			t.stats.dropped.Add(1)
			t.oweUnreachable(g, m.GetTo())
		}
	}
}

// sendSnapshotLocked queues a MsgSnap of g for peer p's snapshot stream,
// or owes g its failure. t.mu is held for reading.
func (t *Transport) sendSnapshotLocked(g *group, p *peer, m *pb.Message) {
	s := &outSnap{g: g, m: m}
	if !g.track(s) {
		return
	}
	if p == nil || !p.enqueueSnapshot(s) {
		t.oweSnap(s)
	}
}

// oweUnreachable records an unreachable report for the report goroutine.
func (t *Transport) oweUnreachable(g *group, id uint64) {
	t.repMu.Lock()
	t.repUnreach[unreachable{g: g, peer: id}] = struct{}{}
	t.repMu.Unlock()
	t.wakeReports()
}

// oweSnap records a snapshot failure for the report goroutine.
func (t *Transport) oweSnap(s *outSnap) {
	t.repMu.Lock()
	t.repSnaps = append(t.repSnaps, s)
	t.repMu.Unlock()
	t.wakeReports()
}

func (t *Transport) wakeReports() {
	select {
	case t.repWake <- struct{}{}:
	default:
	}
}

func (t *Transport) reportLoop() {
	defer t.wg.Done()
	for {
		var stopping bool
		select {
		case <-t.repWake:
		case <-t.ctx.Done():
			stopping = true
		}
		t.repMu.Lock()
		unreach, snaps := t.repUnreach, t.repSnaps
		t.repUnreach, t.repSnaps = map[unreachable]struct{}{}, nil
		t.repMu.Unlock()
		if !stopping {
			for u := range unreach {
				u.g.call(func(_ context.Context, h matrixraft.Handler) { h.ReportUnreachable(u.peer) })
			}
		}
		// Snapshot failures are owed even while closing: raft must not
		// wait for a snapshot that will never arrive.
		for _, s := range snaps {
			t.finishSnap(s, false)
		}
		if stopping {
			return
		}
	}
}

// finishSnap reports s to its group's handler, unless it was reported
// already, and counts the outcome.
func (t *Transport) finishSnap(s *outSnap, ok bool) {
	if !s.reported.CompareAndSwap(false, true) {
		return
	}
	s.g.untrack(s)
	status := raft.SnapshotFailure
	if ok {
		status = raft.SnapshotFinish
		t.stats.snapshotsSent.Add(1)
	} else {
		t.stats.snapshotsFailed.Add(1)
	}
	s.g.call(func(_ context.Context, h matrixraft.Handler) { h.ReportSnapshot(s.m.GetTo(), status) })
}

// AddPeer implements matrixraft.Transport. A known peer with a new address
// is redialed; the same address is a no-op.
func (t *Transport) AddPeer(id uint64, addr string) { t.addPeer(t.base, id, addr) }

// addPeer is AddPeer for group g: g lists the peer from now on.
func (t *Transport) addPeer(g *group, id uint64, addr string) {
	if id == t.opts.ID || id == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || g.isClosing() {
		return
	}
	p, ok := t.peers[id]
	switch {
	case !ok:
		p = newPeer(t, id, addr)
		t.peers[id] = p
		t.wg.Add(2)
		go p.runMessages()
		go p.runSnapshots()
		t.log.Debug("raft peer added", "peer", id, "addr", addr)
	case addr != "":
		p.setAddr(addr)
	}
	p.members[g] = struct{}{}
}

// RemovePeer implements matrixraft.Transport: the peer's queue is dropped,
// its snapshots in flight or waiting fail, and its connections close. It
// does not wait for the peer's goroutines (Close does). While a group
// (Group) still lists the peer, only the Transport's own snapshots to it
// fail, and the peer stays.
func (t *Transport) RemovePeer(id uint64) { t.removePeer(t.base, id) }

// removePeer is RemovePeer for group g.
func (t *Transport) removePeer(g *group, id uint64) {
	t.mu.Lock()
	p := t.peers[id]
	orphan := false
	if p != nil {
		delete(p.members, g)
		if len(p.members) == 0 {
			delete(t.peers, id)
			orphan = true
		}
	}
	t.mu.Unlock()
	// g's snapshots to id fail now, as RemovePeer promises, even when the
	// peer stays for other groups: g's raft has forgotten the peer and
	// should not wait behind other groups' snapshot streams to hear so.
	for _, s := range g.pendingSnaps(id) {
		t.oweSnap(s)
	}
	if orphan {
		p.stop()
		t.log.Debug("raft peer removed", "peer", id)
	}
}

// leaveAllLocked removes g from every peer's members and returns the
// peers no one lists any more, already forgotten; the caller stops them.
// t.mu is held.
func (t *Transport) leaveAllLocked(g *group) []*peer {
	var orphans []*peer
	for id, p := range t.peers {
		delete(p.members, g)
		if len(p.members) == 0 {
			delete(t.peers, id)
			orphans = append(orphans, p)
		}
	}
	return orphans
}

// Close implements matrixraft.Transport. It closes the listener and every
// connection, of every group, and waits for the transport's goroutines; no
// handler (the Transport's or a group's) is called after Close returns,
// but by a group's own Close running at the same time. It is idempotent.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	peers := t.peers
	t.peers = map[uint64]*peer{}
	for c := range t.inbound {
		c.Close()
	}
	t.mu.Unlock()
	t.cancel()
	err := t.ln.Close()
	for _, p := range peers {
		p.stop()
	}
	t.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// dial connects to addr and sends the hello frame for a stream of kind.
// Failures are counted unless ctx ended.
func (t *Transport) dial(ctx context.Context, addr string, to uint64, kind byte) (conn net.Conn, err error) {
	defer func() {
		if err != nil && ctx.Err() == nil {
			t.stats.dialFailures.Add(1)
		}
	}()
	if addr == "" {
		return nil, fmt.Errorf("no address for peer %d", to)
	}
	dctx, cancel := context.WithTimeout(ctx, t.opts.DialTimeout)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn = &countingConn{Conn: raw, c: &t.stats}
	if t.opts.ClientTLS != nil {
		cfg := t.opts.ClientTLS.Clone()
		if cfg.ServerName == "" {
			host, _, _ := net.SplitHostPort(addr)
			cfg.ServerName = host
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(dctx); err != nil {
			raw.Close()
			return nil, fmt.Errorf("tls handshake with %s: %w", addr, err)
		}
		conn = tc
	}
	deadline, _ := dctx.Deadline()
	_ = conn.SetWriteDeadline(deadline)
	if _, err := conn.Write(appendFrame(nil, frameHello, hello{from: t.opts.ID, to: to, kind: kind}.encode())); err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetWriteDeadline(time.Time{})
	return conn, nil
}

// wait sleeps for d or until ctx ends, and reports whether ctx is still
// live.
func wait(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}
