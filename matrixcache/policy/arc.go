package policy

import "math"

// ARC list identifiers: the resident recency and frequency lists, and their
// ghost lists, which remember keys (and costs) recently evicted from each.
const (
	qT1 uint8 = iota
	qT2
	qB1
	qB2
	arcLists
)

// ARC is the Adaptive Replacement Cache of Megiddo and Modha, measured in
// cost units, the semantics of the original ReplacementArc:
//
//   - Resident entries are on T1 (seen once since admission) or T2 (hit at
//     least once more). A hit, or an overwrite, moves the entry to the most
//     recently used end of T2; a new key enters T1.
//   - An evicted entry leaves a ghost on B1 (if it came from T1) or B2 (from
//     T2): the key and its cost, no value. A ghost is not resident: Access,
//     Contains and Pin do not see it, and Remove drops it too.
//   - The target is the share of the capacity that T1 aims for. Victims
//     come from the least recently used end of T1 while T1's cost exceeds
//     the target, otherwise from T2. Admitting a key that has a ghost on B1
//     says T1 was too small: the target grows by the ghost's cost times
//     max(1, cost(B2)/cost(B1)). A ghost on B2 shrinks it by the ghost's
//     cost times max(1, cost(B1)/cost(B2)), the ratios rounded down. The
//     target stays within [0, capacity]. Either way the key enters T2. With
//     every cost 1 this is the algorithm of the paper, with the target kept
//     in whole entries.
//   - The ghost lists are bounded in cost units: T1 and B1 together hold at
//     most the capacity, and the four lists (with the pinned entries) at
//     most twice the capacity, the least recently evicted ghosts going
//     first. So the ghosts number at most as many entries of their cost as
//     would fit in the cache twice over. Dropping a ghost is not a victim;
//     the ghosts an Admit drops were made by earlier evictions, so Admit is
//     O(1) per victim amortised.
//   - A pinned entry is on no list. When its last pin is released it
//     returns to the most recently used end of T2: a pin is taken by a
//     reader, which is a use of the entry.
//
// ARC adapts between recency and frequency without tuning and resists a
// single scan better than LRU (scanned keys stay on T1). It keeps up to
// twice as many keys as are resident. It suits workloads that shift between
// recency and frequency bias; on loops and other frequency-dominated traces
// [TinyLFU] does far better (see the package documentation's hit ratios).
//
// An ARC is not safe for concurrent use.
type ARC struct {
	t        table
	capacity int64
	target   int64 // the cost T1 aims for, in [0, capacity]
	n        int   // resident entries
}

// NewARC returns an empty ARC holding at most capacity cost units. It
// panics if capacity is negative.
func NewARC(capacity int64) *ARC {
	if capacity < 0 {
		panic("policy: negative capacity")
	}
	return &ARC{t: newTable(int(arcLists)), capacity: capacity}
}

// resident reports whether node i is a resident entry (not a ghost).
func (p *ARC) resident(i int32) bool {
	q := p.t.nodes[i].queue
	return q == qT1 || q == qT2 || q == qPinned
}

// lookup returns the node of resident key, or none.
func (p *ARC) lookup(key uint64) int32 {
	if i := p.t.lookup(key); i != none && p.resident(i) {
		return i
	}
	return none
}

// Len returns the number of resident entries.
func (p *ARC) Len() int { return p.n }

// Cost returns the total cost of the resident entries.
func (p *ARC) Cost() int64 {
	return p.t.listCost[qT1] + p.t.listCost[qT2] + p.t.pinned
}

// Capacity returns the maximum total cost.
func (p *ARC) Capacity() int64 { return p.capacity }

// Target returns the cost that the recency list T1 currently aims for.
func (p *ARC) Target() int64 { return p.target }

// Contains reports whether key is resident, without recording an access.
func (p *ARC) Contains(key uint64) bool { return p.lookup(key) != none }

// Access records a lookup of key: a hit moves the entry to the most
// recently used end of T2. A miss, ghost or not, records nothing. It never
// allocates.
func (p *ARC) Access(key uint64) bool {
	i := p.lookup(key)
	if i == none {
		return false
	}
	p.hit(i)
	return true
}

// hit records a hit of resident node i.
func (p *ARC) hit(i int32) {
	switch p.t.nodes[i].queue {
	case qT1:
		p.t.move(i, qT2)
	case qT2:
		p.t.moveToBack(i)
	}
}

// Slot returns the slot of resident key, or NoSlot.
func (p *ARC) Slot(key uint64) int32 { return p.lookup(key) }

// AccessSlot is Access(key) given the slot Slot returned for it.
func (p *ARC) AccessSlot(key uint64, slot int32) bool {
	if !p.t.holds(slot, key) || !p.resident(slot) {
		return p.Access(key)
	}
	p.hit(slot)
	return true
}

// Admit inserts key with cost, or updates a resident key's cost (counting a
// hit), evicting as needed. A key with a ghost adapts the target and enters
// T2; any other new key enters T1. It never returns [ErrRejected]. See
// [Policy] for the contract.
func (p *ARC) Admit(key uint64, cost int64, victims []uint64) ([]uint64, error) {
	i := p.t.lookup(key)
	if err := p.t.roomFor(i, cost, p.capacity); err != nil {
		return victims, err
	}
	fromB2 := false
	switch {
	case i == none:
		i = p.t.alloc(key, cost)
		p.t.pushBack(qT1, i)
		p.n++
	case !p.resident(i):
		p.adapt(i)
		fromB2 = p.t.nodes[i].queue == qB2
		p.t.setCost(i, cost)
		p.t.move(i, qT2)
		p.n++
	default:
		p.t.setCost(i, cost)
		p.hit(i)
	}
	victims = p.evict(i, fromB2, victims)
	p.trimGhosts()
	return victims, nil
}

