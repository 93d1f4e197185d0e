// Package tcptransport is a matrixraft.Transport over TCP, optionally TLS.
//
// # Connections
//
// Each node listens on one address (Options.ListenAddr). Towards each peer
// it keeps one outbound message connection, fed by a bounded queue
// (Options.QueueSize) and reconnected with exponential backoff
// (Options.MinBackoff to Options.MaxBackoff) when it fails. A node
// receives on the connections its peers open to it, so between two nodes
// there are two connections, one each way. Every connection starts with a
// hello frame naming sender, receiver and stream kind; a connection meant
// for another node ID is refused, which catches stale address books.
//
// # Frames
//
// Every frame has a 10-byte header: format version, frame type, payload
// length (big endian) and the payload's CRC32C. A frame over
// Options.MaxMessageSize is refused before its payload is read, so a bad
// length never makes a reader allocate. A message frame holds one raft
// message (protobuf). Under load the queued messages are gathered into one
// buffered write and flushed when the queue is empty.
//
// # Snapshots
//
// A MsgSnap never goes on the message connection: each one is streamed on a
// connection of its own by the peer's snapshot goroutine, as a header frame
// (the message without its data) followed by data chunks of
// Options.SnapshotChunkSize, so a large snapshot neither needs one huge
// frame nor delays heartbeats and appends. The receiver reassembles it,
// steps it into raft and acknowledges; the sender then reports
// raft.SnapshotFinish. Every MsgSnap given to Send is reported exactly once
// through Handler.ReportSnapshot: Finish on acknowledgement, Failure on any
// error, on a full snapshot queue (Options.SnapshotQueueSize), for an
// unknown peer, or when the peer is removed or the transport closed first.
//
// # Concurrency
//
// A Transport's methods are safe for concurrent use. Send never blocks on
// the network and never calls the Handler itself: when a peer's queue is
// full or the peer is unknown the message is dropped (raft tolerates loss),
// and Handler.ReportUnreachable is called later from the transport's own
// goroutine, coalesced per peer. Messages to one peer are written in Send
// order; messages from one peer are stepped in the order they arrived, one
// at a time per connection. The Handler is called from transport
// goroutines only: Step from the connection's reader, ReportSnapshot from
// the peer's snapshot goroutine, ReportUnreachable from the peer's writer
// or the report goroutine. It must not block for long. Close stops every
// goroutine and waits for them: the Handler is not called after Close
// returns, and Send after Close drops silently.
//
// # Counters and logs
//
// Stats returns bytes and messages sent and received, the writes they were
// gathered into, drops, reconnects and snapshot outcomes, and each peer's
// queue. Connection events are logged through Options.Logger (log/slog).
package tcptransport
