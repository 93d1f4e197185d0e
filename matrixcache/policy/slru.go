package policy

import "math/bits"

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

// maxSLRUSegments bounds SLRUOptions.Segments.
const maxSLRUSegments = 1 << 16

// SLRUOptions configures an [SLRU]. Zero fields take the defaults.
type SLRUOptions struct {
	// HotPercent is the share of capacity for newly admitted entries
	// (default DefaultHotPercent).
	HotPercent int
	// WarmPercent is the share of capacity for entries that proved
	// themselves by being hit PromoteHits times (default DefaultWarmPercent).
	WarmPercent int
	// PromoteHits is the number of hits that promotes an entry to the warm
	// list (default DefaultPromoteHits, at most 255).
	PromoteHits int
	// Segments hash-partitions the policy into this many independent
	// segments, rounded up to a power of two (default 1, at most 65536).
	// Each has its own lists and a budget of capacity/Segments (the
	// remainder goes to the first segments); an entry competes only within
	// its key's segment and must fit its budget, and the guarantees of
	// [Policy] about cost and ErrNoRoom hold per segment: after an Admit
	// that succeeds, the key's segment is within its budget, though another
	// segment kept over budget by pins may not be. If the capacity is smaller
	// than the number of segments, there is one segment. The original
	// defaults to 256; a matrixcache shard already is a hash partition, so
	// here the default is 1.
	Segments int
}

// SLRU is a segmented LRU with hot, warm and cold lists, the semantics of
// the original standalone ReplacementSlru (and memcached's segmented LRU):
//
//   - New entries enter hot. A hit only counts the hit and marks the entry
//     active; it does not reorder any list, so hits are cheap.
//   - A maintenance pass after every Admit keeps hot within HotPercent and
//     warm within WarmPercent of the capacity. An entry leaving hot goes to
//     warm if it has PromoteHits hits, otherwise to cold. An entry reaching
//     the tail of warm is kept (moved to the front) if it was hit since it
//     last moved, otherwise demoted to cold with its hits reset.
//   - Cold is the probationary list: victims come from its tail first. A
//     cold entry that has reached PromoteHits hits is promoted to warm
//     instead of evicted. Only when cold is empty are victims taken from
//     warm, then from hot.
//
// With SLRUOptions.Segments above 1 the policy is hash-partitioned as the
// original is, and all of the above happens within each segment.
//
// An SLRU is not safe for concurrent use.
type SLRU struct {
	segs     []slruSegment
	mask     uint64
	opts     SLRUOptions
	capacity int64
	cost     int64
	n        int
}

// slruSegment is one hash partition of an SLRU.
type slruSegment struct {
	t table

	capacity int64

	hotPercent, warmPercent int64
	hotMax, warmMax         int64
	promoteHits             uint8
}

// NewSLRU returns an empty SLRU holding at most capacity cost units. It
// panics if capacity is negative or an option is out of range.
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
	if opts.PromoteHits < 0 || opts.PromoteHits > 255 {
		panic("policy: SLRU PromoteHits out of range")
	}
	if opts.Segments < 0 || opts.Segments > maxSLRUSegments {
		panic("policy: SLRU Segments out of range")
	}
	opts.Segments = 1 << bits.Len(uint(max(opts.Segments, 1)-1))
	n := opts.Segments
	if capacity < int64(n) {
		n = 1
	}
	p := &SLRU{segs: make([]slruSegment, n), mask: uint64(n - 1), opts: opts}
	for i := range p.segs {
		p.segs[i] = slruSegment{
			t:           newTable(int(slruLists)),
			hotPercent:  int64(opts.HotPercent),
			warmPercent: int64(opts.WarmPercent),
			promoteHits: uint8(opts.PromoteHits),
		}
	}
	p.setMaximum(capacity)
	return p
}

// setMaximum splits capacity over the segments.
func (p *SLRU) setMaximum(capacity int64) {
	p.capacity = capacity
	n := int64(len(p.segs))
	for i := range p.segs {
		c := capacity / n
		if int64(i) < capacity%n {
			c++
		}
		p.segs[i].setMaximum(c)
	}
}

func (p *slruSegment) setMaximum(capacity int64) {
	p.capacity = capacity
	p.hotMax = capacity * p.hotPercent / 100
	p.warmMax = capacity * p.warmPercent / 100
}

// seg returns the segment of key.
func (p *SLRU) seg(key uint64) *slruSegment {
	if p.mask == 0 {
		return &p.segs[0]
	}
	return &p.segs[spread(key)&p.mask]
}

// Len returns the number of resident entries.
func (p *SLRU) Len() int { return p.n }

// Cost returns the total cost of the resident entries.
func (p *SLRU) Cost() int64 { return p.cost }

// Capacity returns the maximum total cost.
func (p *SLRU) Capacity() int64 { return p.capacity }

// Contains reports whether key is resident, without recording an access.
func (p *SLRU) Contains(key uint64) bool { return p.seg(key).t.lookup(key) != none }

// Access records a lookup of key: on a hit it counts the hit and marks the
// entry active, without reordering. A miss records nothing. It never
// allocates.
func (p *SLRU) Access(key uint64) bool { return p.seg(key).Access(key) }

// Admit inserts key with cost, or updates a resident key's cost (counting a
// hit), then runs the maintenance pass of the key's segment and evicts from
// it until the segment fits its budget. See [Policy] for the contract; with
// several segments, ErrTooLarge and ErrNoRoom apply to the key's segment.
func (p *SLRU) Admit(key uint64, cost int64, victims []uint64) ([]uint64, error) {
	s := p.seg(key)
	n, c := s.t.len(), s.t.total
	victims, err := s.Admit(key, cost, victims)
	p.n += s.t.len() - n
	p.cost += s.t.total - c
	return victims, err
}

