// Package raftlog is a storage.Log replicated by Raft: each shard's log is
// a matrixraft group, and a record is acknowledged once a quorum of the
// group has it in its raft log and this replica has applied it.
//
//	logs, err := raftlog.New(raftlog.Options{Host: host, NodeID: 1, Peers: peers, Transport: tr})
//	opts := temporalstore.Options{Dir: dir, OpenLog: logs.OpenLog, ...}
//
// # Two logs, one record stream
//
// The engine's records are the raft entries: Append proposes the records
// as one entry, and when the entry commits every replica's state machine
// appends the same records, in commit order, to a local log in the shard's
// directory (the value log). The engine reads its values from there by
// index, so the raft log can be compacted at raft's pace while the value
// log is reclaimed at the engine's. Every replica gives a record the same
// index, so an index means the same record on every replica.
//
// The value log is not fsynced per record: the raft log is the durable
// copy. Each value-log record starts with the raft index of its entry, and
// a reopened replica skips the committed entries its value log already
// holds; raft replays the rest. A raft snapshot syncs the value log first,
// so the raft log is never compacted past what the value log keeps. An
// entry torn by a crash (a prefix of its records written) is cut back and
// applied again whole.
//
// # Leaders and followers
//
// Only the leader appends. On a follower, Append fails at once with
// storage.ErrNotLeader (nothing appended), and the shard applies what the
// leader committed as it arrives (storage.Replicated). A new leader
// appends only after a ReadIndex round in its term, so every entry of
// earlier terms is in its value log first. An append whose leader lost
// its leadership before the entry committed fails with
// storage.ErrUnknownOutcome: the entry may still commit, and is then
// applied as a foreign record.
//
// # A replica far behind
//
// A raft snapshot here records only how far the value log goes. A replica
// behind the leader's compacted raft log is sent, with the snapshot, the
// shard's state (matrixraft.StateSender): a fresh checkpoint image of the
// leader's shard and the value-log records from the log's front, which the
// image needs and completes. The replica replaces its value log with them
// and its shard reloads (storage.ShardImages). The state is built in
// memory when sent, so a shard's value log must fit in memory to be sent.
package raftlog
