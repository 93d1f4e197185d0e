// Package raftbench is `bench raft`: a 3-voter matrixraft group against a
// 3-member etcd cluster, both durable (fdatasync on) and in this one
// process, on the same disk.
//
// Each run starts a fresh cluster in a fresh directory, lets C clients
// write for a warm-up and then for the measured duration, and records
// writes per second, the p50 and p99 latency of one write, and proposals
// per fsync (writes × 3 members / fdatasyncs of the 3 logs: how many writes
// one member's fsync covered). The systems alternate, ours then etcd, for
// every cell of payload × concurrency, Repeats times over; ratios are taken
// per repeat pair and reported as median (min–max).
//
// Ours: three matrixraft.Nodes with the default options (100 ms tick,
// PreVote, CheckQuorum, durable wal.SyncAlways log per node, snapshot
// every 10,000 entries), a map state machine, writes proposed on the
// leader with Node.Propose, which returns after apply. The map is split
// into shards copied on their first write after a snapshot capture, so it
// is a matrixraft.SnapshotCapturer: the node's loop only takes the capture
// and the 26 MB of a full state are serialised beside it. Messages move over
// a transport chosen by Config.Transport: "mem" (the default) is
// matrixraft.MemNetwork, which copies every message in memory; "tcp" is
// matrixraft/tcptransport on loopback, every node on a port of its own, so
// messages are framed, checksummed and written to sockets as between
// processes (the nodes still share this process). The transports map is
// where another transport joins.
//
// etcd: go.etcd.io/etcd/server/v3/embed, three members on loopback TCP with
// their default settings (logging off), and clientv3 Put of an 8-byte key
// to the leader's endpoint, over one gRPC connection per 16 clients, as
// etcd's own benchmark tool does with --target-leader. Its fsyncs are read
// from its etcd_disk_wal_fsync_duration_seconds histogram.
//
// The two differ in what they carry: etcd also commits every write to its
// bbolt backend, while ours applies to a map; and with the default "mem"
// transport ours moves messages in memory where etcd's members talk over
// loopback TCP (BENCH_TRANSPORT=tcp evens that). The figures compare the
// two as a user embeds them.
package raftbench
