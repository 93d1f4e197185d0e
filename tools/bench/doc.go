// Command bench runs the benchmarks that compare TemporalStore's modules
// with the peers a user would otherwise pick, side by side in one process.
//
// Usage:
//
//	bench <name> [flags]
//	bench --help
//
// Benchmarks:
//
//	wal   our segmented log (matrixraft/wal) vs etcd's WAL and bbolt:
//	      durable-append throughput, latency and fsync batching over
//	      payload size × goroutines × sync policy, plus the per-record
//	      byte envelope.
//	cache hit ratios of matrixcache's W-TinyLFU policy vs otter v2,
//	      ristretto v2 and LRU on the OLTP, Glimpse, loop and Zipf traces
//	      (or the user's own: TRACE=path FORMAT=arc|lirs CAPACITY=n).
//
// Each benchmark writes bench-results/<name>.json at the repository root (the
// directory holding go.work), prints a table, and prints as its last line
// `<name>: key=value ...`. Progress goes to stderr. BENCH_QUICK=1 runs a
// reduced, still side-by-side version in under a minute. Run it from the
// tools module with the workspace off, so the peers' dependencies stay out
// of the library modules:
//
//	cd tools && go run ./bench wal
//
// `bench --help` lists every flag and environment variable.
package main
