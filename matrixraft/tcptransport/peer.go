package tcptransport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

// maxBatchBytes ends a batch of queued messages: the writer flushes and
// renews its write deadline.
const maxBatchBytes = 1 << 20

// peer is the outbound side towards one node: a message stream fed by a
// bounded queue, and a separate snapshot stream, so a large snapshot never
// holds up heartbeats and appends.
type peer struct {
	t      *Transport
	id     uint64
	queue  chan outMsg
	snapq  chan *outSnap
	ctx    context.Context // ends at the last RemovePeer or Close
	cancel context.CancelFunc
	// members are the groups listing the peer (the Transport itself is
	// group 0); the peer is dropped when the last one removes it. Guarded
	// by t.mu.
	members map[*group]struct{}

	mu     sync.Mutex
	addr   string
	conn   net.Conn // the message stream's connection, when up
	closed bool

	connected atomic.Bool
	dropped   atomic.Uint64
}

// outMsg is a queued message and the group it belongs to.
type outMsg struct {
	group uint64
	m     *pb.Message
}

func newPeer(t *Transport, id uint64, addr string) *peer {
	ctx, cancel := context.WithCancel(t.ctx)
	return &peer{
		t:       t,
		id:      id,
		addr:    addr,
		queue:   make(chan outMsg, t.opts.QueueSize),
		snapq:   make(chan *outSnap, t.opts.SnapshotQueueSize),
		ctx:     ctx,
		cancel:  cancel,
		members: map[*group]struct{}{},
	}
}

func (p *peer) getAddr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addr
}

// setAddr changes the peer's address; the message stream reconnects to it.
func (p *peer) setAddr(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if addr == p.addr {
		return
	}
	p.addr = addr
	if p.conn != nil {
		p.conn.Close()
	}
}

// enqueueSnapshot queues a MsgSnap for the snapshot stream. It returns
// false when the peer is stopped or its snapshot queue is full; the caller
// then owes raft a failure report.
func (p *peer) enqueueSnapshot(s *outSnap) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	select {
	case p.snapq <- s:
		return true
	default:
		return false
	}
}

// stop ends the peer's streams. closed is set before the context ends, so
// runSnapshots's final drain sees every snapshot that was queued.
func (p *peer) stop() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
}

// reportUnreachable tells every group listing the peer that it cannot be
// reached: they all share its connection.
func (p *peer) reportUnreachable() {
	if p.ctx.Err() != nil {
		return
	}
	p.t.mu.RLock()
	members := slices.Collect(maps.Keys(p.members))
	p.t.mu.RUnlock()
	for _, g := range members {
		g.call(func(_ context.Context, h matrixraft.Handler) { h.ReportUnreachable(p.id) })
	}
}

// runMessages keeps a connection to the peer and writes queued messages to
// it, reconnecting with exponential backoff. While the peer cannot be
// reached its queue is drained and dropped: raft re-sends what matters, and
// stale heartbeats and appends only cost bandwidth later.
func (p *peer) runMessages() {
	defer p.t.wg.Done()
	log := p.t.log.With("peer", p.id)
	backoff := p.t.opts.MinBackoff
	everConnected, failures := false, 0
	for p.ctx.Err() == nil {
		addr := p.getAddr()
		conn, err := p.t.dial(p.ctx, addr, p.id, streamMessages)
		if err != nil {
			if p.ctx.Err() != nil {
				return
			}
			failures++
			if failures == 1 {
				log.Warn("raft peer unreachable", "addr", addr, "err", err)
			} else {
				log.Debug("raft peer still unreachable", "addr", addr, "err", err, "attempts", failures)
			}
			p.reportUnreachable()
			if !p.dropWhile(backoff) {
				return
			}
			backoff = min(2*backoff, p.t.opts.MaxBackoff)
			continue
		}
		if everConnected || failures > 0 {
			p.t.stats.reconnects.Add(1)
		}
		everConnected, failures, backoff = true, 0, p.t.opts.MinBackoff
		log.Info("raft peer connected", "addr", addr)

		p.mu.Lock()
		if p.closed || addr != p.addr {
			p.mu.Unlock()
			conn.Close()
			continue
		}
		p.conn = conn
		p.mu.Unlock()
		p.connected.Store(true)
		stopClose := context.AfterFunc(p.ctx, func() { conn.Close() })
		err = p.pump(conn)
		stopClose()
		p.connected.Store(false)
		p.mu.Lock()
		p.conn = nil
		p.mu.Unlock()
		conn.Close()
		if p.ctx.Err() != nil {
			return
		}
		log.Warn("raft peer connection lost", "addr", addr, "err", err)
		p.reportUnreachable()
	}
}

// dropWhile waits d (or until the peer stops), dropping whatever is queued
// meanwhile. It reports whether the peer is still live.
func (p *peer) dropWhile(d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	for {
		select {
		case <-p.queue:
			p.dropped.Add(1)
			p.t.stats.dropped.Add(1)
		case <-tm.C:
			return true
		case <-p.ctx.Done():
			return false
		}
	}
}

