package matrixraft

import (
	"context"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Handler is what a Transport delivers to: a Node implements it.
type Handler interface {
	// Step hands a received message to raft.
	Step(ctx context.Context, m *pb.Message) error
	// ReportUnreachable says a message to id could not be sent.
	ReportUnreachable(id uint64)
	// ReportSnapshot says whether a snapshot sent to id arrived. A
	// transport must report every MsgSnap it was given, failures included,
	// or the follower stays paused.
	ReportSnapshot(id uint64, status raft.SnapshotStatus)
}

// Transport moves raft messages between nodes. Send must not block for
// long: a transport drops messages it cannot queue (raft tolerates loss)
// and reports the peer unreachable.
type Transport interface {
	// Start begins delivering received messages to h.
	Start(h Handler) error
	// Send queues messages for their recipients (Message.To).
	Send(msgs []*pb.Message)
	// AddPeer records (or updates) a peer's address.
	AddPeer(id uint64, addr string)
	// RemovePeer forgets a peer and drops its queue.
	RemovePeer(id uint64)
	// Close stops the transport; it is idempotent.
	Close() error
}
