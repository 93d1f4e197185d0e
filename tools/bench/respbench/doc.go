// Package respbench is `bench resp`: the same redis-benchmark binary
// against redis-server and against our RESP server, alternating, repeated.
//
// Two pairings: redis-server with appendonly and appendfsync everysec
// against ours on an async table (writes acknowledged once written, synced
// every 10 ms), and redis-server with appendfsync always against ours on a
// durable table (fsync before the reply). SET and GET, 50 clients, values
// of 16 B and 256 B, pipeline 1 and 16; ops/s and p50/p99 from
// redis-benchmark's CSV.
package respbench
