package disk

import (
	"context"
	"encoding/binary"

	"github.com/temporalstore/temporalstore-go/matrixcache"
	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// recordNamespace is the cache namespace of log records.
const recordNamespace = blockfmt.NamespaceOplog

// prefetchBatch is how many keys a Prefetch builds on the stack.
const prefetchBatch = 64

// RecordCache is a storage.RecordCache over a matrixcache.Cache, which may
// be shared with other users: its keys are in a namespace of their own.
type RecordCache struct{ c *matrixcache.Cache }

// NewRecordCache returns a RecordCache over c. The caller closes c, after
// the engine using it.
func NewRecordCache(c *matrixcache.Cache) *RecordCache { return &RecordCache{c: c} }

// Cache is the matrixcache under r, for its metrics.
func (r *RecordCache) Cache() *matrixcache.Cache { return r.c }

// key is the cache key of record index of log: the log id as the key's
// shard, the index (8 bytes, big endian) as its record.
func key(log, index uint64) blockfmt.Key {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], index)
	return blockfmt.Key{Shard: log, Record: string(b[:]), Namespace: recordNamespace}
}

// GetShared implements storage.RecordCache.
func (r *RecordCache) GetShared(log, index uint64) ([]byte, bool) {
	v, _, ok, err := r.c.GetShared(context.Background(), key(log, index))
	return v, ok && err == nil
}

// Put implements storage.RecordCache.
func (r *RecordCache) Put(log, index uint64, rec []byte) {
	_ = r.c.Put(context.Background(), key(log, index), rec, matrixcache.PutOptions{})
}

// Delete implements storage.RecordCache.
func (r *RecordCache) Delete(log, index uint64) {
	_, _ = r.c.Delete(context.Background(), key(log, index))
}

// Prefetch implements storage.RecordCache.
func (r *RecordCache) Prefetch(log uint64, indexes []uint64) {
	var keys [prefetchBatch]blockfmt.Key
	for len(indexes) > 0 {
		n := min(len(indexes), prefetchBatch)
		for i, idx := range indexes[:n] {
			keys[i] = key(log, idx)
		}
		r.c.Prefetch(keys[:n])
		indexes = indexes[n:]
	}
}

// Stats implements storage.RecordCache: the DRAM tier's counters.
func (r *RecordCache) Stats() storage.CacheStats {
	d := r.c.Stats().DRAM
	return storage.CacheStats{Hits: d.Hits, Misses: d.Misses, Evictions: d.Evictions, Entries: d.Entries, Bytes: d.Bytes}
}
