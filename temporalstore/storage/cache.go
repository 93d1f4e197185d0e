package storage

// RecordCache holds log records in memory in front of the logs, keyed by a
// log's id (one per shard, stable across restarts) and a record's index.
// It is shared by every shard and safe for concurrent use.
type RecordCache interface {
	// GetShared returns the record, if held. The bytes are the cache's
	// own: the caller must not modify them, and they never change.
	GetShared(log, index uint64) ([]byte, bool)
	// Put offers the record to the cache, which may keep rec itself: the
	// caller never modifies it afterwards. The cache may decline it.
	Put(log, index uint64, rec []byte)
	// Delete forgets the record, whose index no key points at any more.
	Delete(log, index uint64)
	// Prefetch hints that GetShared of these records follows, so that a
	// cache can overlap its memory loads. It may do nothing.
	Prefetch(log uint64, indexes []uint64)
	// Stats returns the cache's counters.
	Stats() CacheStats
}

// CacheStats are a RecordCache's counters since it was made.
type CacheStats struct {
	Hits, Misses, Evictions int64
	// Entries and Bytes are what the cache holds now (its bookkeeping
	// included in Bytes, as far as it knows it).
	Entries, Bytes int64
}
