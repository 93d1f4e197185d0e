package storage

import (
	"container/list"
	"sync"
)

// MemCache is a RecordCache of bounded size that forgets the record least
// recently used: a reference implementation, small and obviously right,
// for tests and for programs that want no other cache.
type MemCache struct {
	limit int64

	mu    sync.Mutex
	items map[memKey]*list.Element
	lru   list.List // of *memEntry, most recent first
	stats CacheStats
}

type memKey struct{ log, index uint64 }

// memEntryOverhead is what an entry costs besides its record's bytes: the
// map slot, the list element and the entry, roughly.
const memEntryOverhead = 96

type memEntry struct {
	key memKey
	rec []byte
}

// NewMemCache returns a MemCache holding at most limitBytes of records,
// memEntryOverhead bytes of bookkeeping each included.
func NewMemCache(limitBytes int64) *MemCache {
	return &MemCache{limit: limitBytes, items: map[memKey]*list.Element{}}
}

// GetShared implements RecordCache.
func (c *MemCache) GetShared(log, index uint64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[memKey{log, index}]
	if !ok {
		c.stats.Misses++
		return nil, false
	}
	c.stats.Hits++
	c.lru.MoveToFront(el)
	return el.Value.(*memEntry).rec, true
}

// Put implements RecordCache. A record larger than the whole cache is
// declined.
func (c *MemCache) Put(log, index uint64, rec []byte) {
	size := int64(len(rec)) + memEntryOverhead
	if size > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := memKey{log, index}
	if el, ok := c.items[k]; ok {
		c.removeLocked(el)
	}
	c.items[k] = c.lru.PushFront(&memEntry{key: k, rec: rec})
	c.stats.Entries++
	c.stats.Bytes += size
	for c.stats.Bytes > c.limit {
		c.removeLocked(c.lru.Back())
		c.stats.Evictions++
	}
}

// Delete implements RecordCache.
func (c *MemCache) Delete(log, index uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[memKey{log, index}]; ok {
		c.removeLocked(el)
	}
}

func (c *MemCache) removeLocked(el *list.Element) {
	e := c.lru.Remove(el).(*memEntry)
	delete(c.items, e.key)
	c.stats.Entries--
	c.stats.Bytes -= int64(len(e.rec)) + memEntryOverhead
}

// Prefetch implements RecordCache; it does nothing.
func (c *MemCache) Prefetch(uint64, []uint64) {}

// Stats implements RecordCache.
func (c *MemCache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}
