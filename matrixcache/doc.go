// Package matrixcache is a multi-tier block cache for Go services: a hot DRAM
// tier, a file-backed resident tier, and an SSD tier stored in bbolt, managed
// as one cache with a single admission and eviction policy. The TemporalStore
// engine keeps its record cache in it, and any Go program that wants a cache
// larger than memory can use it on its own.
//
// Tiering, options and health rules follow TemporalStore's Rust
// implementation ("the original" in comments below).
//
//	c, err := matrixcache.New(ctx, matrixcache.Options{SSDPath: dir})
//	err = c.Put(ctx, matrixcache.KeyOf("k"), []byte("v"), matrixcache.PutOptions{TTL: time.Hour})
//	v, tier, ok, err := c.Get(ctx, matrixcache.KeyOf("k"))
//
// New builds a Cache: a DRAM tier split into Options.Shards shards, each
// with a replacement policy from package policy (Options.Policy), over the
// resident tier of package residenttier (when Options.ResidentPath is set)
// and the SSD tier of package ssdtier (when Options.SSDPath is set). The zero
// Options are a DRAM-only cache; Options.Validate reports what the cache
// will do where it differs from what was asked, and New refuses Critical
// findings. A Cache is safe for concurrent use; a DRAM hit takes no lock.
//
//   - Put writes a value to DRAM when it fits a DRAM block and the policy
//     admits it; to the resident tier when the admission decision
//     (Tiering.Decide, the original's) places it there, or DRAM did not
//     take it and the decision admits it there; and to the SSD tier when
//     the decision admits it there or DRAM did not take it. The last write
//     of a key wins across tiers: a tier the new value does not reach loses
//     its older copy. An expired value is never served, nor after a restart.
//   - Get reads DRAM, then the resident tier, then the SSD tier, and
//     refills DRAM from a lower tier's hit (and the resident tier from an
//     SSD hit DRAM refuses, when the decision places it there); Peek reads
//     without recording anything or refilling. GetShared returns the
//     cache's own buffer, never written again, instead of a copy.
//   - GetOrLoad reads through to the caller's loader, once for all the
//     concurrent misses of a key. GetBatch, PutBatch and Prefetch serve
//     runs of keys.
//   - Acquire returns a pinned Handle: its Value is the cache's buffer,
//     valid until Release, and a pinned entry is never evicted or expired.
//   - A DRAM victim is demoted to each lower tier that does not hold it
//     and admits it; the resident tier's own victims are dropped.
//   - CompareAndSwap writes only over the expected value; Delete,
//     DeletePrefix and DeleteShard invalidate every tier; Options.OnEvict
//     hears entries leaving DRAM and the resident tier.
//   - Stats is a snapshot of per-tier counters (package cacheprom exports
//     it to Prometheus); HealthReport and Cache.Health turn one into
//     findings, worst first.
//
// # Durability
//
// SSD writes are fsynced unless Options.SSDNoSync. With Options.WriteBack
// they go through a bounded queue drained in batches (a full queue makes
// the caller write directly, so nothing is dropped; Close drains it). A
// resident tier without Options.ResidentDurable is emptied by New, since
// after a machine crash its files could hold overwritten values. With
// Options.AutoRecoverOnStart, New refills DRAM from the persistent tiers.
//
// Packages policy, blockfmt (the block format and Key), cachekey, ssdtier,
// residenttier, cacheprom and topology (a consistent-hash placement ring
// for a cache cluster) are the building blocks. The module imports no other
// module of this repository; only package cacheprom imports Prometheus.
package matrixcache
