package shard

import (
	"sync"
	"sync/atomic"
)

// recentRecords is a shard's newest string records (the records keys
// point at), kept in memory from their write until no key points at them
// any more or newer ones push them out. A write's check of the key it
// replaces and a read of a freshly written key find them here by log
// index, without the record cache's hashing, admission and eviction work
// that a put, a read and a delete per SET used to cost. A record pushed
// out while keys still point at it moves to the record cache. Safe for
// concurrent use: compaction reads records outside the shard's lock.
type recentRecords struct {
	mu   sync.RWMutex
	recs map[uint64][]byte
	// order is the indexes in the order added, from head on; dropped
	// ones stay until popped or compacted away.
	order        []uint64
	head         int
	bytes, limit int64
	pool         *RecentPool
}

// RecentPool bounds the recent records of many shards together (an
// engine's): a shard adding a record while the pool is over its limit
// pushes out its own older ones, whatever its own limit. So the shards
// hold at most the pool's limit between them, plus each one's newest
// record.
type RecentPool struct {
	used  atomic.Int64
	limit int64
}

// NewRecentPool returns a pool of limit bytes.
func NewRecentPool(limit int64) *RecentPool { return &RecentPool{limit: limit} }

// Used is the bytes the pool's shards hold.
func (p *RecentPool) Used() int64 { return p.used.Load() }

func newRecentRecords(limit int64, pool *RecentPool) *recentRecords {
	return &recentRecords{recs: map[uint64][]byte{}, limit: limit, pool: pool}
}

// grow counts n more bytes held (n < 0: fewer).
func (r *recentRecords) grow(n int64) {
	r.bytes += n
	if r.pool != nil {
		r.pool.used.Add(n)
	}
}

// overLocked reports whether r must push out records.
func (r *recentRecords) overLocked() bool {
	return r.bytes > r.limit || r.pool != nil && r.pool.used.Load() > r.pool.limit
}

// get returns the record at idx, if held.
func (r *recentRecords) get(idx uint64) ([]byte, bool) {
	r.mu.RLock()
	rec, ok := r.recs[idx]
	r.mu.RUnlock()
	return rec, ok
}

// add holds rec, the record at idx, and pushes out the oldest records
// while over the limit, handing those still held to out (the caller moves
// them to the record cache), outside r's lock.
func (r *recentRecords) add(idx uint64, rec []byte, out func(idx uint64, rec []byte)) {
	type pushed struct {
		idx uint64
		rec []byte
	}
	var outs []pushed
	r.mu.Lock()
	r.recs[idx] = rec // log indexes are never reused
	r.grow(int64(len(rec)))
	r.order = append(r.order, idx)
	// The record just added stays (it is the last in order), even alone
	// over the limit: its writer's keys are about to point at it.
	for r.overLocked() && r.head < len(r.order)-1 {
		i := r.order[r.head]
		r.head++
		if old, ok := r.recs[i]; ok {
			delete(r.recs, i)
			r.grow(-int64(len(old)))
			outs = append(outs, pushed{i, old})
		}
	}
	r.compactLocked()
	r.mu.Unlock()
	for _, p := range outs {
		out(p.idx, p.rec)
	}
}

// drop forgets the record at idx and reports whether it was held.
func (r *recentRecords) drop(idx uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.recs[idx]
	if ok {
		delete(r.recs, idx)
		r.grow(-int64(len(rec)))
		r.compactLocked()
	}
	return ok
}

// clear lets every record go, giving their bytes back to the pool.
func (r *recentRecords) clear() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.grow(-r.bytes)
	r.recs, r.order, r.head = map[uint64][]byte{}, nil, 0
}

// compactLocked keeps order's length near the records held: the popped
// prefix goes once it is half of it, and dropped indexes once they
// outnumber the held ones four to one.
func (r *recentRecords) compactLocked() {
	switch queued := len(r.order) - r.head; {
	case queued > 4*len(r.recs)+64:
		kept := r.order[:0]
		for _, i := range r.order[r.head:] {
			if _, ok := r.recs[i]; ok {
				kept = append(kept, i)
			}
		}
		r.order, r.head = kept, 0
	case r.head > 0 && r.head >= len(r.order)/2:
		r.order = append(r.order[:0], r.order[r.head:]...)
		r.head = 0
	}
}

// size is the bytes and number of records held.
func (r *recentRecords) size() (int64, int) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.bytes, len(r.recs)
}