// Remove drops key and reports whether it was resident.
func (p *SLRU) Remove(key uint64) bool {
	s := p.seg(key)
	i := s.t.lookup(key)
	if i == none {
		return false
	}
	p.n--
	p.cost -= s.t.nodes[i].cost
	s.drop(i)
	return true
}

// Pin protects key from eviction; pins are counted.
func (p *SLRU) Pin(key uint64) bool { return p.seg(key).Pin(key) }

// Unpin releases one pin of key. When the last pin goes, the entry returns
// to the hot list, keeping its hits.
func (p *SLRU) Unpin(key uint64) bool { return p.seg(key).Unpin(key) }

// SetCapacity changes the capacity, keeping the list shares and the number
// of segments, and evicts every segment down to its new budget.
func (p *SLRU) SetCapacity(capacity int64, victims []uint64) ([]uint64, error) {
	capacity = max(capacity, 0)
	p.setMaximum(capacity)
	var err error
	p.n, p.cost = 0, 0
	for i := range p.segs {
		s := &p.segs[i]
		victims = s.evict(0, false, victims)
		if s.t.total > s.capacity {
			err = ErrNoRoom
		}
		p.n += s.t.len()
		p.cost += s.t.total
	}
	return victims, err
}

// NumSegments returns the number of hash partitions.
func (p *SLRU) NumSegments() int { return len(p.segs) }

// SegmentFor returns the index of the segment holding key.
func (p *SLRU) SegmentFor(key uint64) int {
	return int(spread(key) & p.mask)
}

// SegmentCapacity returns the budget of segment i.
func (p *SLRU) SegmentCapacity(i int) int64 { return p.segs[i].capacity }

// SegmentCost returns the total cost of the entries in segment i.
func (p *SLRU) SegmentCost(i int) int64 { return p.segs[i].t.total }

// List names one of an SLRU's lists.
type List uint8

// SLRU lists. ListNone is the list of an absent key; a pinned entry is on
// ListPinned until unpinned.
const (
	ListNone List = iota
	ListHot
	ListWarm
	ListCold
	ListPinned
)

// String returns the list's name.
func (l List) String() string {
	switch l {
	case ListHot:
		return "hot"
	case ListWarm:
		return "warm"
	case ListCold:
		return "cold"
	case ListPinned:
		return "pinned"
	}
	return "none"
}

// ListOf returns the list holding key.
func (p *SLRU) ListOf(key uint64) List {
	s := p.seg(key)
	i := s.t.lookup(key)
	if i == none {
		return ListNone
	}
	switch s.t.nodes[i].queue {
	case qHot:
		return ListHot
	case qWarm:
		return ListWarm
	case qCold:
		return ListCold
	}
	return ListPinned
}

// ListCost returns the total cost of the entries on list l, over all
// segments.
func (p *SLRU) ListCost(l List) int64 {
	var c int64
	for i := range p.segs {
		s := &p.segs[i]
		switch l {
		case ListHot:
			c += s.t.listCost[qHot]
		case ListWarm:
			c += s.t.listCost[qWarm]
		case ListCold:
			c += s.t.listCost[qCold]
		case ListPinned:
			c += s.t.pinned
		}
	}
	return c
}

// Access records a lookup of key: on a hit it counts the hit and marks the
// entry active, without reordering. It never allocates.
func (p *slruSegment) Access(key uint64) bool {
	i := p.t.lookup(key)
	if i == none {
		return false
	}
	p.hit(i)
	return true
}

// hit records a hit of resident node i.
func (p *slruSegment) hit(i int32) {
	n := &p.t.nodes[i]
	if n.hits < 255 {
		n.hits++
	}
	n.active = true
}

// Admit inserts key with cost, or updates a resident key's cost (counting a
// hit), then runs the maintenance pass and evicts until the total fits. See
// [Policy] for the contract.
func (p *slruSegment) Admit(key uint64, cost int64, victims []uint64) ([]uint64, error) {
	i := p.t.lookup(key)
	if err := p.t.roomFor(i, cost, p.capacity); err != nil {
		return victims, err
	}
	if i == none {
		i = p.t.alloc(key, cost)
		p.t.pushBack(qHot, i)
	} else {
		p.t.setCost(i, cost)
		p.Access(key)
	}
	victims = p.evict(key, true, victims)
	if p.t.lookup(key) == none {
		return victims, ErrRejected
	}
	return victims, nil
}

func (p *slruSegment) drop(i int32) { p.t.remove(i) }

// move puts node i at the most recently used end of segment q.
func (p *slruSegment) move(i int32, q uint8) {
	p.t.move(i, q)
	p.t.nodes[i].active = false
}

// Pin protects key from eviction; pins are counted.
func (p *slruSegment) Pin(key uint64) bool { return p.t.pinNode(p.t.lookup(key)) }

// Unpin releases one pin of key. When the last pin goes, the entry returns
// to the hot segment, keeping its hits.
func (p *slruSegment) Unpin(key uint64) bool { return p.t.unpinNode(p.t.lookup(key), qHot) }

// maintain keeps hot and warm within their shares.
func (p *slruSegment) maintain() {
	for p.t.listCost[qHot] > p.hotMax {
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
	for p.t.listCost[qWarm] > p.warmMax {
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
func (p *slruSegment) evict(self uint64, hasSelf bool, victims []uint64) []uint64 {
	p.maintain()
	for p.t.total > p.capacity {
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
