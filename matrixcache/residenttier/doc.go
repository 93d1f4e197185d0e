// Package residenttier is matrixcache's resident tier: files standing in
// for the original's persistent-memory (PMEM) tier, one file per cache
// block, each holding the block in the [blockfmt] format. It offers the
// same methods as package ssdtier, with the same meaning, so the cache
// can use either through one interface.
//
// # Layout
//
// A block lives in the file
//
//	{Dir}/{h>>56:02x}/{h:016x}.cache_block
//
// where h is the xxhash64 of [blockfmt.AppendOrderedKey] of its key: 256
// subdirectories, by the hash's first byte, keep each directory small.
// The file's content is [blockfmt.Encode] of the block, nothing else.
// {Dir}/LOCK is flocked while a [Store] has the directory open. Files
// ending in ".tmp" are writes in progress.
//
// Two keys of the same hash share a file. The stored block carries its
// full key, so a read of the other key finds a key that does not match
// and is a miss, never a wrong value; and a Put of either key replaces
// the other's block (the last write of the file wins). With 64-bit hashes
// this is vanishingly rare, and for a cache it only costs a miss.
//
// # Writes and durability
//
// A write goes to a temporary file in the block's subdirectory, which is
// then renamed over the block's file. A rename is atomic, so a reader —
// and a process reopening the directory after a crash — finds the old
// block or the new one, whole, never a torn one. Open removes the
// temporary files an interrupted write leaves behind.
//
// What a write that returned survives depends on [Options.Sync]:
//
//   - false (the default, the original's pmem_block_durability = false):
//     write and rename, no fsync. The block is in the operating system's
//     page cache, which a killed process does not lose: after a process
//     crash every acknowledged write is there. A machine that stops
//     abruptly may lose recent writes — a lost block is a miss — or bring
//     back blocks deleted shortly before it stopped.
//   - true: the file is fsynced before the rename and its directory after
//     it (2 fsyncs per block), and the directory after every delete, so
//     acknowledged writes and deletes survive a machine crash.
//
// Real persistent memory is durable without a flush; these files are not,
// which is why the default matters: a cache that recovers this tier on
// start expects it complete, and should set Sync.
//
// Every block carries a CRC32C over all its bytes, checked on every read
// ([Store.Get], [Store.View], [Store.Iterate]) and at Open: a damaged file
// is reported ([blockfmt.ErrCorrupt] from Get and View) or skipped
// (Iterate, Open), counted, and deleted — never returned as a value.
//
// The last write of a key wins. Writing a block whose expiry has passed
// deletes the key.
//
// # Index and expiry
//
// The store keeps an in-memory index of its files: ordered key, file
// length, expiry and recency. Open rebuilds it by reading every file and
// verifying it ([blockfmt.DecodeHeader]), so opening costs one read of
// the whole tier. A block's expiry is in its header and is checked
// against [Options.Clock] on every read, including after a restart, so an
// expired block is never served; expired blocks met by a read are
// deleted, Open deletes every expired block, and [Store.PurgeExpired]
// does on demand. [Store.DeletePrefix] and [Store.DeleteShard] scan the
// index: files are named by hash, not in key order.
//
// # Capacity and eviction
//
// The store accounts every block as its file's length and keeps the total
// within [Options.CapacityBytes] by evicting, right after the write that
// overflowed it, the least recently used blocks (a write or a read hit
// makes a block most recently used). Access order is not persisted: Open
// ranks blocks coldest (lowest hotness in their header) first, then least
// recently written. [Options.OnEvict] receives the blocks a write
// evicts, so the cache can demote them to the SSD tier; expired blocks
// are dropped without it.
//
// # Memory-mapped reads
//
// With [Options.Mmap] a read maps the block file instead of reading it.
// [Store.View] passes its callback a value that is the mapped file itself
// (for an uncompressed value), valid until the callback returns, after
// which it is unmapped. Files are only ever replaced by rename or
// unlinked, never truncated or written in place, so a mapping stays
// intact while a concurrent write replaces the block. [Store.Get] always
// returns a copy.
package residenttier
