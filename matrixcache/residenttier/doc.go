// Package residenttier is matrixcache's resident tier: a directory of files,
// one per cache block, each holding the block in the [blockfmt] format. It
// stands in for the persistent-memory (PMEM) tier of TemporalStore's Rust
// implementation ("the original" in comments below), and offers the same
// methods as package ssdtier, with the same meaning, so the cache can use
// either through one interface.
//
// [Open] a [Store] on [Options.Dir]; [Store.Put], [Store.Get],
// [Store.View], [Store.Delete], [Store.DeletePrefix], [Store.DeleteShard]
// and [Store.Iterate] work on [blockfmt.Block] values. A Store is safe for
// concurrent use; {Dir}/LOCK is flocked while one has the directory open.
//
// # Layout
//
// A block lives in {Dir}/{h>>56:02x}/{h:016x}.cache_block, where h is the
// xxhash64 of [blockfmt.AppendOrderedKey] of its key, and the file holds
// [blockfmt.Encode] of the block, nothing else. Two keys of the same hash
// share a file: the block carries its full key, so a read of the other key
// is a miss, never a wrong value, and a Put of either replaces the other's
// block. Files ending in ".tmp" are writes in progress, removed by Open.
//
// # Durability
//
// A write goes to a temporary file renamed over the block's file, so a
// reader, or a process reopening the directory after a crash, finds the
// old block or the new one, whole, never a torn one. What a write that
// returned survives depends on [Options.Sync]:
//
//   - false (the default, the original's pmem_block_durability = false):
//     no fsync. A killed process loses nothing, but a machine that stops
//     abruptly may lose recent writes (a miss) or bring back blocks
//     deleted shortly before.
//   - true: the file and its directory are fsynced on every write, and the
//     directory on every delete, so writes and deletes survive a machine
//     crash. A cache that recovers this tier on start should set it.
//
// Every block carries a CRC32C over all its bytes, checked on every read
// and at Open: a damaged file is reported ([blockfmt.ErrCorrupt] from Get
// and View) or skipped (Iterate, Open), counted, and deleted, never
// returned as a value. The last write of a key wins; writing an expired
// block deletes the key.
//
// # Index, expiry and eviction
//
// Open reads and verifies every file to rebuild an in-memory index, so
// opening costs one read of the whole tier. A block's expiry is checked
// against [Options.Clock] on every read, including after a restart, and
// expired blocks are deleted when met, at Open and by [Store.PurgeExpired].
// The total of the files' lengths is kept within [Options.CapacityBytes]
// by evicting the least recently used blocks after the write that
// overflowed it; [Options.OnEvict] receives them, so the cache can demote
// them to the SSD tier. Access order is not persisted: Open ranks blocks
// by hotness, then by age.
//
// With [Options.Mmap] a read maps the block file: [Store.View] passes its
// callback the mapped value (when uncompressed), valid until the callback
// returns. Files are only replaced by rename or unlinked, never written in
// place, so a mapping stays intact. [Store.Get] always returns a copy.
package residenttier
