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
// shards (each a mutex, a map and a replacement policy from package policy),
// over the SSD tier of package ssdtier. Options documents every default and
// Options.Validate reports what the cache will do where it differs from what
// was asked; New refuses Critical findings. Tiering.Decide is the original's
// admission decision, ported rule for rule.
//
//   - Put writes a value to DRAM when it fits a DRAM block and the policy
//     admits it, and through to the SSD tier when the admission decision
//     admits it there (or DRAM did not take it). The last write of a key wins
//     across tiers: a tier the new value does not reach loses its older copy.
//   - Get reads DRAM, then the SSD tier, and refills DRAM from an SSD hit;
//     Peek reads without recording anything or refilling. An expired value
//     is never served by any tier.
//   - A DRAM victim the SSD tier does not hold is demoted to it when the
//     admission decision admits it there at the victim's hotness.
//   - Acquire returns a pinned Handle whose Value is the cache's own buffer,
//     not a copy: valid and unchanged until Release, never to be modified.
//     A pinned entry is never evicted and never dropped by expiry.
//   - Delete, DeletePrefix and DeleteShard invalidate every tier.
//   - With Options.WriteBack, SSD writes go through a bounded queue drained
//     in batches by one goroutine; reads see queued writes, a full queue
//     makes the caller write directly (nothing is dropped), and Close drains
//     the queue.
//   - With Options.AutoRecoverOnStart, New refills DRAM from the SSD tier.
//   - Stats is a snapshot of per-tier counters.
//
// The resident tier and the cluster entry points are not built yet.
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
//   - topology: the consistent-hash placement ring with weights, node
//     states, failure domains and handoffs.
//
// # Dependencies
//
// This module depends on the standard library, go.etcd.io/bbolt,
// github.com/klauspost/compress (zstd block compression),
// github.com/cespare/xxhash/v2 (the stable ring hash) and golang.org/x/sys.
// It imports no other module of this repository.
package matrixcache
