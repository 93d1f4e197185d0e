// Package shard is one shard of the engine: its log, its resident index and
// the state machine that applies the log to the index.
//
// The log (a storage.Log, opened by Options.OpenLog) is the value store. A
// write is a command record (package command) appended to the log; once
// the log has made it durable (or written it, in async mode) the shard
// applies it, which points the key's index entry at the record, and only
// then acknowledges it. A read finds the key's entry, reads the record it
// points at (the key is not held in memory, so the record's key is
// compared with the one asked for) and returns the value's bytes from it.
// Open rebuilds the index by replaying the log, judging expiry by each
// record's own time.
//
// Checkpoint writes an image of the index (stamped with the shard's id and
// routing range, CRC32C-checked, written to a temporary file, fsynced,
// renamed, the directory fsynced); Open starts from the newest image that
// checks out and replays the log after it. A damaged image is skipped for
// an older one, or the whole log while its front has not been reclaimed;
// an image of an unknown format or another stamp fails the open.
//
// Hashes, sets, sorted sets and lists are native objects (package object)
// held in memory and logged as their effects; past the Budget of
// Options.Collections, the least recently used are spilled to the log as
// images and served from there (Spill). Compact moves the live values and
// images out of old segments so that they can go; ReclaimLog drops the
// segments nothing needs any more.
//
// A Shard is safe for concurrent use. Writers append without the shard's
// lock, so the log batches concurrent appenders into one write and one
// fsync, and then apply their records in log order under the lock; reads
// share a read lock.
//
// A storage fault (the log failed a write or a sync: a full disk, a
// failing device) makes the shard refuse writes and keep serving reads; a
// log that is a storage.Recoverer is brought back by the shard itself,
// cutting the records of the appends that failed, once the disk takes
// writes again (fault.go).
//
// A write's context bounds its wait for the append gate (held exclusively
// by read-modify-writes, Exclusive and Freeze): when it ends first, the
// write returns its error and nothing is written. Once the log has taken
// the record, the write is applied whatever the context says, since
// replay would apply it: memory always holds what recovery rebuilds.
package shard
