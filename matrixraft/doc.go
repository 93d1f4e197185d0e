// Package matrixraft is a Raft library built on go.etcd.io/raft/v3: it runs
// raft nodes, stores their logs durably on package wal, and moves their
// messages.
//
// # What this module owns
//
//   - The durable segmented write-ahead log, package wal.
//   - Storage: raft's log storage on a wal.Log — entries, HardState and
//     snapshot files — recovered exactly on restart, with a compaction fence
//     (a log record is dropped only once a durable snapshot covers every
//     entry in it).
//   - Node: bootstrap, join, restart from snapshot plus log, graceful Stop,
//     self-removal; the Ready loop; Propose that returns the state machine's
//     result after apply; exactly-once client sessions; backpressure;
//     batched ReadIndex reads, lease reads and stale reads; ConfChangeV2
//     membership with learners, promotion and leader transfer; snapshots by
//     applied-entries delta, serialised beside the loop for a
//     SnapshotCapturer; Status with metrics; force-new-cluster
//     recovery of a group that lost its quorum (Options.ForceNewCluster);
//     an optional AsyncStorageWrites mode.
//   - Host: many raft groups in one process on one shared wal.Log, so one
//     fdatasync covers the Ready batches of every group persisting at that
//     moment. Records carry their group's ID; the log is read once on open
//     and split by group; compaction has one fence over all groups (a
//     segment goes only once every group's durable snapshot covers its
//     records there). A quiet group does not hold the log back: past
//     HostOptions.MaxPinnedBytes its state is written again at the log's
//     head, or its node is asked for a snapshot.
//   - Transport, an interface, and MemNetwork, an in-memory implementation
//     with fault hooks (drop, delay, partition, pause) for tests.
//   - Package tcptransport: the Transport over TCP, optionally TLS.
//   - Package raftprom: a Prometheus collector over Status (the caller
//     registers it; nothing global), with the WAL fsync histogram, the Ready
//     batch sizes, the read and snapshot latencies and the per-peer lag.
//
// # The Ready loop
//
// Each Ready is handled in this order: a leader sends its appends and
// heartbeats first (they do not depend on its own disk); a snapshot file is
// written and fsynced, then one log batch holds the snapshot record, the
// entries and the HardState, fsynced; then the remaining messages go out
// (votes, append responses: never before what they promise is durable);
// then the snapshot is restored into the state machine and committed
// entries are applied in one Apply batch per run of normal entries; read
// requests whose index is applied are released; a snapshot is taken when
// SnapshotEntries have been applied since the last; then Advance. A
// snapshot's state is captured on the loop, between applies, so it is
// exactly the state at its index; its serialisation, its file, the file's
// fsync, its log record and the compaction behind it are done by a
// goroutine beside the loop (one at a time), so Readys keep flowing. The
// compaction fence holds as before: the log is compacted only behind a
// snapshot whose file and record are durable.
//
// With Options.AsyncStorageWrites raft hands the log writes to the node as
// messages: a goroutine of their own persists them in order (every append
// queued meanwhile in one log write and one fsync) and only then delivers
// the responses that promise durability; the loop sends everything else at
// once and applies committed entries as before.
//
// # Snapshots off the loop
//
// A StateMachine's Snapshot is called on the loop, so every proposal waits
// while it writes the whole state: tens of milliseconds for a state of
// tens of megabytes, taken every SnapshotEntries entries. A state machine
// that also implements SnapshotCapturer is asked on the loop only for a
// capture — an immutable view of its state at that moment, cheap to take
// with a copy-on-write or versioned structure — and the capture's WriteTo
// writes it beside the loop while Apply goes on. The snapshot's format is
// whatever the state machine writes, so Restore reads snapshots written
// either way, and a state machine can adopt SnapshotCapturer without
// touching the snapshots it already has.
//
// # Concurrency
//
// A Node's methods are safe for concurrent use. The state machine is called
// from the node's loop goroutine only, never concurrently with itself, so a
// snapshot never sees a half-applied batch (the one exception is a
// SnapshotCapturer's capture, written from another goroutine while Apply
// runs, which is why it must not change with the state); reads the
// application serves from its state machine must synchronize with Apply.
// Propose blocks until apply, ctx's end or Stop; at most
// Options.MaxInflightProposals calls wait at once, later ones block
// (backpressure), and raft drops proposals beyond
// MaxUncommittedEntriesSize (ErrProposalDropped). When Propose's ctx ends
// the outcome is unknown; ProposeSession makes retrying safe. Read batches
// concurrent callers behind one ReadIndex request, re-sent under a fresh ID
// after ReadRetryTicks. Storage's writers are the loop only; its raft.Storage
// methods are safe concurrently with them.
//
// # Dependencies
//
// This module depends on go.etcd.io/raft/v3 (and package raftprom on the
// Prometheus client) and on no other module of this repository.
package matrixraft
