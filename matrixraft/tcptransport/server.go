package tcptransport

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

// acceptLoop accepts inbound connections until Close.
func (t *Transport) acceptLoop() {
	defer t.wg.Done()
	for {
		raw, err := t.ln.Accept()
		if err != nil {
			if t.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: back off, keep serving.
			t.log.Warn("raft transport accept failed", "err", err)
			if !wait(t.ctx, 50*time.Millisecond) {
				return
			}
			continue
		}
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			raw.Close()
			return
		}
		t.inbound[raw] = struct{}{}
		t.wg.Add(1)
		t.mu.Unlock()
		go func() {
			defer t.wg.Done()
			err := t.serveConn(raw)
			t.mu.Lock()
			delete(t.inbound, raw)
			t.mu.Unlock()
			raw.Close()
			if err != nil && t.ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				t.log.Warn("raft inbound connection dropped", "remote", raw.RemoteAddr().String(), "err", err)
			}
		}()
	}
}

// serveConn runs one inbound connection: the TLS handshake, the hello, then
// the stream it announces.
func (t *Transport) serveConn(raw net.Conn) error {
	var conn net.Conn = &countingConn{Conn: raw, c: &t.stats}
	if err := conn.SetDeadline(time.Now().Add(t.opts.DialTimeout)); err != nil {
		return err
	}
	if t.opts.ServerTLS != nil {
		tc := tls.Server(conn, t.opts.ServerTLS)
		if err := tc.HandshakeContext(t.ctx); err != nil {
			return fmt.Errorf("tls handshake: %w", err)
		}
		conn = tc
	}
	fr := &frameReader{r: bufio.NewReaderSize(conn, 64<<10), maxSize: t.opts.MaxMessageSize}
	typ, payload, err := fr.next()
	if err != nil {
		return fmt.Errorf("reading hello: %w", err)
	}
	if typ != frameHello {
		return fmt.Errorf("%w: connection opened with frame type %d", ErrCorruptFrame, typ)
	}
	hi, err := decodeHello(payload)
	if err != nil {
		return err
	}
	if hi.to != t.opts.ID {
		return fmt.Errorf("%w: from %d for %d, this is %d", ErrWrongPeer, hi.from, hi.to, t.opts.ID)
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return err
	}
	t.log.Debug("raft inbound connection", "peer", hi.from, "snapshot", hi.kind == streamSnapshot)
	if hi.kind == streamSnapshot {
		return t.receiveSnapshot(conn, fr, hi.from)
	}
	return t.receiveMessages(fr, hi.from)
}

// receiveMessages steps every message of a message stream into its
// group's raft, in the order they were sent.
func (t *Transport) receiveMessages(fr *frameReader, from uint64) error {
	for {
		typ, payload, err := fr.next()
		if err != nil {
			return err
		}
		group, m, err := decodeMessageFrame(typ, payload)
		if err != nil {
			return fmt.Errorf("message from %d: %w", from, err)
		}
		t.stats.msgsRecv.Add(1)
		if group != 0 {
			t.stats.groupMsgsRecv.Add(1)
		}
		if m.GetTo() != t.opts.ID || m.GetType() == pb.MsgSnap {
			// Misaddressed, or a snapshot outside its stream (which
			// could never be acknowledged): raft will retry.
			t.stats.recvDropped.Add(1)
			continue
		}
		// An error means raft has stopped or the group or transport is
		// closing; the connection's end follows from Close.
		if !t.step(group, m) {
			// The group is not started here (yet, or any more): raft
			// tolerates the loss, as it does a lost packet.
			t.stats.unknownGroup.Add(1)
		}
	}
}

// step hands m to group's handler and reports whether the group is
// started here. Step's error is not the sender's concern.
func (t *Transport) step(group uint64, m *pb.Message) bool {
	g := t.startedGroup(group)
	return g != nil && g.call(func(ctx context.Context, h matrixraft.Handler) { _ = h.Step(ctx, m) })
}

// stepSnapshot is step for a reassembled MsgSnap; it reports whether raft
// took it.
func (t *Transport) stepSnapshot(group uint64, m *pb.Message) bool {
	g := t.startedGroup(group)
	var err error
	if g == nil || !g.call(func(ctx context.Context, h matrixraft.Handler) { err = h.Step(ctx, m) }) {
		t.stats.unknownGroup.Add(1)
		return false
	}
	return err == nil
}

// receiveSnapshot reads one snapshot stream, steps the reassembled MsgSnap
// into its group's raft and acknowledges it.
func (t *Transport) receiveSnapshot(conn net.Conn, fr *frameReader, from uint64) error {
	typ, payload, err := fr.next()
	if err != nil {
		return err
	}
	hdr, err := decodeSnapHeader(typ, payload)
	if err != nil {
		return fmt.Errorf("snapshot from %d: %w", from, err)
	}
	size, m := hdr.size, hdr.m
	if size > uint64(t.opts.MaxSnapshotSize) {
		return fmt.Errorf("%w: %d bytes from %d, limit %d", ErrSnapshotTooLarge, size, from, t.opts.MaxSnapshotSize)
	}
	if m.GetType() != pb.MsgSnap || m.GetSnapshot() == nil || m.GetTo() != t.opts.ID {
		return fmt.Errorf("%w: snapshot header is not a MsgSnap to %d", ErrCorruptFrame, t.opts.ID)
	}
	if t.startedGroup(hdr.group) == nil {
		// Refused before its data is read: the sender reports the
		// failure and raft sends it again later.
		t.stats.unknownGroup.Add(1)
		t.log.Debug("raft snapshot for a group not started here", "peer", from, "group", hdr.group)
		return t.ackSnapshot(conn, snapAckFailed)
	}
	// Grow with the data actually received, not the announced size.
	data := make([]byte, 0, min(size, uint64(t.opts.MaxMessageSize)))
	for uint64(len(data)) < size {
		typ, chunk, err := fr.next()
		if err != nil {
			return fmt.Errorf("snapshot data from %d: %w", from, err)
		}
		if typ != frameSnapChunk || uint64(len(data))+uint64(len(chunk)) > size {
			return fmt.Errorf("%w: snapshot chunk from %d", ErrCorruptFrame, from)
		}
		data = append(data, chunk...)
	}
	m.Snapshot.Data = data
	ack := snapAckFailed
	if t.stepSnapshot(hdr.group, m) {
		ack = snapAckOK
		t.stats.snapshotsRecv.Add(1)
	}
	if err := t.ackSnapshot(conn, ack); err != nil {
		return err
	}
	t.log.Info("raft snapshot received", "peer", from, "group", hdr.group, "index", m.GetSnapshot().GetMetadata().GetIndex(), "bytes", len(data), "stepped", ack == snapAckOK)
	// Wait for the sender to hang up, so it reads the acknowledgement
	// before the connection is torn down.
	_ = conn.SetReadDeadline(time.Now().Add(t.opts.WriteTimeout))
	_, _, _ = fr.next()
	return nil
}

// ackSnapshot writes a snapshot acknowledgement.
func (t *Transport) ackSnapshot(conn net.Conn, ack byte) error {
	if err := conn.SetWriteDeadline(time.Now().Add(t.opts.WriteTimeout)); err != nil {
		return err
	}
	_, err := conn.Write(appendFrame(nil, frameSnapAck, []byte{ack}))
	return err
}