// pump writes queued messages to conn until a write fails or the peer
// stops. Whatever is queued when it wakes is gathered into the write
// buffer and flushed together: one write for many messages under load,
// one per message when idle.
func (p *peer) pump(conn net.Conn) error {
	bw := bufio.NewWriterSize(conn, p.t.opts.WriteBufferSize)
	var buf []byte
	for {
		var om outMsg
		select {
		case om = <-p.queue:
		case <-p.ctx.Done():
			return p.ctx.Err()
		}
		if err := conn.SetWriteDeadline(time.Now().Add(p.t.opts.WriteTimeout)); err != nil {
			return err
		}
		// A batch is bounded so that its deadline stays meaningful under a
		// queue that never empties.
		batched := 0
		for {
			n, err := p.writeMessage(bw, om, &buf)
			if err != nil {
				return err
			}
			batched += n
			if batched >= maxBatchBytes || !p.tryDequeue(&om) {
				break
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		p.t.stats.flushes.Add(1)
	}
}

// tryDequeue takes the next queued message without waiting, if there is
// one.
func (p *peer) tryDequeue(om *outMsg) bool {
	select {
	case *om = <-p.queue:
		return true
	default:
		return false
	}
}

// writeMessage writes om as one frame to bw, its group's ID in front for a
// grouped frame, and returns the bytes written. A message that cannot be
// marshalled or is over MaxMessageSize is dropped and counted; only a
// write error is returned. buf is reused between calls.
func (p *peer) writeMessage(bw *bufio.Writer, om outMsg, buf *[]byte) (int, error) {
	m := om.m
	b, err := proto.MarshalOptions{}.MarshalAppend(appendGroup((*buf)[:0], om.group), m)
	*buf = b
	switch {
	case err != nil:
		p.t.log.Error("raft message not marshalled", "peer", p.id, "group", om.group, "type", m.GetType().String(), "err", err)
	case len(b) > p.t.opts.MaxMessageSize:
		p.t.log.Warn("raft message over MaxMessageSize dropped", "peer", p.id, "group", om.group, "type", m.GetType().String(), "bytes", len(b))
	default:
		n, err := writeFrame(bw, messageFrameType(om.group), b)
		if err != nil {
			return n, err
		}
		p.t.stats.msgsSent.Add(1)
		if om.group != 0 {
			p.t.stats.groupMsgsSent.Add(1)
		}
		return n, nil
	}
	p.dropped.Add(1)
	p.t.stats.dropped.Add(1)
	return 0, nil
}

// runSnapshots streams queued snapshots one at a time and reports each
// outcome to its group's raft. When the peer stops, every snapshot still
// queued is reported failed.
func (p *peer) runSnapshots() {
	defer p.t.wg.Done()
	for {
		select {
		case s := <-p.snapq:
			if s.reported.Load() {
				// Failed already: its group closed or removed the peer.
				continue
			}
			m := s.m
			start := time.Now()
			err := p.sendSnapshot(s)
			if err != nil {
				p.t.log.Warn("raft snapshot not delivered", "peer", p.id, "group", s.g.id, "index", m.GetSnapshot().GetMetadata().GetIndex(), "err", err)
			} else {
				p.t.log.Info("raft snapshot delivered", "peer", p.id, "group", s.g.id, "index", m.GetSnapshot().GetMetadata().GetIndex(),
					"bytes", len(m.GetSnapshot().GetData()), "took", time.Since(start))
			}
			p.t.finishSnap(s, err == nil)
		case <-p.ctx.Done():
			for {
				select {
				case s := <-p.snapq:
					p.t.finishSnap(s, false)
				default:
					return
				}
			}
		}
	}
}

// sendSnapshot streams one MsgSnap on a connection of its own: a header
// frame with the message minus its data, the data in chunks, then the
// receiver's acknowledgement once raft has it. The stream ends early when
// the peer stops or the snapshot's group closes.
func (p *peer) sendSnapshot(s *outSnap) error {
	m := s.m
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	stopGroup := context.AfterFunc(s.g.context(), cancel)
	defer stopGroup()
	conn, err := p.t.dial(ctx, p.getAddr(), p.id, streamSnapshot)
	if err != nil {
		return err
	}
	defer conn.Close()
	stopClose := context.AfterFunc(ctx, func() { conn.Close() })
	defer stopClose()

	data := m.GetSnapshot().GetData()
	// A shallow copy without the data: the message belongs to raft and
	// must not be changed, and the data goes in chunks.
	head := &pb.Message{
		Type: m.Type, To: m.To, From: m.From, Term: m.Term, LogTerm: m.LogTerm,
		Index: m.Index, Commit: m.Commit, Reject: m.Reject, RejectHint: m.RejectHint,
		Snapshot: &pb.Snapshot{Metadata: m.GetSnapshot().GetMetadata()},
	}
	payload, err := encodeSnapHeader(s.g.id, uint64(len(data)), head)
	if err != nil {
		return err
	}
	if len(payload) > p.t.opts.MaxMessageSize {
		return fmt.Errorf("%w: snapshot header of %d bytes", ErrFrameTooLarge, len(payload))
	}
	bw := bufio.NewWriterSize(conn, p.t.opts.WriteBufferSize)
	deadline := func() error { return conn.SetWriteDeadline(time.Now().Add(p.t.opts.WriteTimeout)) }
	if err := deadline(); err != nil {
		return err
	}
	if _, err := writeFrame(bw, snapHeaderFrameType(s.g.id), payload); err != nil {
		return err
	}
	for off := 0; off < len(data); {
		n := min(len(data)-off, p.t.opts.SnapshotChunkSize)
		if err := deadline(); err != nil {
			return err
		}
		if _, err := writeFrame(bw, frameSnapChunk, data[off:off+n]); err != nil {
			return err
		}
		off += n
	}
	if err := deadline(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := conn.SetReadDeadline(time.Now().Add(p.t.opts.SnapshotAckTimeout)); err != nil {
		return err
	}
	fr := frameReader{r: conn, maxSize: 16}
	typ, ack, err := fr.next()
	switch {
	case err != nil:
		return fmt.Errorf("snapshot acknowledgement: %w", err)
	case typ != frameSnapAck || len(ack) != 1:
		return fmt.Errorf("%w: expected a snapshot acknowledgement, got type %d", ErrCorruptFrame, typ)
	case ack[0] != snapAckOK:
		return errors.New("receiver refused the snapshot")
	}
	return nil
}
