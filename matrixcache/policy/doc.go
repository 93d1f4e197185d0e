// Package policy holds the replacement policies of matrixcache's DRAM tier:
// data structures that decide which entries a cache shard admits and which
// it evicts. They track keys and costs only; the tier owns the map from key
// to value and calls the policy on every lookup, write and removal. SLRU,
// FIFO and ARC follow the replacement policies of TemporalStore's Rust
// implementation ("the original" in comments below).
//
// # Contract
//
// Every policy implements [Policy], which states the contract in full. Keys
// are 64-bit hashes of the cache keys; every entry has a cost of at least
// 1, and the policy keeps the total within its capacity. Access records a
// lookup and reports a hit without allocating; Admit inserts or resizes an
// entry, appending the keys it evicts to victims in eviction order so the
// tier can demote them. It fails with [ErrTooLarge], [ErrNoRoom] (pinned
// entries leave no room) or [ErrInvalidCost] without evicting anything, and
// with [ErrRejected] when admission keeps the resident entries instead.
// Pin and Unpin protect an entry from eviction; Remove is O(1).
//
// A policy is not safe for concurrent use: callers serialise access, for
// example one policy per cache shard, used under that shard's lock. Nodes
// live in a slice-backed arena and are reused, so steady-state operation
// does not allocate beyond the victims slice the caller passes in.
//
// # Policies
//
//   - [TinyLFU], the default: adaptive Window-TinyLFU, as in Caffeine and
//     otter v2. A small LRU window admits new entries, a frequency sketch
//     decides which of a window victim and a main-space victim stays, and
//     a hill climber sizes the window. Best on skewed and looping traces.
//   - [SLRU]: segmented LRU with hot, warm and cold lists, promotion after
//     [SLRUOptions.PromoteHits] hits, and victims from cold first; a hit
//     only sets a flag. It can be hash-partitioned (Segments).
//   - [FIFO]: insertion order; a hit moves nothing and costs one map
//     lookup. For workloads without reuse skew, or as a baseline.
//   - [ARC]: Megiddo and Modha's Adaptive Replacement Cache, in cost units,
//     with ghost lists bounded in cost. No tuning, resists a one-time scan,
//     follows a workload that shifts between recency and frequency; keeps
//     up to twice as many keys as are resident.
//
// # Hit ratios
//
// Measured by TestHitRatios, which replays each trace through the policy as
// a cache of the given number of entries of cost 1 (admitting on a miss).
// otter v2 and ristretto v2 are their published figures (otter's charts, ±1
// point); LRU is this package's test baseline. On OLTP, ARC is within 0.2
// point of the ARC figures on otter's charts (21.5, 39 and 46).
//
//	trace                capacity  TinyLFU   SLRU    ARC   FIFO    LRU   otter  ristretto
//	ARC OLTP                  250    24.6   21.2   21.5   15.1   16.5   24.0     15.5
//	ARC OLTP                 1000    39.7   36.6   39.1   28.5   32.8   40.0     29.0
//	ARC OLTP                 2000    45.9   44.7   46.2   37.4   42.5   46.0     38.0
//	LIRS Glimpse              500    33.3    1.2    1.4    1.0    1.0   33.0     29.5
//	LIRS Glimpse             1000    50.7   11.3   21.3   11.1   11.2   50.0     47.5
//	Zipf s=1.0001, v=10       500    23.8   20.1   24.4   10.1   12.2   23.5     13.5
//	Zipf s=1.0001, v=10      5000    37.7   33.2   38.1   24.8   28.1   37.5     33.0
//	LIRS loop                 500    49.2    0.0    0.0    0.0    0.0
//	LIRS loop                1000    98.3    0.0    0.0    0.0    0.0
package policy
