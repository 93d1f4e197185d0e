// Package policy holds the replacement policies of matrixcache's DRAM tier:
// data structures that decide which entries a cache shard admits and which
// it evicts. They track keys and costs only; the tier owns the map from key
// to value and calls the policy on every lookup, write and removal.
//
// # Contract
//
// Every policy implements [Policy]. Keys are 64-bit hashes of the cache
// keys. Every entry has a cost of at least 1 (its size in bytes, or 1 to
// count entries) and the policy keeps the total cost within its capacity:
//
//   - Access(key) records a lookup and reports a hit. It does not allocate.
//   - Admit(key, cost, victims) inserts or resizes an entry and evicts until
//     the total fits, appending the evicted keys to victims in eviction order
//     so the tier can demote them to the next tier. An entry larger than the
//     capacity is refused with [ErrTooLarge]; [ErrRejected] says the
//     admission policy kept the resident entries instead of the new one.
//   - Pin and Unpin protect an entry from eviction (counted pins). A pinned
//     entry still counts toward the cost; it is never a victim. When the
//     unpinned entries cannot make room, Admit returns [ErrNoRoom] without
//     evicting anything, and the tier refuses the write or spills it to the
//     next tier.
//   - Remove (invalidation, expiry) is O(1). SetCapacity evicts down.
//
// A policy is not safe for concurrent use: callers serialise access, for
// example one policy per cache shard, used under that shard's lock.
//
// Nodes live in a slice-backed arena and link into intrusive doubly linked
// lists by index; freed nodes are reused, so steady-state operation does not
// allocate beyond the victims slice the caller passes in.
//
// # TinyLFU
//
// [TinyLFU] is adaptive Window-TinyLFU, the algorithm of Caffeine and of
// otter v2, and the default DRAM policy:
//
//   - A new entry enters the admission window, an LRU that starts at 1% of
//     the capacity. The rest, the main space, is a segmented LRU: entries
//     enter its probation segment and move to the protected segment (80% of
//     the main space) on a hit; protected overflow falls back to probation.
//   - When the window overflows, its least recently used entries become
//     candidates for the main space. Each candidate is compared with the
//     probation segment's least recently used entry, and the one a
//     frequency sketch estimates as seen more often stays. Ties and losses
//     go against the candidate, except that a candidate seen at least 6
//     times wins with probability 1/128: without that jitter an attacker
//     could keep a hot entry out by inflating a victim's colliding counters
//     (hash flooding).
//   - The frequency sketch is a count-min sketch of 4-bit counters, four per
//     key, all in one 64-byte block so that a lookup touches one cache line.
//     After 10 increments per sized-for entry, every counter is halved, so
//     popularity ages. There is no doorkeeper (a bloom filter that keeps
//     first sightings out of the sketch), as in Caffeine and otter: measured
//     on the traces below, one gained 1 point on OLTP at 250 entries and 0.5
//     on Zipf at 5000, but lost 0.5 on Zipf at 500 and 1.9 on loop at 500,
//     and it costs another cache line per access.
//   - A hill climber sizes the window. Once per sample (as many requests as
//     the sketch's reset period) it compares the hit rate with the previous
//     sample's. It keeps growing the window only while the hit rate gains
//     more than half a standard error of the difference between the two
//     samples, and keeps shrinking it unless the hit rate loses more than
//     that; otherwise it reverses. The step starts at 6.25% of the capacity,
//     decays by 2% per sample, and restarts when the hit rate moves by 5
//     points or more. Caffeine and otter act on the sign of any change, but
//     at 500 entries a sample is 5,000 requests, whose hit rate varies by
//     about 0.85 points from one sample to the next on Zipf, twice what one
//     step changes: the window took a random walk that the decaying step
//     froze anywhere from 1% to half of the capacity, depending on how keys
//     collide in the sketch (a 22.6% hit ratio with the window at 20% on
//     Zipf at 500, 23.8% at 1%). With the tolerance, noise moves the window
//     toward the small end, and it grows only on a clear gain. On the traces below, OLTP
//     (recency-biased) averages a window of 23% at 1000 entries, while
//     Zipf, Glimpse and loop keep it near 1%: on a loop longer than the
//     cache, the frequency filter keeps a fixed part of the loop resident,
//     where LRU keeps none.
//   - Costs are weights: eviction continues until the total fits, and an
//     entry whose cost exceeds the capacity is refused.
//
// # SLRU
//
// [SLRU] is the segmented LRU of the original ReplacementSlru: hot, warm and
// cold lists (hot at most 20% and warm at most 40% of the capacity by
// default), promotion to warm after two hits, demotion of idle warm entries
// to cold, and victims from the cold (probationary) list first. A hit only
// sets a flag; the lists are reordered by the maintenance pass that runs on
// every Admit. Like the original it can be hash-partitioned into segments,
// each with its own lists and budget (SLRUOptions.Segments; default 1 here,
// as a cache shard already is a partition).
//
// # FIFO
//
// [FIFO] is the original ReplacementFIFO: victims leave in insertion order,
// a hit moves nothing, an overwrite keeps the key's place, and a removal
// leaves no tombstone in the queue. A hit costs one map lookup. Use it where
// reuse is not skewed (streams, write-once data, a tier whose hits a higher
// tier already absorbs) or as a baseline; on skewed workloads it is well
// below LRU (see below).
//
// # ARC
//
// [ARC] is Megiddo and Modha's Adaptive Replacement Cache, in cost units: a
// recency list T1 for entries seen once and a frequency list T2 for entries
// hit again, with ghost lists B1 and B2 remembering the keys (and costs)
// recently evicted from each. A key coming back from B1 grows T1's target
// share by the ghost's cost (scaled by the ratio of the ghost lists' costs,
// as the paper scales by their lengths), one from B2 shrinks it; victims
// come from T1 while it is above the target. The ghost lists are bounded in
// cost units (T1 and B1 within the capacity, everything within twice it),
// so a cache of small entries keeps more ghosts than one of large entries,
// never more than it could hold resident twice over. With unit costs it is
// the paper's algorithm, request for request. ARC needs no tuning, resists a
// one-time scan, and follows a workload that shifts between recency and
// frequency. On the traces below it matches or slightly beats TinyLFU on
// Zipf and on OLTP at 2000 entries, trails it on OLTP at smaller sizes, and
// falls far behind on Glimpse and loops, where TinyLFU's frequency filter
// keeps part of the loop resident. It keeps up to twice as many keys as are
// resident, where TinyLFU keeps a fixed-size sketch.
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
//
// On a hit, TinyLFU's Access costs one map lookup, one sketch block and a
// list move, and allocates nothing; Admit allocates nothing in steady state
// either, given a victims slice with room (see the package's benchmarks).
package policy
