// Package walbench is the `bench wal` benchmark: it measures the
// durable-append path of our segmented log
// (github.com/temporalstore/temporalstore-go/matrixraft/wal) side by side
// with etcd's WAL (go.etcd.io/etcd/server/v3/storage/wal) and bbolt
// (go.etcd.io/bbolt), under the same fsync policy.
//
// The matrix is payload size × appending goroutines × sync policy
// (always: Append returns after the fdatasync of its group commit;
// interval: Append returns after write(2), fdatasync every 10ms). For each
// cell the three systems run alternately (ours, etcd, bbolt, ours, …) for
// the configured repeats, each run in a fresh directory, with a warm-up
// before the measured window. Per run it records records/s, payload MB/s,
// p50/p99 Append latency (each goroutine times its own calls), fsyncs and
// records per fsync.
//
// Each peer gets its best honest configuration: etcd's WAL is driven as the
// etcd server drives it (one writer collecting everything pending into one
// Save); bbolt appends through DB.Batch with the MaxBatchDelay that served
// it best in a short calibration at the lowest and highest concurrency.
//
// Separately it fits the envelope of ours and etcd: bytes written to the
// segment files per record as fixed + slope × payload size.
//
// Results go to bench-results/wal.json (every figure as min/median/max over
// repeats, and ours-vs-peer ratios oriented so that above 1 means ours is
// better); stdout gets a table and, last, the summary line
//
//	wal: envelope_fixed_bytes=… durable_c64_ratio=… p99_ratio=… …
//
// A run fails only when a system fails (an I/O error); figures never gate.
package walbench
