// Package cachebench is the `bench cache` benchmark: it replays cache
// access traces through our cache policy
// (github.com/temporalstore/temporalstore-go/matrixcache/policy) and the Go
// in-process caches a user would otherwise pick, otter v2
// (github.com/maypok86/otter/v2) and ristretto v2
// (github.com/dgraph-io/ristretto/v2), plus a plain LRU for orientation,
// and compares their hit ratios at equal capacity.
//
// The traces are the ARC paper's OLTP trace (ARC format: "start count x x"
// stands for the keys start..start+count-1), the LIRS paper's Glimpse and
// loop traces (one key a line), and a Zipf trace (s=1.0001, v=10, one
// million requests, fixed seed). Each is replayed at several capacities,
// from a cold cache: a Get, and on a miss a Set (ours: Access when the key
// is present, else Admit). Every system replays the same trace in the same
// process; within each repeat they alternate. Ristretto's sampled eviction
// is random and otter seeds its hashing at random, so every figure is
// min/median/max over the repeats.
//
// A user's own trace replaces the bundled ones with TRACE=path
// FORMAT=arc|lirs CAPACITY=n (gzip or plain text).
//
// Results go to bench-results/cache.json; stdout gets a table and, last,
// the summary line
//
//	cache: oltp1000_hit=… oltp1000_vs_otter_points=… get_vs_otter_ratio=n/a get_vs_ristretto_ratio=n/a …
//
// The throughput comparison (Get/Set ns/op, memory per entry) waits for
// the concurrent cache; until then its ratios are n/a. A run fails only
// when something cannot run; figures never gate.
package cachebench
