// Package matrixraft is a Raft library built on go.etcd.io/raft/v3: it runs
// raft nodes, stores their logs durably on package wal, and moves their
// messages.
//
// The application supplies a StateMachine (Apply, Snapshot, Restore) and a
// Transport; StartNode does the rest: it restarts from the snapshot and
// log in Options.Dir, bootstraps a new cluster from Options.Peers, or with
// neither waits to be added by the leader.
//
//	n, err := matrixraft.StartNode(matrixraft.Options{
//		ID: 1, Dir: dir, Peers: peers, StateMachine: sm, Transport: tr,
//	})
//	defer n.Stop()
//	result, err := n.Propose(ctx, []byte("key=value")) // on the leader
//	err = n.Read(ctx, matrixraft.ReadLinearizable)     // then read sm
//
// Propose returns the state machine's result once the command is applied
// on this node; elsewhere than the leader it fails with a *NotLeaderError
// naming the leader. ProposeSession makes a retry safe: a (client, seq)
// pair is applied at most once. Read waits until the local state machine
// is consistent with the mode: ReadLinearizable (batched ReadIndex, or the
// leader's lease with Options.LeaseReads) or ReadStale. AddVoter,
// AddLearner, PromoteLearner, RemoveMember and TransferLeadership change
// the membership; Status reports the node's state and metrics.
//
// Other pieces: Storage (OpenStorage), raft's log storage on a wal.Log,
// recovered exactly on restart; Host (OpenHost), many raft groups on one
// shared wal.Log, so one fdatasync covers every group persisting at once;
// MemNetwork, an in-memory Transport with fault hooks for tests; package
// tcptransport, the Transport over TCP and TLS; package raftprom, a
// Prometheus collector over Status.
//
// # Durability and snapshots
//
// A message that promises durability (a vote, an append response) leaves
// only after what it promises is fsynced, and committed entries are
// applied in log order. Every Options.SnapshotEntries applied entries the
// node snapshots the state machine; the log is compacted only behind a
// snapshot whose file and record are durable. Snapshot runs on the node's
// loop, so proposals wait while it writes; a state machine that also
// implements SnapshotCapturer is asked on the loop only for a cheap
// capture, written beside the loop while Apply goes on. With
// Options.AsyncStorageWrites the log is written by a goroutine of its own,
// so proposals keep batching during an fsync. A state machine that keeps
// its state in files of its own can snapshot only how far they go and be
// a StateSender: a replica that needs a snapshot gets the whole state,
// written when it is sent. Options.ForceNewCluster
// recovers a group that lost its quorum from one survivor.
//
// # Concurrency and errors
//
// A Node's methods are safe for concurrent use. The state machine is
// called from the node's loop goroutine only, never concurrently with
// itself (a SnapshotCapturer's capture is written from another goroutine,
// so it must not change with the state); reads the application serves
// from its state machine must synchronize with Apply. At most
// Options.MaxInflightProposals Propose calls wait at once, later ones
// block, and raft drops proposals beyond MaxUncommittedEntriesSize
// (ErrProposalDropped, safe to retry). When Propose's ctx ends, or it
// returns ErrUnknownOutcome, the command may still be applied.
//
// This module imports no other module of this repository; only package
// raftprom imports the Prometheus client.
package matrixraft
