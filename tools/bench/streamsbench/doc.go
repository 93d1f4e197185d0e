// Package streamsbench is `bench streams`: Redis streams and pub/sub on our
// RESP server (ferricstore, served by examples/server) against
// redis-server 7 and, for appends, NATS JetStream.
//
// Ours is examples/server, built from the repository and run as its own
// process, on a fresh data directory for every run: durable by default
// (every XADD acknowledged after fsync, group commit across connections)
// or --async with --sync-interval 1s. Redis runs with appendonly and
// appendfsync always (durable) or everysec (async), also fresh for every
// run. JetStream is tools/natsbench, a module of its own (its
// dependencies stay out of tools/go.mod) built with GOWORK=off and run as
// a subprocess per run: an embedded nats-server with a file-backed stream,
// SyncAlways (durable) or its default sync (async: every 2 minutes), and
// its publishers in the same process, over loopback TCP.
//
// Workloads:
//
//   - xadd_durable and xadd_async: 50 connections at pipeline 1, each
//     sending XADD stream:{c mod 12} * f <128 random bytes> (12 streams)
//     and waiting for the reply, measured for 3 s after a 500 ms warm-up;
//     XADD/s and p50/p99 latency. JetStream: 50 publishers, each on its own
//     connection, publishing 128 B to subject s.<c mod 12> of one stream
//     and waiting for the PubAck.
//   - consume: 1,000,000 entries of 128 B preloaded with pipelined XADD,
//     XGROUP CREATE s g 0, then 4 connections loop XREADGROUP GROUP g c<i>
//     COUNT 100 STREAMS s > and XACK of the IDs read until the stream is
//     drained; entries read and acknowledged per second, and p50/p99 of
//     one round (XREADGROUP and XACK). Durable.
//   - fanout8_p1 and fanout8_p64: 8 connections SUBSCRIBE ch, one more
//     publishes PUBLISH ch <256 B> at pipeline depth 1 (50,000 messages)
//     and 64 (64 written, then 64 replies read; 200,000 messages). Each
//     payload carries its sequence number and its send time, so every
//     subscriber checks it received every message in order (a gap is an
//     error, not a figure) and records each delivery's latency.
//     Deliveries/s = 8 × messages over the time from the first send to
//     the last delivery at the slowest subscriber.
//
// Ours and redis are driven by the same client, a small RESP2
// reader/writer over bufio in this process, so the client's cost per
// request is the same for both. Every ratio is ours/peer (above 1: ours is
// better), formed per repeat pair and reported as its median and min..max
// (benchkit.RatioSpread); the repeats alternate ours, redis, jetstream
// (benchkit.Alternate). BENCH_QUICK runs 1 s windows, 50,000 entries, a
// fifth of the messages and 2 repeats. The last line of stdout is
//
//	streams: xadd_durable_vs_redis_ratio=... xadd_durable_vs_jetstream_ratio=... consume_vs_redis_ratio=... fanout8_vs_redis_ratio=... ...
//
// where fanout8_vs_redis_ratio is the lower of the pipeline 1 and 64
// medians.
package streamsbench
