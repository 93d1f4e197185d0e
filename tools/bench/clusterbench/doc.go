// Package clusterbench is `bench cluster`: three TemporalStore server
// processes serving one Redis Cluster (examples/server --cluster-id
// --cluster-peers, each shard of the default table a matrixraft group with
// a voter on every member) against three etcd member processes, all on
// this one machine over loopback, durable both (fsync before a write is
// acknowledged).
//
// The systems alternate, ours then etcd, Repeats times over; each run
// starts a fresh cluster in a fresh directory and measures, in order:
//
//   - writes through consensus: C concurrent clients (Concurrency, 1 and
//     16) SET random 16-byte keys of a 100,000-key space with 256-byte
//     values, ours through go-redis's ClusterClient (to each slot's
//     leader), etcd with clientv3 Put to its leader; writes/s and p50,
//     p95 and p99 per write after a warm-up, and the members' CPU per
//     write;
//   - reads, one client: ours READONLY then GET on the member leading the
//     fewest slots, of keys in slots it does not lead (a follower read of
//     its own replica), and GET through ClusterClient (linearizable, on
//     the leader); etcd a serializable Get on a follower and a
//     linearizable Get on its leader;
//   - failover: a writer writes one key in a loop, the member leading the
//     key's slot (CLUSTER KEYSLOT, then CLUSTER SHARDS' "master" of the
//     shard holding it; etcd: its leader) gets SIGKILL, and failover_ms is
//     the time from the kill until the first write sent after the process
//     exited is acknowledged (ours through a ClusterClient reloading the
//     slots every 100 ms, etcd through a client of all three members),
//     beside new_leader_ms, until a survivor names a new leader. The value
//     read back afterwards must not be below the last acknowledged one.
//
// Third, alternating with the two, "shared": three examples/server
// processes with --storage-backend shared-fs on one shared directory of
// this machine's disk (each shard's log there, written by one member,
// every append fdatasynced before its SETs are acknowledged, the other
// members replaying it), loaded with SharedWriters concurrent writers (2, 4,
// 8); shared_storage_8w_per_s is the writes/s at 8, beside seed 000's
// 471/842/1,320 writes/s at 2/4/8 (goal: 10× those). Beside them, the
// ceiling of this disk for the same shape: the same writers on bare
// appends with fdatasync, group-committed, one file a shard, no engine.
//
// Ratios are per repeat pair and oriented so that above 1 ours is better:
// writes/s ours/etcd, latencies etcd/ours. The report also keeps, per run,
// the error replies the cluster client's connections saw (MOVED included)
// and the members' WARN and ERROR log lines, before the kill and in all.
//
// The etcd members are the bench binary itself started again
// (raftbench.StartEtcdProcs): main, and TestMain, call
// raftbench.MaybeRunEtcdMember first.
package clusterbench
