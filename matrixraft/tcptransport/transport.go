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
// with New; the node starts it and closes it.
type Transport struct {
	opts Options
	log  *slog.Logger
	ln   net.Listener

	// ctx is the transport's lifetime: Close cancels it, which aborts
	// dials, waits and handler calls in flight.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// mu guards the fields below. Send holds it for reading, so Close
	// (which takes it for writing) happens wholly before or after a Send.
	mu      sync.RWMutex
	h       matrixraft.Handler
	started bool
	closed  bool
	peers   map[uint64]*peer
	inbound map[net.Conn]struct{}

	// Reports owed to the handler by Send, delivered by one goroutine so
	// Send never calls back into the node. Unreachable reports coalesce.
	repMu      sync.Mutex
	repUnreach map[uint64]struct{}
	repSnaps   []uint64
	repWake    chan struct{}

	stats counters
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
	return &Transport{
		opts:       opts,
		log:        opts.Logger.With("raft_id", opts.ID),
		ln:         ln,
		ctx:        ctx,
		cancel:     cancel,
		peers:      map[uint64]*peer{},
		inbound:    map[net.Conn]struct{}{},
		repUnreach: map[uint64]struct{}{},
		repWake:    make(chan struct{}, 1),
	}, nil
}

// Addr returns the address the transport listens on.
func (t *Transport) Addr() net.Addr { return t.ln.Addr() }

// Start implements matrixraft.Transport: it accepts connections and
// delivers their messages to h.
func (t *Transport) Start(h matrixraft.Handler) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closed:
		return ErrClosed
	case t.started:
		return ErrStarted
	}
	t.h, t.started = h, true
	t.wg.Add(2)
	go t.acceptLoop()
	go t.reportLoop()
	t.log.Info("raft transport listening", "addr", t.ln.Addr().String(), "tls", t.opts.ServerTLS != nil)
	return nil
}

func (t *Transport) handler() matrixraft.Handler {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.h
}

// Send implements matrixraft.Transport. It never blocks on the network: a
// message goes to its peer's queue, or is dropped when the queue is full or
// the peer unknown, and the peer is reported unreachable. Every MsgSnap is
// reported back through Handler.ReportSnapshot, failures included. After
// Close, Send drops everything and reports nothing.
func (t *Transport) Send(msgs []*pb.Message) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed {
		return
	}
	for _, m := range msgs {
		p := t.peers[m.GetTo()]
		if m.GetType() == pb.MsgSnap {
			if p == nil || !p.enqueueSnapshot(m) {
				t.stats.snapshotsFailed.Add(1)
				t.owe(m.GetTo(), true)
			}
			continue
		}
		if p == nil {
			t.stats.dropped.Add(1)
			t.owe(m.GetTo(), false)
			continue
		}
		select {
		case p.queue <- m:
		default:
			p.dropped.Add(1)
			t.stats.dropped.Add(1)
			t.owe(m.GetTo(), false)
		}
	}
}

// owe records a report for the report goroutine.
func (t *Transport) owe(id uint64, snapshot bool) {
	t.repMu.Lock()
	if snapshot {
		t.repSnaps = append(t.repSnaps, id)
	} else {
		t.repUnreach[id] = struct{}{}
	}
	t.repMu.Unlock()
	select {
	case t.repWake <- struct{}{}:
	default:
	}
}

func (t *Transport) reportLoop() {
	defer t.wg.Done()
	h := t.handler()
	for {
		var stopping bool
		select {
		case <-t.repWake:
		case <-t.ctx.Done():
			stopping = true
		}
		t.repMu.Lock()
		unreach, snaps := t.repUnreach, t.repSnaps
		t.repUnreach, t.repSnaps = map[uint64]struct{}{}, nil
		t.repMu.Unlock()
		if !stopping {
			for id := range unreach {
				h.ReportUnreachable(id)
			}
		}
		// Snapshot failures are owed even while closing: raft must not
		// wait for a snapshot that will never arrive.
		for _, id := range snaps {
			h.ReportSnapshot(id, raft.SnapshotFailure)
		}
		if stopping {
			return
		}
	}
}

// AddPeer implements matrixraft.Transport. A known peer with a new address
// is redialed; the same address is a no-op.
func (t *Transport) AddPeer(id uint64, addr string) {
	if id == t.opts.ID || id == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	if p, ok := t.peers[id]; ok {
		if addr != "" {
			p.setAddr(addr)
		}
		return
	}
	p := newPeer(t, id, addr)
	t.peers[id] = p
	t.wg.Add(2)
	go p.runMessages()
	go p.runSnapshots()
	t.log.Debug("raft peer added", "peer", id, "addr", addr)
}

// RemovePeer implements matrixraft.Transport: the peer's queue is dropped,
// its snapshots in flight or waiting fail, and its connections close. It
// does not wait for the peer's goroutines (Close does).
func (t *Transport) RemovePeer(id uint64) {
	t.mu.Lock()
	p := t.peers[id]
	delete(t.peers, id)
	t.mu.Unlock()
	if p != nil {
		p.stop()
		t.log.Debug("raft peer removed", "peer", id)
	}
}

// Close implements matrixraft.Transport. It closes the listener and every
// connection and waits for the transport's goroutines; the handler is not
// called after Close returns. It is idempotent.
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
