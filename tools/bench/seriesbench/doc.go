// Package seriesbench is `bench series`: the temporal models against
// redis-server doing the same work the way Redis users do it, over the
// same client (go-redis), in one run, alternating. Ours is examples/server
// built from the repository and run as its own process, as redis-server
// is. Its async table, the one Redis with appendfsync everysec is measured
// against, fsyncs every second as everysec does (--sync-interval; the
// server's own default is 10 ms).
//
//   - Window read: 100 points of a 10,000-point feature series (FQUERY)
//     against ZRANGEBYSCORE ... WITHSCORES on a sorted set of the same
//     points.
//   - Count in the last hour: record an event and read the last hour's
//     count in one round trip — ours HSETANDGET (one command), Redis the
//     common pattern of per-minute bucket keys: INCR and EXPIRE of this
//     minute's key and MGET of the last 60, pipelined, summed by the
//     client.
//   - Aggregate over 10,000 points: the rollup ladder against a scan of
//     the points, in process.
//   - Durable append throughput: FAPPEND of events of 1,024 entities on a
//     durable table, beside ZADD on a redis-server with appendfsync always.
//
// Both systems' replies are decoded by go-redis's typed commands: Redis's
// by its methods (ZRangeByScoreWithScores, Incr, Expire, MGet, ZAdd), ours
// by the same kind of command built for a verb go-redis has no method for
// (redis.NewKeyValueSliceCmd for FQUERY's [timestamp, value] pairs,
// NewIntCmd, NewStatusCmd) and run with Client.Process, as a Go service
// calling us would. The generic Client.Do would decode every point into
// interface values, several allocations a point, where Redis's side gets
// one.
//
// Each run also records each server's CPU time per operation (all its
// threads, from /proc), since the load generator shares the machine's
// cores: where they are few, the client's own cost per reply is in both
// systems' throughput, and the server CPU ratio shows what the servers
// alone spend. The load generator's own CPU time per operation is
// recorded beside it (client µs): on two cores, a case whose replies cost
// the client more than the server cannot show the servers' full ratio.
//
// With --split true (BENCH_SPLIT) the servers run on the first half of
// the machine's CPUs and the load generator on the rest; by default all
// share every CPU.
//
// The last line is "series: window_vs_redis_ratio=... counter_vs_redis_ratio=...
// rollup_speedup_ratio=... window_server_cpu_ratio=..." and more.
package seriesbench
