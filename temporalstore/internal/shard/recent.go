package shard

import (
	"sync"
	"sync/atomic"
	"unsafe"
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
	mu sync.RWMutex
	// recs.at(i) is the record at log index base+i (nil: not held), for
	// i from head up to the newest added: a read is an index, not a hash
	// lookup, and the oldest are pushed out from the front. Log indexes
	// only grow, so the span is contiguous; each slot in it counts
	// slotBytes against the limit, so gaps (indexes of other records)
	// cannot grow it unbounded.
	recs         slotChunks
	base         uint64
	head         int
	held         int
	bytes, limit int64
	pool         *RecentPool
}

// recentSlot is a record of the span and its command count (which lets a
// command located by offset be read without the record's header).
type recentSlot struct {
	rec  []byte
	cmds int
	// refs counts the index entries pointing at the record when more
	// than one does (0 or 1: one), as the shard's recordRefs does for
	// records not held here.
	refs int32
}

// slotBytes is what a slot of the span costs besides its record.
const slotBytes = int(unsafe.Sizeof(recentSlot{}))

// slotChunks is the span's slots in chunks of slotsPerChunk: it grows by a
// chunk and lets whole chunks go from the front, so no add copies the span.
// A span of a 16 MiB limit holds half a million small records: growing or
// compacting one array that size copied it under the shard's lock, which
// held writers up for 45-96 ms.
type slotChunks struct {
	chunks [][]recentSlot
	n      int // slots in use, from position 0 of chunks[0]
}

// slotsPerChunk is a chunk's slots (128 KiB of them).
const slotsPerChunk = 4096

func (c *slotChunks) len() int { return c.n }

func (c *slotChunks) at(i int) *recentSlot {
	return &c.chunks[i/slotsPerChunk][i%slotsPerChunk]
}

// push adds gap empty slots, then s, at the end. Chunks are zero when
// added, and slots past n are never written, so the gap's slots are empty.
func (c *slotChunks) push(gap int, s recentSlot) {
	c.n += gap + 1
	for len(c.chunks)*slotsPerChunk < c.n {
		c.chunks = append(c.chunks, make([]recentSlot, slotsPerChunk))
	}
	*c.at(c.n - 1) = s
}

// restart empties the chunks. When every slot is empty already (the span
// held nothing) the first chunk is kept for reuse: a shard whose records
// all go before the next comes restarts its span on every add.
func (c *slotChunks) restart(allEmpty bool) {
	if !allEmpty || len(c.chunks) == 0 {
		*c = slotChunks{}
		return
	}
	clear(c.chunks[1:])
	c.chunks, c.n = c.chunks[:1], 0
}