// adapt moves the target on the admission of ghost node i: up for a ghost
// from B1, down for one from B2, by the ghost's cost scaled by the ratio of
// the other ghost list's cost to its own (at least 1).
func (p *ARC) adapt(i int32) {
	b1, b2 := p.t.listCost[qB1], p.t.listCost[qB2]
	c := p.t.nodes[i].cost
	if p.t.nodes[i].queue == qB1 {
		p.target += scaled(c, b2/b1, p.capacity-p.target)
	} else {
		p.target -= scaled(c, b1/b2, p.target)
	}
}

// scaled returns min(cost*max(ratio, 1), limit) without overflowing.
func scaled(cost, ratio, limit int64) int64 {
	ratio = max(ratio, 1)
	if ratio > limit/cost {
		return limit
	}
	return min(cost*ratio, limit)
}

// evict turns resident entries into ghosts until the resident cost fits,
// never node self (none for no node). Victims come from T1 while T1,
// without self, is above the target (or at it, when self came from B2),
// otherwise from T2; from the other list when the chosen one has nothing
// but self.
func (p *ARC) evict(self int32, fromB2 bool, victims []uint64) []uint64 {
	for p.Cost() > p.capacity {
		t1 := p.t.listCost[qT1]
		if self != none && p.t.nodes[self].queue == qT1 {
			t1 -= p.t.nodes[self].cost
		}
		first, second := qT2, qT1
		if t1 > 0 && (t1 > p.target || fromB2 && t1 == p.target) {
			first, second = qT1, qT2
		}
		i := p.lruExcept(first, self)
		if i == none {
			i = p.lruExcept(second, self)
		}
		if i == none {
			break // only pinned entries and self remain
		}
		victims = append(victims, p.t.nodes[i].key)
		if p.t.nodes[i].queue == qT1 {
			p.t.move(i, qB1)
		} else {
			p.t.move(i, qB2)
		}
		p.n--
	}
	return victims
}

// lruExcept returns the least recently used node of list q other than
// self, or none.
func (p *ARC) lruExcept(q uint8, self int32) int32 {
	i := p.t.front(q)
	if i != none && i == self {
		i = p.t.after(i)
	}
	return i
}

// trimGhosts drops the least recently evicted ghosts until T1 and B1 hold
// at most the capacity and all lists at most twice the capacity.
func (p *ARC) trimGhosts() {
	for p.t.listCost[qT1]+p.t.listCost[qB1] > p.capacity {
		i := p.t.front(qB1)
		if i == none {
			break
		}
		p.t.remove(i)
	}
	limit := int64(math.MaxInt64)
	if p.capacity <= math.MaxInt64/2 {
		limit = 2 * p.capacity
	}
	for p.t.total > limit {
		i := p.t.front(qB2)
		if i == none {
			i = p.t.front(qB1)
		}
		if i == none {
			break
		}
		p.t.remove(i)
	}
}

// Remove drops key and reports whether it was resident. A ghost of key is
// dropped too (and Remove reports false).
func (p *ARC) Remove(key uint64) bool {
	i := p.t.lookup(key)
	if i == none {
		return false
	}
	was := p.resident(i)
	if was {
		p.n--
	}
	p.t.remove(i)
	return was
}

// Pin protects key from eviction; pins are counted. The entry leaves its
// list while pinned.
func (p *ARC) Pin(key uint64) bool { return p.t.pinNode(p.lookup(key)) }

// Unpin releases one pin of key. When the last pin goes, the entry returns
// to the most recently used end of T2.
func (p *ARC) Unpin(key uint64) bool { return p.t.unpinNode(p.lookup(key), qT2) }

// SetCapacity changes the capacity, clamping the target to it, evicts down
// to it and trims the ghost lists to the new bounds.
func (p *ARC) SetCapacity(capacity int64, victims []uint64) ([]uint64, error) {
	p.capacity = max(capacity, 0)
	p.target = min(p.target, p.capacity)
	victims = p.evict(none, false, victims)
	p.trimGhosts()
	if p.Cost() > p.capacity {
		return victims, ErrNoRoom
	}
	return victims, nil
}

// ARCList names one of an ARC's lists.
type ARCList uint8

// ARC lists. ARCNone is the list of a key the policy does not know; a
// pinned entry is on ARCPinned until unpinned.
const (
	ARCNone ARCList = iota
	ARCRecent
	ARCFrequent
	ARCGhostRecent
	ARCGhostFrequent
	ARCPinned
)

// String returns the list's name in the ARC paper's terms.
func (l ARCList) String() string {
	switch l {
	case ARCRecent:
		return "T1"
	case ARCFrequent:
		return "T2"
	case ARCGhostRecent:
		return "B1"
	case ARCGhostFrequent:
		return "B2"
	case ARCPinned:
		return "pinned"
	}
	return "none"
}

// ListOf returns the list holding key, ghost lists included.
func (p *ARC) ListOf(key uint64) ARCList {
	i := p.t.lookup(key)
	if i == none {
		return ARCNone
	}
	switch p.t.nodes[i].queue {
	case qT1:
		return ARCRecent
	case qT2:
		return ARCFrequent
	case qB1:
		return ARCGhostRecent
	case qB2:
		return ARCGhostFrequent
	}
	return ARCPinned
}

// ListCost returns the total cost of the entries (or ghosts) on list l.
func (p *ARC) ListCost(l ARCList) int64 {
	switch l {
	case ARCRecent:
		return p.t.listCost[qT1]
	case ARCFrequent:
		return p.t.listCost[qT2]
	case ARCGhostRecent:
		return p.t.listCost[qB1]
	case ARCGhostFrequent:
		return p.t.listCost[qB2]
	case ARCPinned:
		return p.t.pinned
	}
	return 0
}
