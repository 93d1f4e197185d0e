package policy

// SLRU list identifiers.
const (
	qHot uint8 = iota
	qWarm
	qCold
	slruLists
)

// SLRU defaults, those of the original ReplacementSlru.
const (
	DefaultHotPercent  = 20
	DefaultWarmPercent = 40
	DefaultPromoteHits = 2
)

// SLRUOptions configures an [SLRU]. Zero fields take the defaults.
type SLRUOptions struct {
	// HotPercent is the share of capacity for newly admitted entries
	// (default DefaultHotPercent).
	HotPercent int
	// WarmPercent is the share of capacity for entries that proved
	// themselves by being hit PromoteHits times (default DefaultWarmPercent).
	WarmPercent int
	// PromoteHits is the number of hits that promotes an entry to the warm
	// segment (default DefaultPromoteHits, at most 255).
	PromoteHits int
}

// SLRU is a segmented LRU with hot, warm and cold segments, the semantics of
// the original standalone ReplacementSlru (and memcached's segmented LRU):
//
//   - New entries enter hot. A hit only counts the hit and marks the entry
//     active; it does not reorder any list, so hits are cheap.
//   - A maintenance pass after every Admit keeps hot within HotPercent and
//     warm within WarmPercent of the capacity. An entry leaving hot goes to
//     warm if it has PromoteHits hits, otherwise to cold. An entry reaching
//     the tail of warm is kept (moved to the front) if it was hit since it
//     last moved, otherwise demoted to cold with its hits reset.
//   - Cold is the probationary segment: victims come from its tail first.
//     A cold entry that has reached PromoteHits hits is promoted to warm
//     instead of evicted. Only when cold is empty are victims taken from
//     warm, then from hot.
//
// An SLRU is not safe for concurrent use.
type SLRU struct {
	t table

	capacity   int64
	cost       int64
	pinnedCost int64
	segCost    [slruLists]int64

	hotPercent, warmPercent int64
	hotMax, warmMax         int64
	promoteHits             uint8
}

// NewSLRU returns an empty SLRU holding at most capacity cost units. It
// panics if capacity is negative or the percentages are out of range.
func NewSLRU(capacity int64, opts SLRUOptions) *SLRU {
	if capacity < 0 {
		panic("policy: negative capacity")
	}
	if opts.HotPercent == 0 {
		opts.HotPercent = DefaultHotPercent
	}
	if opts.WarmPercent == 0 {
		opts.WarmPercent = DefaultWarmPercent
	}
	if opts.PromoteHits == 0 {
		opts.PromoteHits = DefaultPromoteHits
	}
	if opts.HotPercent < 0 || opts.WarmPercent < 0 || opts.HotPercent+opts.WarmPercent > 100 {
		panic("policy: SLRU percentages out of range")
	}
	p := &SLRU{
		t:           newTable(int(slruLists)),
		hotPercent:  int64(opts.HotPercent),
		warmPercent: int64(opts.WarmPercent),
		promoteHits: uint8(min(max(opts.PromoteHits, 1), 255)),
	}
	p.setMaximum(capacity)
	return p
}

func (p *SLRU) setMaximum(capacity int64) {
	p.capacity = capacity
	p.hotMax = capacity * p.hotPercent / 100
	p.warmMax = capacity * p.warmPercent / 100
}

// Len returns the number of resident entries.
func (p *SLRU) Len() int { return p.t.len() }

// Cost returns the total cost of the resident entries.
func (p *SLRU) Cost() int64 { return p.cost }

// Capacity returns the maximum total cost.
func (p *SLRU) Capacity() int64 { return p.capacity }

// Contains reports whether key is resident, without recording an access.
func (p *SLRU) Contains(key uint64) bool { return p.t.lookup(key) != none }

// Segment names an SLRU segment.
type Segment uint8

// SLRU segments. SegmentNone is the segment of an absent key; a pinned
// entry is in SegmentPinned until unpinned.
const (
	SegmentNone Segment = iota
	SegmentHot
	SegmentWarm
	SegmentCold
	SegmentPinned
)

// String returns the segment's name.
func (s Segment) String() string {
	switch s {
	case SegmentHot:
		return "hot"
	case SegmentWarm:
		return "warm"
	case SegmentCold:
		return "cold"
	case SegmentPinned:
		return "pinned"
	}
	return "none"
}

// SegmentOf returns the segment holding key.
func (p *SLRU) SegmentOf(key uint64) Segment {
	i := p.t.lookup(key)
	if i == none {
		return SegmentNone
	}
	switch p.t.nodes[i].queue {
	case qHot:
		return SegmentHot
	case qWarm:
		return SegmentWarm
	case qCold:
		return SegmentCold
	}
	return SegmentPinned
}

// SegmentCost returns the total cost of the entries in segment s.
func (p *SLRU) SegmentCost(s Segment) int64 {
	switch s {
	case SegmentHot:
		return p.segCost[qHot]
	case SegmentWarm:
		return p.segCost[qWarm]
	case SegmentCold:
		return p.segCost[qCold]
	case SegmentPinned:
		return p.pinnedCost
	}
	return 0
}

