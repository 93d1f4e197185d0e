// Package ssdtier is matrixcache's SSD tier: cache blocks in a single bbolt
// file, one bbolt key per cache key, each value a block in the
// [blockfmt] format.
//
// # Layout
//
// Bucket "blocks" maps [blockfmt.AppendOrderedKey] of a block's key to
// [blockfmt.Encode] of the block, so the blocks of a shard, or of a shard
// and a record-key prefix, are one contiguous key range: [Store.DeleteShard]
// and [Store.DeletePrefix] are range scans. Bucket "meta" holds the file
// format version.
//
// # Writes and durability
//
// Every write — [Store.Put], [Store.PutBatch], the deletes — is queued to
// one writer goroutine, which commits whatever has queued (up to
// [Options.MaxBatch] operations, optionally waiting [Options.BatchDelay]
// for more) in one bbolt transaction: group commit. A call returns after
// the transaction holding its write has committed. By default a commit is
// fsynced (bbolt syncs the data pages and then the meta page), so a block
// whose Put returned survives the process being killed and the machine
// losing power. With [Options.NoSync] nothing is fsynced until Close: a
// killed process still loses nothing, but a machine crash may lose recent
// writes.
//
// A reader never sees a torn block. bbolt commits are atomic (copy on
// write, then a checksummed meta page), and every stored block carries a
// CRC32C over all its bytes that [Store.Get] and [Store.Iterate] verify: a
// damaged block is reported as [blockfmt.ErrCorrupt] (Get) or skipped
// (Iterate), counted, and deleted — never returned as a value.
//
// The last write of a key wins. Writing a block whose expiry has passed
// deletes the key.
//
// # Expiry
//
// A block's expiry is in its header and is checked against
// [Options.Clock] on every read, including reads after a restart, so an
// expired block is never served. Expired blocks found by Get or Iterate
// are deleted in the background; Open deletes every expired block, and
// [Store.PurgeExpired] does on demand.
//
// # Capacity and eviction
//
// The store accounts every block as its encoded length plus its key's
// length, and keeps the total within [Options.CapacityBytes] by evicting
// in the same transaction that overflowed it. Victims are chosen least
// recently used first (a write or a Get hit makes a block most recently
// used) from an in-memory index. Access order is not persisted: Open
// rebuilds the index with the coldest blocks (lowest hotness in their
// header) first in line.
//
// # Write budget
//
// [Options.WriteBytesPerSec] sets a target write rate in bytes per second
// to spare flash endurance, in the manner of CacheLib's dynamic random
// admission, with a hash of the key in place of the random draw. The store
// admits a block if its key's hash falls in an admission share out of
// [MaxBudgetShare], and adjusts the share once per one-second window of
// [Options.Clock]: it doubles after a window at or under the target, and
// shrinks in proportion to the overshoot after one over it, never to 0. A
// key is admitted or refused whatever the block's size, and the same key
// gets the same answer until the share changes. Refused writes fail with
// [ErrBudgetExceeded] and are counted; deletes are never refused. The bytes
// that count are those of the blocks committed to the file; the option's
// documentation says exactly what counts. [Stats] reports the share, the
// target and the rate observed over the last closed window. On the write
// path the budget takes at most one short lock per Put or PutBatch (none
// when unlimited) and allocates nothing.
package ssdtier
