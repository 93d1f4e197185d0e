package matrixcache

import "container/heap"

// A shard keeps the DRAM entries that have a TTL in a min-heap by expiry,
// so that writes reclaim expired entries before the policy evicts live ones
// for room, and a cache that is written but not read still gives expired
// memory back. Heap items are not removed when their entry leaves DRAM or
// is overwritten; an item whose entry is no longer the one under its hash
// is stale and is dropped when it reaches the top or at a compaction.

// expiring is one entry with a TTL.
type expiring struct {
	at int64
	h  uint64
	e  *entry
}

type expiryHeap []expiring

func (x expiryHeap) Len() int           { return len(x) }
func (x expiryHeap) Less(i, j int) bool { return x[i].at < x[j].at }
func (x expiryHeap) Swap(i, j int)      { x[i], x[j] = x[j], x[i] }
func (x *expiryHeap) Push(v any)        { *x = append(*x, v.(expiring)) }
func (x *expiryHeap) Pop() any {
	old := *x
	v := old[len(old)-1]
	old[len(old)-1] = expiring{}
	*x = old[:len(old)-1]
	return v
}

// reclaimPerWrite bounds the expired entries one write drops, so that a
// write's cost stays bounded when many entries expire together.
const reclaimPerWrite = 16

// installLocked publishes e under h in s's index and, if it has a TTL, in
// the expiry heap.
func (s *shard) installLocked(h uint64, e *entry) {
	s.m.store(h, e)
	if e.expiresAt == 0 {
		return
	}
	heap.Push(&s.expiring, expiring{at: e.expiresAt, h: h, e: e})
	// Stale items (overwritten or dropped entries) are bounded by the live
	// ones: compact when they could be most of the heap.
	if n := len(s.expiring); n > 64 && n > 2*s.m.len() {
		live := s.expiring[:0]
		for _, it := range s.expiring {
			if s.m.load(it.h) == it.e {
				live = append(live, it)
			}
		}
		clear(s.expiring[len(live):])
		s.expiring = live
		heap.Init(&s.expiring)
	}
}

// reclaimExpiredLocked drops up to reclaimPerWrite of s's expired DRAM
// entries, earliest expiry first, and skips pinned ones (a pin keeps an
// entry until its release). It reads the clock only when the heap has an
// item.
func (c *Cache) reclaimExpiredLocked(s *shard, clk *clockReading) {
	report := c.wantEvictions()
	for n := 0; n < reclaimPerWrite && len(s.expiring) > 0; n++ {
		top := s.expiring[0]
		if top.at > clk.now() {
			return
		}
		heap.Pop(&s.expiring)
		if s.m.load(top.h) != top.e {
			n-- // stale: costs no reclaim
			continue
		}
		if s.pinnedLocked(top.h) {
			continue
		}
		s.dropLocked(top.h, top.e)
		c.st.dramExpired.Add(1)
		c.st.expiredReclaimed.Add(1)
		if report {
			c.evicted(EvictionEvent{Key: top.e.key(), Value: top.e.value(), Tier: TierDRAM, Cause: EvictionExpired})
		}
	}
}
