// Command natsbench is the NATS JetStream peer of `bench streams`
// (tools/bench/streamsbench): an embedded nats-server with JetStream on
// file storage, and publishers that publish to one of its streams, in one
// process, printing one JSON object of figures on stdout.
//
// It is a module of its own, outside tools/go.work, so that nats-server's
// dependencies never enter the version selection of tools/ or of the
// library modules; streamsbench builds it with GOWORK=off and runs it as a
// subprocess, once per repeat, on a fresh store directory.
//
// The workload mirrors XADD at pipeline 1: --publishers goroutines, each
// with its own connection to the server over loopback TCP, each publishing
// a --payload byte message (incompressible) to subject s.<i mod
// --subjects> with a synchronous JetStream Publish, which waits for the
// stream's PubAck before the next. --sync always sets the server's
// SyncAlways (JetStream's "sync_interval: always": every write is synced
// before it is acknowledged); --sync default leaves the server's default
// (acknowledged once written, synced every 2 minutes).
//
// After --warmup of unmeasured load, it measures for --duration (counting
// the publishes that complete inside the window) or, with --count, until
// that many publishes have completed. Output:
//
//	{"system":"jetstream","sync":"always","publishers":50,...,
//	 "count":41234,"seconds":3,"ops_per_s":13744.7,"p50_us":3512,"p99_us":9120}
//
// Usage:
//
//	cd tools/natsbench && GOWORK=off go run . --dir /tmp/js --sync always --duration 3s
package main
