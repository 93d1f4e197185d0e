// Package soakbench is `bench soak`: the real server (examples/server,
// built from this checkout and run as its own process on a fresh data
// directory) under a steady mixed load for a long time, checked for the
// two ways a server degrades when left running: memory that keeps growing
// and latency that creeps up. It is a stability check, not a throughput
// benchmark: the load is offered at a fixed rate (--rate requests/s,
// meant to keep the machine 30-50 % busy), not flat out.
//
// The server runs as it ships: durable commits (a write is acknowledged
// after fsync; --async turns the default table asynchronous) and
// maintenance every second (TTL expiry, trimming, checkpoints). The load
// is five classes, each paced by its own goroutines (--workers each):
//
//   - kv: GET, SET (half with a TTL) and DEL over a bounded key space,
//     RESP through go-redis;
//   - features: FAPPEND with MAXAGE (each series keeps its last minute),
//     FQUERY of the last ten seconds and FAGG sum of the last minute;
//   - counters: INCRBY, QUOTATAKE (a quota per key and second, the key
//     given a one-minute TTL by EXPIRE NX in the same round trip: a
//     quota keeps every bucket it was taken in) and HSETANDGETOPT (a
//     per-minute counter with a TTL, read back over the last hour);
//   - http: POST /batch_execute of five commands (set with a TTL, get,
//     incr_by, fappend with max_age_ms, fagg);
//   - objects: S3 PutObject and GetObject of 16 KiB objects over a bounded
//     key space, through aws-sdk-go-v2 against the server's S3 port.
//
// Every key space is bounded and every series trimmed, so a healthy
// server's memory plateaus. Clients do not retry: every failed request
// counts as an error.
//
// Every sample interval (10 s; shorter for runs under 200 s) the run
// records the server's RSS (/proc/<pid>/status VmRSS), its CPU and this
// process's, the disk space of its data directory, and per class the
// requests, the errors and the p99 latency (send to reply, in an HDR
// histogram) of that interval, and logs its progress. The verdict gives
// the mean CPU after warm-up as a share of the machine, to tell whether
// the rate drove it as hard as meant.
//
// # Bounds
//
// The first part of the run is warm-up: two minutes, or a fifth of a
// run shorter than ten minutes. The rest is cut into windows: five
// minutes each when it is at least fifteen minutes long (a short last
// window joins the one before), else thirds. The run passes when
//
//   - the RSS of every sample after warm-up is at most --rss-growth (1.2)
//     times the RSS at the end of warm-up;
//   - for every class, the p99 of every window after the first is at most
//     --p99-growth (1.5) times the first window's (the baseline); a
//     baseline under --p99-floor (1 ms) counts as the floor, so that
//     scheduling noise on sub-millisecond latencies is not a regression;
//   - no request failed.
//
// # Output
//
// bench-results/soak-<UTC time>.json holds the configuration, every
// sample, the windows and the verdict; bench-results/soak-<UTC time>.png
// beside it plots RSS, p99 per class and requests/s over time, one panel
// each. stdout gets the verdict as one JSON object and, last, the line
//
//	soak: minutes=30 ops=… errors=0 rss_warm_mb=… rss_max_mb=… rss_ratio=… p99_ratio_max=… class=kv ok=true
//
// and the command exits non-zero when a bound is broken.
package soakbench