// Access records a lookup of key: on a hit it counts the hit and marks the
// entry active, without reordering. It never allocates.
func (p *SLRU) Access(key uint64) bool {
	i := p.t.lookup(key)
	if i == none {
		return false
	}
	n := &p.t.nodes[i]
	if n.hits < 255 {
		n.hits++
	}
	n.active = true
	return true
}

// Admit inserts key with cost, or updates a resident key's cost (counting a
// hit), then runs the maintenance pass and evicts until the total fits. See
// [Policy] for the contract.
func (p *SLRU) Admit(key uint64, cost int64, victims []uint64) ([]uint64, error) {
	if cost < 1 {
		return victims, ErrInvalidCost
	}
	if cost > p.capacity {
		return victims, ErrTooLarge
	}
	i := p.t.lookup(key)
	if i == none {
		if p.pinnedCost+cost > p.capacity {
			return victims, ErrNoRoom
		}
		i = p.t.alloc(key, cost)
		p.t.pushBack(qHot, i)
		p.segCost[qHot] += cost
		p.cost += cost
	} else {
		n := &p.t.nodes[i]
		delta := cost - n.cost
		if n.pins > 0 {
			if p.pinnedCost+delta > p.capacity {
				return victims, ErrNoRoom
			}
			p.pinnedCost += delta
		} else {
			if p.pinnedCost+cost > p.capacity {
				return victims, ErrNoRoom
			}
			p.segCost[n.queue] += delta
		}
		n.cost = cost
		p.cost += delta
		p.Access(key)
	}
	victims = p.evict(key, true, victims)
	if p.t.lookup(key) == none {
		return victims, ErrRejected
	}
	return victims, nil
}

// Remove drops key and reports whether it was resident.
func (p *SLRU) Remove(key uint64) bool {
	i := p.t.lookup(key)
	if i == none {
		return false
	}
	p.drop(i)
	return true
}

func (p *SLRU) drop(i int32) {
	n := &p.t.nodes[i]
	p.cost -= n.cost
	if n.queue == qPinned {
		p.pinnedCost -= n.cost
	} else {
		p.segCost[n.queue] -= n.cost
		p.t.unlink(i)
	}
	p.t.release(i)
}

// move puts node i at the most recently used end of segment q.
func (p *SLRU) move(i int32, q uint8) {
	n := &p.t.nodes[i]
	p.segCost[n.queue] -= n.cost
	p.t.unlink(i)
	p.t.pushBack(q, i)
	p.segCost[q] += n.cost
	n.active = false
}

// Pin protects key from eviction; pins are counted.
func (p *SLRU) Pin(key uint64) bool {
	i := p.t.lookup(key)
	if i == none {
		return false
	}
	n := &p.t.nodes[i]
	n.pins++
	if n.pins == 1 {
		p.segCost[n.queue] -= n.cost
		p.t.unlink(i)
		n.queue = qPinned
		p.pinnedCost += n.cost
	}
	return true
}

// Unpin releases one pin of key. When the last pin goes, the entry returns
// to the hot segment, keeping its hits.
func (p *SLRU) Unpin(key uint64) bool {
	i := p.t.lookup(key)
	if i == none || p.t.nodes[i].pins == 0 {
		return false
	}
	n := &p.t.nodes[i]
	n.pins--
	if n.pins == 0 {
		p.pinnedCost -= n.cost
		p.t.pushBack(qHot, i)
		p.segCost[qHot] += n.cost
	}
	return true
}

// SetCapacity changes the capacity, keeping the segment shares, and evicts
// down to it.
func (p *SLRU) SetCapacity(capacity int64, victims []uint64) ([]uint64, error) {
	if capacity < 0 {
		capacity = 0
	}
	p.setMaximum(capacity)
	victims = p.evict(0, false, victims)
	if p.cost > p.capacity {
		return victims, ErrNoRoom
	}
	return victims, nil
}

// maintain keeps hot and warm within their shares.
func (p *SLRU) maintain() {
	for p.segCost[qHot] > p.hotMax {
		i := p.t.front(qHot)
		if i == none {
			break
		}
		if p.t.nodes[i].hits >= p.promoteHits {
			p.move(i, qWarm)
		} else {
			p.move(i, qCold)
		}
	}
	for p.segCost[qWarm] > p.warmMax {
		i := p.t.front(qWarm)
		if i == none {
			break
		}
		if p.t.nodes[i].active {
			p.move(i, qWarm) // clears active, so this ends
			continue
		}
		p.t.nodes[i].hits = 0
		p.move(i, qCold)
	}
}

// evict runs the maintenance pass and evicts from cold, then warm, then hot
// until the cost fits. If hasSelf, self is left out of victims.
func (p *SLRU) evict(self uint64, hasSelf bool, victims []uint64) []uint64 {
	p.maintain()
	for p.cost > p.capacity {
		i := p.t.front(qCold)
		if i != none && p.t.nodes[i].hits >= p.promoteHits {
			p.t.nodes[i].hits = 0
			p.move(i, qWarm)
			p.maintain()
			continue
		}
		for q := qCold; i == none && q > qHot; {
			q--
			i = p.t.front(q)
		}
		if i == none {
			break // only pinned entries remain
		}
		if k := p.t.nodes[i].key; !hasSelf || k != self {
			victims = append(victims, k)
		}
		p.drop(i)
	}
	return victims
}
