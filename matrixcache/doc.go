// Package matrixcache is a multi-tier block cache for Go services: a hot DRAM
// tier, a file-backed resident tier, and an SSD tier stored in bbolt, managed
// as one cache with a single admission and eviction policy.
//
// It is the block store under the TemporalStore engine, and it is built to be
// used on its own by any Go program that wants a cache larger than memory.
//
// # What this module owns
//
//   - The tiers: DRAM, file-backed resident, and SSD (go.etcd.io/bbolt).
//   - Admission control, cross-tier eviction and demotion, and read-through
//     refill of blocks that fell to a colder tier.
//   - Pinned handles, shared-buffer reads that hand out cached bytes without
//     copying, and invalidation.
//   - Asynchronous writeback with backpressure, and recovery of the
//     persistent tiers after a restart.
//   - Sharding, an SLRU store, and a cluster placement ring with handoffs and
//     failure domains.
//   - Latency and per-tier metrics.
//
// # The Cache
//
// New(ctx, Options) builds a Cache: a DRAM tier split into Options.Shards
// shards (each a mutex, a lock-free index and a replacement policy from
// package policy), over the resident tier of package residenttier (when
// Options.ResidentPath is set) and the SSD tier of package ssdtier. Options
// documents every default and Options.Validate reports what the cache will do
// where it differs from what was asked; New refuses Critical findings.
// Tiering.Decide is the original's admission decision, ported rule for rule.
//
//   - Put writes a value to DRAM when it fits a DRAM block and the policy
//     admits it; to the resident tier when the admission decision places it
//     there (or DRAM did not take it and the decision admits it there); and
//     through to the SSD tier when the decision admits it there (or DRAM did
//     not take it). The last write of a key wins across tiers: a tier the new
//     value does not reach loses its older copy.
//   - Get reads DRAM, then the resident tier, then the SSD tier, and refills
//     DRAM from a lower tier's hit (and the resident tier from an SSD hit DRAM
//     refuses, when the decision places it there); Peek reads without
//     recording anything or refilling. An expired value is never served by
//     any tier, nor after a restart. Writes reclaim expired DRAM entries,
//     earliest first, before the policy evicts live ones (see expiry.go).
//   - A DRAM hit takes no lock: the shard's index is read concurrently and
//     the hit reaches the policy through a lossy read buffer (see dram.go
//     and index.go).
//     GetShared returns the cached buffer itself and allocates nothing.
//     Prefetch loads what a run of lookups will read, so that their cache
//     misses overlap; it counts and changes nothing.
//   - GetOrLoad is a read-through to the caller's source: on a miss it runs
//     the caller's load once for all the concurrent misses of the key
//     (single flight, golang.org/x/sync), puts the value and returns it.
//   - A DRAM victim is demoted to each lower tier that does not hold it and
//     whose admission, at the victim's hotness, admits it. The resident
//     tier's own victims are dropped: what it holds is in the SSD tier too.
//   - Acquire returns a pinned Handle whose Value is the cache's own buffer,
//     not a copy: valid and unchanged until Release, never to be modified.
//     A pinned entry is never evicted and never dropped by expiry.
//     AcquireBatch pins every position of a batch and reads a repeated
//     key's lower tiers once.
//   - Delete, DeletePrefix and DeleteShard invalidate every tier.
//   - With Options.WriteBack, SSD writes go through a bounded queue drained
//     in batches by one goroutine; reads see queued writes, a full queue
//     makes the caller write directly (nothing is dropped), and Close drains
//     the queue.
//   - A resident tier without Options.ResidentDurable is emptied by New: its
//     unflushed files could hold values overwritten before a machine crash.
//   - With Options.AutoRecoverOnStart, New refills DRAM from the resident
//     tier and then the SSD tier.
//   - CompareAndSwap writes a value only if the key's current value is the
//     expected one (ErrReplaceMismatch otherwise), changing nothing when it
//     fails.
//   - GetBatch and PutBatch coalesce duplicate keys: a key's lower tiers are
//     read, and it is refilled, at most once per GetBatch, and PutBatch
//     writes each key once, with its last item.
//   - Options.OnEvict (or SetEvictionCallback) hears entries leaving DRAM
//     and the resident tier, with the cause (evicted for room, or
//     expired), after the cache's locks are released; SetAccessRecorder
//     hears each Put, Get and Delete (codes 1, 2, 3).
//   - Stats is a snapshot of per-tier counters; package cacheprom exports it
//     to Prometheus. HealthReport turns a snapshot into findings (the
//     original's health rules that apply), worst first; Cache.Health
//     reports the cache's own.
//
// # Packages
//
// The building blocks are packages of their own:
//
//   - policy: replacement policies for a tier — adaptive W-TinyLFU (the
//     default) and SLRU — with pins and weighted entries.
//   - blockfmt: the checksummed on-disk block format and the cache key.
//   - ssdtier: the SSD tier on bbolt, with group commit, TTL, eviction and an
//     SSD write budget.
//   - residenttier: the resident tier, one checksummed file per block,
//     written by rename, optionally read through mmap.
//   - cacheprom: a Prometheus collector over Cache.Stats.
//   - topology: the consistent-hash placement ring with weights, node
//     states, failure domains and handoffs.
//
// # Dependencies
//
// This module depends on the standard library, go.etcd.io/bbolt,
// github.com/klauspost/compress (zstd block compression),
// github.com/cespare/xxhash/v2 (the stable ring hash) and golang.org/x/sys. Only package cacheprom imports
// github.com/prometheus/client_golang. It imports no other module of this
// repository.
package matrixcache
