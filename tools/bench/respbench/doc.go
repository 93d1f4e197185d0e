// Package respbench is `bench resp`: the same redis-benchmark binary
// against redis-server and against our RESP server, alternating, repeated.
//
// Two pairings: redis-server with appendonly and appendfsync everysec
// against ours on an async table (writes acknowledged once written, synced
// every second, the window everysec keeps: --sync-interval, whose server
// default is 10 ms), and redis-server with appendfsync always against ours on a
// durable table (fsync before the reply). Ours is examples/server, built
// from the repository and run as its own process with its defaults, as a
// user runs it and as redis-server runs. SET and GET, 50 clients, values
// of 16 B and 256 B, pipeline 1 and 16; ops/s and p50/p99 from
// redis-benchmark's CSV. Each size's SETs run before its GETs, so the GETs
// read values of their row's size.
//
// Beside the async pairing runs a null server (benchkit.NullServer, Linux): one
// epoll loop in the benchmark's process that parses each request and
// replies (+OK, or a value of the row's size to GET) and does nothing
// else. Its ops/s over Redis's (null_set_p1_ratio, null_get_p1_ratio) is
// about the most any server's ratio can be with this client on this
// machine, within the spread of single runs:
// where the client and the kernel's loopback work take most of the CPU,
// as at pipeline 1 on two shared cores, that bound is near 1.
//
// For ours the report also gives the server's own time per call, from its
// per-command histograms (CONFIG RESETSTAT before each run, INFO
// commandstats and latencystats after): mean, p50 and p99, beside
// redis-benchmark's p99, so a tail can be told apart as the command's or
// as waiting around it. --procs (BENCH_PROCS) sets our server's GOMAXPROCS.
//
// With --split true (BENCH_SPLIT) the servers run on the first half of the
// machine's CPUs and redis-benchmark on the rest (benchkit.Split), and our
// server gets GOMAXPROCS for its CPUs (Go reads the affinity): where
// redis-benchmark shares every core with a server whose threads use them
// all, the kernel takes its core from it at random, and the requests it
// has in flight meanwhile count as the server's latency. By default all
// share every CPU, as a user running both on one machine would.
package respbench
