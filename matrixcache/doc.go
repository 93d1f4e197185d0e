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
// The planned entry points are New(Options), NewSharded and Topology.
//
// # Packages
//
// The building blocks have landed as packages of their own; the Cache that
// composes them (this package's New, NewSharded) has not yet:
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
