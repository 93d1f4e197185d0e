// Package wal is a durable, segmented, append-only log of opaque records
// addressed by a contiguous uint64 index. It is the log under matrixraft's
// Storage and Host, and under the TemporalStore engine's shard logs.
//
// # Basics
//
// Open a directory with [Open]; append with [Log.Append], [Log.AppendBatch] or,
// all or nothing across a crash, [Log.AppendGroup];
// read back with [Log.Read] or an [Iterator]; reclaim the front with
// [Log.TruncateFront]; drop a suffix (as Raft does on conflict) with
// [Log.TruncateBack]; restart numbering (as after a Raft snapshot) with
// [Log.Reset].
//
//	l, err := wal.Open(dir, wal.Options{Sync: wal.SyncAlways})
//	defer l.Close()
//	i, err := l.Append(ctx, []byte("record"))
//	rec, err := l.Read(i)
//
// # Durability and group commit
//
// Concurrent Append callers are batched: the first caller to find no write in
// progress becomes the leader, writes every pending frame in one write(2) and,
// under [SyncAlways], one fdatasync(2); the others wait for it. An Append under
// SyncAlways returns only after the batch holding its record is on stable
// storage. Under [SyncInterval] it returns once the record reaches the
// operating system and a background goroutine syncs every
// [Options.SyncInterval]; [Log.Sync] forces a sync. [SyncNever] is for tests.
// Under SyncAlways the active segment is written with O_DIRECT (see
// [Options.NoDirectIO]). A record of at least [Options.CompressMinSize]
// bytes is stored compressed (zstd, or S2 with [CompressionFast]) when that
// makes it smaller.
//
// A failed write or fdatasync makes the log fail: every later append returns
// the same error, because after a failed fsync the kernel may have dropped
// the dirty pages and retrying would report success for lost data. Reads go
// on. [Log.Recover] brings a failed log back without closing it: it cuts the
// records after the last one its caller acknowledged (their appends failed),
// checks the records written since the last successful fdatasync against the
// files and writes them again before syncing, and takes appends again.
//
// # Recovery
//
// Each record is a CRC32C-checked frame in a segment file named after its
// first index; a segment is synced before the next one is started, so only
// the last segment can hold a torn write. Open reads and verifies every
// segment. In the last segment, a damaged frame followed by nothing but
// zeros (or the end of the file) and by no other valid frame is a torn
// write: no record at or after it can have been acknowledged, so it is
// truncated away and logged. Damage anywhere else (a bad checksum in an
// earlier segment, a valid record after a damaged one, a gap in the
// indices, an unknown format version) makes Open fail with a
// [*CorruptionError] naming the segment and offset; nothing is skipped
// silently. A log that ends inside an [Log.AppendGroup] group loses the
// whole group at Open: a group is crash-atomic. [Options.RepairTail] lets
// an operator accept losing the tail of the last segment after, for
// example, a power failure that reordered writes.
//
// # Concurrency
//
// A Log is safe for concurrent use. Reads never block on appends except
// briefly while a truncation rearranges segments. An [Iterator] is for one
// goroutine. A LOCK file held with flock(2) keeps a second process (or a
// second Open in this one) out of the directory.
package wal
