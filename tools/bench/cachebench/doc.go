// Package cachebench is the `bench cache` benchmark. Its hit-ratio section
// replays cache access traces through our matrixcache.Cache (DRAM tier
// alone, one shard, every key costing the same bytes so that the capacity
// holds exactly that many entries) and the Go in-process caches a user
// would otherwise pick, otter v2 (github.com/maypok86/otter/v2) and
// ristretto v2 (github.com/dgraph-io/ristretto/v2), and compares their hit
// ratios at equal capacity. Two references run beside them: our DRAM
// tier's policy alone (matrixcache/policy's TinyLFU behind a map, told of
// every access, every cost 1), which the Cache should reproduce, and a
// plain LRU for orientation.
//
// The traces are the ARC paper's OLTP trace (ARC format: "start count x x"
// stands for the keys start..start+count-1), the LIRS paper's Glimpse and
// loop traces (one key a line), and a Zipf trace (s=1.0001, v=10, one
// million requests, fixed seed). Each is replayed at several capacities,
// from a cold cache: a Get, and on a miss a Set (ours: GetShared, and Put
// on a miss; the policy alone: Access when the key is present, else
// Admit). Every system replays the same trace in the same
// process; within each repeat they alternate. Ristretto's sampled eviction
// is random and otter seeds its hashing at random, so every figure is
// min/median/max over the repeats. Each cell also shows Belady's offline
// optimum (evict, or leave out, the key requested again farthest in the
// future), the most any policy can hit on that trace at that capacity: it
// says how much room each system leaves, and a goal of beating a peer by
// more than the peer's distance to it is reported as unattainable.
//
// A user's own trace replaces the bundled ones with TRACE=path
// FORMAT=arc|lirs CAPACITY=n (gzip or plain text).
//
// Three more sections run in the same process, after the hit ratios
// (SECTIONS=hit,throughput,memory,ssd picks them). The systems of each
// alternate within every repeat, as above.
//
//   - throughput: our matrixcache.Cache (DRAM only; GetShared and Put with
//     precomputed keys) against otter and ristretto, all holding the same
//     65,536 records "key-000000"… with 64-byte values, prefilled so that
//     every Get hits. Two mixes, 100% Get and 75/25 Get/Set, on Zipf key
//     streams (s=1.0001) pre-generated per goroutine, at 2 and 8
//     goroutines (THREADS). Each run is fixed-duration; it reports wall
//     ns/op over all operations, ops/s, and allocs/op from the Mallocs
//     delta. Ratios are ops/s ours/peer per paired repeat.
//   - memory: heap bytes per entry with one million entries (HeapAlloc
//     after the inserts and a GC, minus before the cache was built),
//     ours, otter and ristretto, beside the payload (key + value).
//   - ssd: our Cache with DRAM at 10% of a trace's footprint, without and
//     with an SSD tier that holds the rest, replaying oltp, gli and zipf
//     as a read-through cache (a miss Puts the key); hit ratios from
//     DRAM, from SSD and in total.
//
// Results go to bench-results/cache.json; stdout gets the tables and,
// last, the summary line
//
//	cache: oltp1000_hit=… oltp1000_vs_otter_points=… get_vs_otter_ratio=… get_vs_ristretto_ratio=… …
//
// where the get ratios are the 100% Get mix at 8 goroutines. A run fails
// only when something cannot run; figures never gate.
package cachebench
