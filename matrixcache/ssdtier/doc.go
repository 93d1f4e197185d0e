// Package ssdtier is matrixcache's SSD tier: cache blocks in a single bbolt
// file, one bbolt key per cache key, each value a block in the
// [blockfmt] format. Its defaults follow the SSD tier of TemporalStore's
// Rust implementation ("the original" in comments below).
//
// [Open] a [Store]; [Store.Put], [Store.PutBatch], [Store.Get],
// [Store.Delete], [Store.DeletePrefix], [Store.DeleteShard] and
// [Store.Iterate] work on [blockfmt.Block] values. A Store is safe for
// concurrent use.
//
// # Layout
//
// Bucket "blocks" maps [blockfmt.AppendOrderedKey] of a block's key to
// [blockfmt.Encode] of the block, so the blocks of a shard, or of a shard
// and a record-key prefix, are one contiguous key range: DeleteShard and
// DeletePrefix are range scans. Bucket "meta" holds the file format
// version.
//
// # Writes and durability
//
// Every write, the deletes included, is queued to one writer goroutine,
// which commits whatever has queued (up to [Options.MaxBatch] operations,
// optionally waiting [Options.BatchDelay] for more) in one bbolt
// transaction: group commit. A call returns after the transaction holding
// its write has committed. By default a commit is fsynced, so a block
// whose Put returned survives the machine losing power; with
// [Options.NoSync] nothing is fsynced until Close, and a machine crash
// (not a killed process) may lose recent writes.
//
// A reader never sees a torn block: bbolt commits are atomic, and every
// block carries a CRC32C over all its bytes that Get and Iterate verify. A
// damaged block is reported as [blockfmt.ErrCorrupt] (Get) or skipped
// (Iterate), counted, and deleted, never returned as a value. The last
// write of a key wins; writing an expired block deletes the key.
//
// # Expiry and eviction
//
// A block's expiry is checked against [Options.Clock] on every read,
// including after a restart, so an expired block is never served; expired
// blocks found by a read are deleted in the background, Open deletes every
// expired block, and [Store.PurgeExpired] does on demand. The store keeps
// the total of encoded blocks and keys within [Options.CapacityBytes] by
// evicting, in the transaction that overflowed it, the least recently used
// blocks; access order is not persisted, and Open puts the coldest blocks
// (lowest hotness) first in line.
//
// # Write budget
//
// [Options.WriteBytesPerSec] sets a target write rate to spare flash
// endurance, in the manner of CacheLib's dynamic random admission: a key
// is admitted when its hash falls in a share of [MaxBudgetShare] that
// adapts every second to the rate observed. Refused writes fail with
// [ErrBudgetExceeded]; deletes are never refused. [Store.Stats] reports
// the share, the target and the observed rate.
package ssdtier
