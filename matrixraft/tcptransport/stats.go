package tcptransport

import (
	"maps"
	"net"
	"slices"
	"sync/atomic"
)

// Stats are a transport's counters since New.
type Stats struct {
	// BytesSent and BytesReceived count bytes on the wire, frames and TLS
	// records included.
	BytesSent     uint64
	BytesReceived uint64
	// MessagesSent and MessagesReceived count raft messages written to and
	// read from message streams (snapshots not included).
	MessagesSent     uint64
	MessagesReceived uint64
	// Flushes counts the writes of gathered messages on message streams:
	// MessagesSent / Flushes is the batching factor.
	Flushes uint64
	// MessagesDropped counts outbound messages dropped: queue full, peer
	// unknown or unreachable, or over MaxMessageSize.
	MessagesDropped uint64
	// InboundDropped counts received messages not delivered: addressed to
	// another node, or a MsgSnap outside a snapshot stream.
	InboundDropped uint64
	// GroupMessagesSent and GroupMessagesReceived count the messages of
	// groups (Transport.Group) among MessagesSent and MessagesReceived.
	GroupMessagesSent     uint64
	GroupMessagesReceived uint64
	// UnknownGroupDrops counts received messages and snapshots for a group
	// with no handler here: not started yet, or closed (un-grouped ones
	// too, when only groups are started). Not included in InboundDropped.
	UnknownGroupDrops uint64
	// Reconnects counts message-stream connections made after a lost
	// connection or a failed attempt.
	Reconnects uint64
	// DialFailures counts failed connection attempts, for messages and
	// snapshots.
	DialFailures uint64
	// SnapshotsSent and SnapshotsFailed count outbound snapshots by their
	// outcome as reported to raft; SnapshotsReceived counts inbound ones.
	SnapshotsSent     uint64
	SnapshotsFailed   uint64
	SnapshotsReceived uint64
	// Peers holds each known peer's state.
	Peers map[uint64]PeerStats
}

// PeerStats is one outbound peer's state.
type PeerStats struct {
	Addr      string
	Connected bool
	// Queued is the number of messages waiting in the peer's queue.
	Queued int
	// Dropped counts messages to this peer that were dropped.
	Dropped uint64
}

type counters struct {
	bytesSent, bytesRecv                          atomic.Uint64
	msgsSent, msgsRecv, dropped, recvDropped      atomic.Uint64
	flushes                                       atomic.Uint64
	groupMsgsSent, groupMsgsRecv, unknownGroup    atomic.Uint64
	reconnects, dialFailures                      atomic.Uint64
	snapshotsSent, snapshotsFailed, snapshotsRecv atomic.Uint64
}

// Stats returns the transport's counters. It is safe to call at any time.
func (t *Transport) Stats() Stats {
	c := &t.stats
	s := Stats{
		BytesSent:             c.bytesSent.Load(),
		BytesReceived:         c.bytesRecv.Load(),
		MessagesSent:          c.msgsSent.Load(),
		MessagesReceived:      c.msgsRecv.Load(),
		Flushes:               c.flushes.Load(),
		MessagesDropped:       c.dropped.Load(),
		InboundDropped:        c.recvDropped.Load(),
		GroupMessagesSent:     c.groupMsgsSent.Load(),
		GroupMessagesReceived: c.groupMsgsRecv.Load(),
		UnknownGroupDrops:     c.unknownGroup.Load(),
		Reconnects:            c.reconnects.Load(),
		DialFailures:          c.dialFailures.Load(),
		SnapshotsSent:         c.snapshotsSent.Load(),
		SnapshotsFailed:       c.snapshotsFailed.Load(),
		SnapshotsReceived:     c.snapshotsRecv.Load(),
		Peers:                 map[uint64]PeerStats{},
	}
	t.mu.RLock()
	peers := slices.Collect(maps.Values(t.peers))
	t.mu.RUnlock()
	for _, p := range peers {
		s.Peers[p.id] = PeerStats{Addr: p.getAddr(), Connected: p.connected.Load(), Queued: len(p.queue), Dropped: p.dropped.Load()}
	}
	return s
}

// countingConn counts the bytes through a connection.
type countingConn struct {
	net.Conn
	c *counters
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.c.bytesRecv.Add(uint64(n))
	return n, err
}

func (c *countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.c.bytesSent.Add(uint64(n))
	return n, err
}
