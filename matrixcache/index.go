package matrixcache

import (
	"iter"
	"sync/atomic"
)

// index is a DRAM shard's table of entries by key hash: open addressing
// with linear probing over (hash, entry) slots, read without a lock and
// written under the shard's lock. It replaces a general concurrent map
// because a hit then costs one cache miss for the slot (hash and pointer
// side by side) and one for the entry, where xsync.Map adds a node of its
// own between them; on a cache larger than the processor's caches, misses
// are what a hit costs.
//
// Readers compare the whole key of the entry they find, so every state a
// writer passes through is safe to observe: a slot whose pointer is not yet
// (or no longer) the key's reads as a miss. A hash appears in at most one
// slot (a write of a hash reuses its slot), and a deleted entry leaves its
// hash as a tombstone so later slots stay reachable. The table is rebuilt,
// and the new one published atomically, when live and dead slots pass 3/4
// of it; a reader still on the old one sees a consistent, older snapshot.
type index struct {
	tab atomic.Pointer[indexTable]
	// Under the shard's lock.
	live, dead int
}

type indexTable struct {
	mask  uint64
	slots []indexSlot
}

type indexSlot struct {
	h atomic.Uint64 // 0: never used (hashKey never returns 0)
	e atomic.Pointer[entry]
}

const minIndexSlots = 16

func newIndex() *index {
	x := &index{}
	x.tab.Store(newIndexTable(minIndexSlots))
	return x
}

func newIndexTable(n int) *indexTable {
	return &indexTable{mask: uint64(n - 1), slots: make([]indexSlot, n)}
}

// load returns the entry stored under hash h, or nil. It takes no lock.
func (x *index) load(h uint64) *entry {
	t := x.tab.Load()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		switch t.slots[i].h.Load() {
		case h:
			return t.slots[i].e.Load()
		case 0:
			return nil
		}
	}
}

// store puts e under hash h, replacing what h held. Under the shard's lock.
func (x *index) store(h uint64, e *entry) {
	t := x.tab.Load()
	tomb := -1
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		sh := t.slots[i].h.Load()
		if sh == h {
			if t.slots[i].e.Swap(e) == nil {
				x.live++
				x.dead--
			}
			return
		}
		if sh == 0 {
			// h is nowhere in the table: take the first tombstone on its
			// probe path, or this empty slot.
			j := int(i)
			if tomb >= 0 {
				j = tomb
				x.dead--
			}
			x.live++
			// The pointer first: a reader that finds the hash finds the
			// entry (or, in a reused tombstone, compares keys and misses).
			t.slots[j].e.Store(e)
			t.slots[j].h.Store(h)
			if uint64(x.live+x.dead) > (t.mask+1)/4*3 {
				x.rebuild()
			}
			return
		}
		if tomb < 0 && t.slots[i].e.Load() == nil {
			tomb = int(i)
		}
	}
}

// delete removes what hash h holds and returns it, or nil. Under the
// shard's lock.
func (x *index) delete(h uint64) *entry {
	t := x.tab.Load()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		switch t.slots[i].h.Load() {
		case h:
			e := t.slots[i].e.Swap(nil)
			if e != nil {
				x.live--
				x.dead++
			}
			return e
		case 0:
			return nil
		}
	}
}

// rebuild publishes a table with the live entries only, large enough that
// they fill at most half of it: a quarter of the slots stays for inserts and
// tombstones before the next rebuild (at 3/4), and a lookup probes about
// 1.5 slots. Under the shard's lock.
func (x *index) rebuild() {
	old := x.tab.Load()
	n := minIndexSlots
	for uint64(n)/2 < uint64(x.live)+1 {
		n *= 2
	}
	t := newIndexTable(n)
	for i := range old.slots {
		e := old.slots[i].e.Load()
		if e == nil {
			continue
		}
		h := old.slots[i].h.Load()
		j := h & t.mask
		for t.slots[j].h.Load() != 0 {
			j = (j + 1) & t.mask
		}
		t.slots[j].e.Store(e)
		t.slots[j].h.Store(h)
	}
	x.dead = 0
	x.tab.Store(t)
}

// all yields every (hash, entry); the loop body may delete. Under the
// shard's lock.
func (x *index) all() iter.Seq2[uint64, *entry] {
	return func(yield func(uint64, *entry) bool) {
		t := x.tab.Load()
		for i := range t.slots {
			if e := t.slots[i].e.Load(); e != nil && !yield(t.slots[i].h.Load(), e) {
				return
			}
		}
	}
}

// len is the number of live entries. Under the shard's lock.
func (x *index) len() int { return x.live }
