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
// # Dependencies
//
// This module depends only on the standard library, go.etcd.io/bbolt and
// golang.org/x/sys. It imports no other module of this repository.
//
// The implementation has not landed yet; this package holds only its
// documentation.
package matrixcache
