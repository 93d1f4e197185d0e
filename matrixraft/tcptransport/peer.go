package tcptransport

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
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
	queue  chan *pb.Message
	snapq  chan *pb.Message
	ctx    context.Context // ends at RemovePeer or Close
	cancel context.CancelFunc

	mu     sync.Mutex
	addr   string
	conn   net.Conn // the message stream's connection, when up
	closed bool

	connected atomic.Bool
	dropped   atomic.Uint64
}

func newPeer(t *Transport, id uint64, addr string) *peer {
	ctx, cancel := context.WithCancel(t.ctx)
	return &peer{
		t:      t,
		id:     id,
		addr:   addr,
		queue:  make(chan *pb.Message, t.opts.QueueSize),
		snapq:  make(chan *pb.Message, t.opts.SnapshotQueueSize),
		ctx:    ctx,
		cancel: cancel,
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
func (p *peer) enqueueSnapshot(m *pb.Message) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	select {
	case p.snapq <- m:
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

func (p *peer) reportUnreachable() {
	if h := p.t.handler(); h != nil && p.ctx.Err() == nil {
		h.ReportUnreachable(p.id)
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
		var m *pb.Message
		select {
		case m = <-p.queue:
		case <-p.ctx.Done():
			return p.ctx.Err()
		}
		if err := conn.SetWriteDeadline(time.Now().Add(p.t.opts.WriteTimeout)); err != nil {
			return err
		}
		// A batch is bounded so that its deadline stays meaningful under a
		// queue that never empties.
		batched := 0
		for m != nil {
			var err error
			buf, err = proto.MarshalOptions{}.MarshalAppend(buf[:0], m)
			switch {
			case err != nil:
				p.t.log.Error("raft message not marshalled", "peer", p.id, "type", m.GetType().String(), "err", err)
				p.dropped.Add(1)
				p.t.stats.dropped.Add(1)
			case len(buf) > p.t.opts.MaxMessageSize:
				p.t.log.Warn("raft message over MaxMessageSize dropped", "peer", p.id, "type", m.GetType().String(), "bytes", len(buf))
				p.dropped.Add(1)
				p.t.stats.dropped.Add(1)
			default:
				n, err := writeFrame(bw, frameMessage, buf)
				if err != nil {
					return err
				}
				batched += n
				p.t.stats.msgsSent.Add(1)
			}
			m = nil
			if batched >= maxBatchBytes {
				break
			}
			select {
			case m = <-p.queue:
			default:
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		p.t.stats.flushes.Add(1)
	}
}

// runSnapshots streams queued snapshots one at a time and reports each
// outcome to raft. When the peer stops, every snapshot still queued is
// reported failed.
func (p *peer) runSnapshots() {
	defer p.t.wg.Done()
	report := func(ok bool) {
		status := raft.SnapshotFailure
		if ok {
			status = raft.SnapshotFinish
			p.t.stats.snapshotsSent.Add(1)
		} else {
			p.t.stats.snapshotsFailed.Add(1)
		}
		if h := p.t.handler(); h != nil {
			h.ReportSnapshot(p.id, status)
		}
	}
	for {
		select {
		case m := <-p.snapq:
			start := time.Now()
			err := p.sendSnapshot(m)
			if err != nil {
				p.t.log.Warn("raft snapshot not delivered", "peer", p.id, "index", m.GetSnapshot().GetMetadata().GetIndex(), "err", err)
			} else {
				p.t.log.Info("raft snapshot delivered", "peer", p.id, "index", m.GetSnapshot().GetMetadata().GetIndex(),
					"bytes", len(m.GetSnapshot().GetData()), "took", time.Since(start))
			}
			report(err == nil)
		case <-p.ctx.Done():
			for {
				select {
				case <-p.snapq:
					report(false)
				default:
					return
				}
			}
		}
	}
}

// sendSnapshot streams one MsgSnap on a connection of its own: a header
// frame with the message minus its data, the data in chunks, then the
// receiver's acknowledgement once raft has it.
func (p *peer) sendSnapshot(m *pb.Message) error {
	conn, err := p.t.dial(p.ctx, p.getAddr(), p.id, streamSnapshot)
	if err != nil {
		return err
	}
	defer conn.Close()
	stopClose := context.AfterFunc(p.ctx, func() { conn.Close() })
	defer stopClose()

	data := m.GetSnapshot().GetData()
	// A shallow copy without the data: the message belongs to raft and
	// must not be changed, and the data goes in chunks.
	head := &pb.Message{
		Type: m.Type, To: m.To, From: m.From, Term: m.Term, LogTerm: m.LogTerm,
		Index: m.Index, Commit: m.Commit, Reject: m.Reject, RejectHint: m.RejectHint,
		Snapshot: &pb.Snapshot{Metadata: m.GetSnapshot().GetMetadata()},
	}
	payload := binary.AppendUvarint(nil, uint64(len(data)))
	payload, err = proto.MarshalOptions{}.MarshalAppend(payload, head)
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
	if _, err := writeFrame(bw, frameSnapHeader, payload); err != nil {
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
