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
// # Groups
//
// A process running many raft groups (a matrixraft.Host) shares one
// Transport between them: Transport.Group(id) returns the
// matrixraft.Transport of group id (non-zero), to pass to the group's node.
// All groups use the one listener and the one connection (and queue) per
// peer; each message travels tagged with its group and is stepped into
// that group's handler. The first Start, of a group or of the Transport
// itself, starts accepting connections, so a Transport used only through
// groups need not be started. A group is started once per Transport
// (another Start of the same group fails with ErrStarted until the first
// one's Close); a group's Close unregisters its handler, fails its
// pending snapshots and leaves the Transport running, while the
// Transport's Close ends every group. A message or snapshot for a group
// not started here is dropped (raft tolerates loss; the group may not be
// started yet) and counted in Stats.UnknownGroupDrops.
//
// Peer addresses belong to nodes, not groups: AddPeer on any group records
// or updates the one address. Each group (and the Transport itself) keeps
// its own list of peers: RemovePeer takes the peer off that list and fails
// that group's snapshots to it, and the peer's queue and connections go
// only when no list holds it any more. A group may send to any peer the
// Transport knows. Reports go to the group concerned: ReportSnapshot to
// the group that sent the snapshot, ReportUnreachable to the group whose
// message was dropped, or, for a lost connection, to every group listing
// the peer.
//
// # Frames
//
// Every frame has a 10-byte header: format version, frame type, payload
// length (big endian) and the payload's CRC32C. A frame over
// Options.MaxMessageSize is refused before its payload is read, so a bad
// length never makes a reader allocate. A message frame holds one raft
// message (protobuf). A group's message frame is a distinct frame type
// whose payload is the group ID (uvarint) followed by the message, and the
// same goes for a group's snapshot header; the Transport's own messages
// (Start) use the original frame types, so a Transport used without groups
// writes what it always wrote. Under load the queued messages are gathered
// into one buffered write and flushed when the queue is empty.
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
// A Transport's methods, and its groups', are safe for concurrent use.
// Send never blocks on the network and never calls the Handler itself:
// when a peer's queue is full or the peer is unknown the message is
// dropped (raft tolerates loss), and Handler.ReportUnreachable is called
// later from the transport's own goroutine, coalesced per group and peer.
// Messages to one peer are written in Send order, whatever their group;
// messages from one peer are stepped in the order they arrived, one at a
// time per connection. The Handler is called from transport goroutines
// only: Step from the connection's reader, ReportSnapshot from the peer's
// snapshot goroutine, ReportUnreachable from the peer's writer or the
// report goroutine; the one exception is a group's Close, which reports
// the group's pending snapshots failed itself. It must not block for
// long. Close stops every goroutine and waits for them: no Handler is
// called after Close returns, and Send after Close drops silently. A
// group's Close aborts its Steps in flight (through their context) and
// waits for its Handler's calls in progress, so it must not be called from
// that Handler.
//
// # Counters and logs
//
// Stats returns bytes and messages sent and received (those of groups
// also apart), the writes they were gathered into, drops (messages for
// groups not started here apart), reconnects and snapshot outcomes, and
// each peer's queue. Connection events are logged through Options.Logger
// (log/slog).
package tcptransport
