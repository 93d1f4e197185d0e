// Package storage declares what the engine needs from the layers under it:
// a Log per shard, which holds the shard's command records in order and is
// its only durable state besides checkpoints, and a RecordCache, which keeps
// records in memory in front of the logs. The engine is written against
// these interfaces alone; a program picks the implementations through
// temporalstore.Options (OpenLog, RecordCache).
//
// # Implementations
//
// Package temporalstore/storage/disk has the default ones: each log a
// matrixraft/wal log in the shard's directory, the cache a matrixcache.
// Package temporalstore/storage/raftlog replicates each shard's log
// through a matrixraft group.
// Package temporalstore/local opens an engine wired with them in one call.
// This package has in-memory reference implementations, MemLogs and
// MemCache: they follow every contract below and keep nothing across a
// process, for tests and for embedding an engine whose data may vanish.
// Package storagetest checks an implementation against the contracts.
//
// # The Log contract
//
// Records get consecutive indexes from 1 (or from the first index a log
// was created with). A log holds the records FirstIndex..LastIndex; an empty
// log has LastIndex = FirstIndex-1. Appends return once the record is as
// durable as LogOptions.Durable asks: on stable storage when it is set,
// otherwise handed to the operating system and synced within
// LogOptions.SyncInterval. A record appended and acknowledged is never
// lost or changed; one whose append failed may or may not be there after a
// restart, and the engine copes with either. After any error other than
// ErrRecordTooLarge, ErrGroupTooLarge, ErrNotLeader, ErrUnknownOutcome or
// the context's, a log refuses further appends: the engine stops writing
// to the shard. A log that implements the optional Recoverer interface
// can be brought back without a restart: the shard keeps serving reads,
// and retries Recover until the medium takes writes again.
//
// A replicated log (package storage/raftlog) also holds records its shard
// did not append, and says so through the optional Replicated interface.
//
// A log that keeps large records in files of their own (package
// storage/largelog) is a RecordFiles: the shard reads such a record's
// head for a key, and a surface sends a value from its file. A log synced
// on an interval that runs a function before each sync is a SyncHook,
// which largelog uses to sync its files with the log rather than each at
// its append.
//
// A log may be read and appended to by several goroutines at once. An
// Iterator is for one goroutine.
//
// # The RecordCache contract
//
// Records are immutable, so a cache never has a stale one: it only forgets.
// A cache may drop any record at any time; the engine reads it from the log
// then. Bytes it returns are shared and never written again.
package storage