// dropFront lets go the whole chunks before position head and returns how
// many slots that removed from the front.
func (c *slotChunks) dropFront(head int) int {
	k := head / slotsPerChunk
	if k == 0 {
		return 0
	}
	clear(c.chunks[:k])
	c.chunks = c.chunks[k:]
	if cap(c.chunks) > 2*len(c.chunks)+16 {
		c.chunks = append([][]recentSlot(nil), c.chunks...)
	}
	c.n -= k * slotsPerChunk
	return k * slotsPerChunk
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
	return &recentRecords{limit: limit, pool: pool}
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

// get returns the record at idx and its command count, if held.
func (r *recentRecords) get(idx uint64) ([]byte, int, bool) {
	r.mu.RLock()
	slot, ok := r.getLocked(idx)
	r.mu.RUnlock()
	return slot.rec, slot.cmds, ok
}

func (r *recentRecords) getLocked(idx uint64) (recentSlot, bool) {
	i := idx - r.base // wraps for idx < base: then out of range
	if i < uint64(r.head) || i >= uint64(r.recs.len()) {
		return recentSlot{}, false
	}
	slot := *r.recs.at(int(i))
	return slot, slot.rec != nil
}

// add holds rec, the record at idx, and pushes out the oldest records
// while over the limit, handing those still held to out with their slots
// (command and entry counts; the caller moves them to the record cache),
// outside r's lock.
// Writers add in about log order, not exactly: an index inside the span
// fills its empty slot, one before it goes straight to out.
func (r *recentRecords) add(idx uint64, rec []byte, cmds int, out func(idx uint64, slot recentSlot)) {
	type pushed struct {
		idx  uint64
		slot recentSlot
	}
	var outs []pushed
	r.mu.Lock()
	end := r.base + uint64(r.recs.len())
	switch empty := r.head == r.recs.len(); {
	case !empty && idx < r.base+uint64(r.head):
		// Before the span: straight out, not held.
		r.mu.Unlock()
		out(idx, recentSlot{rec: rec, cmds: cmds})
		return
	case !empty && idx < end:
		slot := r.recs.at(int(idx - r.base))
		if slot.rec != nil { // kept twice: replaced, its count kept
			r.held--
			r.grow(-int64(len(slot.rec)))
		}
		*slot = recentSlot{rec: rec, cmds: cmds, refs: slot.refs}
		r.grow(int64(len(rec)))
	case empty || idx-end > uint64(r.limit/int64(slotBytes)):
		// Empty, or past a gap (records strings do not point at) wider
		// than the limit: whatever is held goes, and the span starts
		// at idx.
		for i := r.head; i < r.recs.len(); i++ {
			if old := r.recs.at(i); old.rec != nil {
				outs = append(outs, pushed{r.base + uint64(i), *old})
			}
		}
		r.grow(-r.bytes)
		r.held = 0
		r.recs.restart(empty)
		r.base, r.head = idx, 0
		r.recs.push(0, recentSlot{rec: rec, cmds: cmds})
		r.grow(int64(len(rec) + slotBytes))
	default:
		gap := idx - end
		r.recs.push(int(gap), recentSlot{rec: rec, cmds: cmds})
		r.grow(int64(len(rec)) + int64(gap+1)*int64(slotBytes))
	}
	r.held++
	// The newest record stays, even alone over the limit: its writer's
	// keys are about to point at it.
	for r.overLocked() && r.head < r.recs.len()-1 {
		at := r.base + uint64(r.head)
		if old := r.popLocked(); old.rec != nil {
			outs = append(outs, pushed{at, old})
		}
	}
	r.compactLocked()
	r.mu.Unlock()
	for _, p := range outs {
		out(p.idx, p.slot)
	}
}

// popLocked lets the oldest slot go and returns it (its rec nil if it held
// none).
func (r *recentRecords) popLocked() recentSlot {
	slot := r.recs.at(r.head)
	old := *slot
	*slot = recentSlot{}
	r.head++
	n := int64(slotBytes)
	if old.rec != nil {
		r.held--
		n += int64(len(old.rec))
	}
	r.grow(-n)
	return old
}

// addRefs counts n more entries pointing at the record at idx (beyond its
// first) and reports whether it is held here; if not, nothing is counted.
func (r *recentRecords) addRefs(idx uint64, n int32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.getLocked(idx); !ok {
		return false
	}
	slot := r.recs.at(int(idx - r.base))
	slot.refs = max(slot.refs, 1) + n
	return true
}

// release notes that one entry less points at the record at idx, and lets
// the record go once none does. It reports whether the record is held.
func (r *recentRecords) release(idx uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.getLocked(idx); !ok {
		return false
	}
	if slot := r.recs.at(int(idx - r.base)); slot.refs > 1 {
		slot.refs--
		return true
	}
	r.dropLocked(idx)
	return true
}

// dropLocked forgets the record at idx and reports whether it was held.
func (r *recentRecords) dropLocked(idx uint64) bool {
	slot, ok := r.getLocked(idx)
	if !ok {
		return false
	}
	rec := slot.rec
	*r.recs.at(int(idx - r.base)) = recentSlot{}
	r.held--
	r.grow(-int64(len(rec)))
	// Empty slots at the front are of no use.
	for r.head < r.recs.len() && r.recs.at(r.head).rec == nil {
		r.head++
		r.grow(-int64(slotBytes))
	}
	r.compactLocked()
	return true
}

// clear lets every record go, giving their bytes back to the pool.
func (r *recentRecords) clear() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.grow(-r.bytes)
	r.recs, r.base, r.head, r.held = slotChunks{}, 0, 0, 0
}

// compactLocked lets go the chunks wholly before the span's first slot.
func (r *recentRecords) compactLocked() {
	n := r.recs.dropFront(r.head)
	r.base += uint64(n)
	r.head -= n
}

// size is the bytes and number of records held.
func (r *recentRecords) size() (int64, int) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.bytes, r.held
}
