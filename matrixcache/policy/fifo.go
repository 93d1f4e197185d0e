package policy

// qFIFO is the FIFO's only list: oldest insertion at the front.
const qFIFO uint8 = 0

// FIFO evicts in insertion order, the semantics of the original
// ReplacementFIFO:
//
//   - A new entry joins the back of one queue; victims come from the front,
//     the oldest insertion first, whatever the entry's hits. Access only
//     reports residency: a hit never moves a key.
//   - Admit of a resident key (an overwrite) changes its cost and keeps its
//     place in the queue.
//   - Remove unlinks the entry at once, so the queue holds exactly the
//     resident entries that are not pinned: there are no tombstones.
//   - A pinned entry leaves the queue; when its last pin is released it
//     rejoins at the back, as a fresh insertion would, so an entry held for
//     a long time is not the next victim the moment it is released.
//
// FIFO keeps no per-hit state at all, so a hit costs one map lookup. It
// suits workloads without reuse skew (streams, scans, write-once data) and
// serves as a baseline; for anything with hot keys prefer [TinyLFU].
//
// A FIFO is not safe for concurrent use.
type FIFO struct {
	t        table
	capacity int64
}

// NewFIFO returns an empty FIFO holding at most capacity cost units. It
// panics if capacity is negative.
func NewFIFO(capacity int64) *FIFO {
	if capacity < 0 {
		panic("policy: negative capacity")
	}
	return &FIFO{t: newTable(1), capacity: capacity}
}

// Len returns the number of resident entries.
func (p *FIFO) Len() int { return p.t.len() }

// Cost returns the total cost of the resident entries.
func (p *FIFO) Cost() int64 { return p.t.total }

// Capacity returns the maximum total cost.
func (p *FIFO) Capacity() int64 { return p.capacity }

// Contains reports whether key is resident.
func (p *FIFO) Contains(key uint64) bool { return p.t.lookup(key) != none }

// Access reports whether key is resident. It changes nothing and never
// allocates.
func (p *FIFO) Access(key uint64) bool { return p.t.lookup(key) != none }

// Slot returns the slot of resident key, or NoSlot.
func (p *FIFO) Slot(key uint64) int32 { return p.t.lookup(key) }

// AccessSlot is Access(key) given the slot Slot returned for it.
func (p *FIFO) AccessSlot(key uint64, slot int32) bool {
	return p.t.holds(slot, key) || p.Access(key)
}

// Admit inserts key with cost at the back of the queue, or changes a
// resident key's cost in place, then evicts from the front until the total
// fits. It never returns [ErrRejected]. See [Policy] for the contract.
func (p *FIFO) Admit(key uint64, cost int64, victims []uint64) ([]uint64, error) {
	i := p.t.lookup(key)
	if err := p.t.roomFor(i, cost, p.capacity); err != nil {
		return victims, err
	}
	if i == none {
		i = p.t.alloc(key, cost)
		p.t.pushBack(qFIFO, i)
	} else {
		p.t.setCost(i, cost)
	}
	return p.evict(i, victims), nil
}

// evict drops entries from the front of the queue, skipping node self
// (none for no node), until the total fits or only pinned entries and self
// remain.
func (p *FIFO) evict(self int32, victims []uint64) []uint64 {
	for p.t.total > p.capacity {
		i := p.t.front(qFIFO)
		if i != none && i == self {
			i = p.t.after(i)
		}
		if i == none {
			break
		}
		victims = append(victims, p.t.nodes[i].key)
		p.t.remove(i)
	}
	return victims
}

// Remove drops key and reports whether it was resident.
func (p *FIFO) Remove(key uint64) bool {
	i := p.t.lookup(key)
	if i == none {
		return false
	}
	p.t.remove(i)
	return true
}

// Pin protects key from eviction; pins are counted. The entry leaves the
// queue while pinned.
func (p *FIFO) Pin(key uint64) bool { return p.t.pinNode(p.t.lookup(key)) }

// Unpin releases one pin of key. When the last pin goes, the entry rejoins
// the back of the queue.
func (p *FIFO) Unpin(key uint64) bool { return p.t.unpinNode(p.t.lookup(key), qFIFO) }

// SetCapacity changes the capacity and evicts from the front of the queue
// down to it.
func (p *FIFO) SetCapacity(capacity int64, victims []uint64) ([]uint64, error) {
	p.capacity = max(capacity, 0)
	victims = p.evict(none, victims)
	if p.t.total > p.capacity {
		return victims, ErrNoRoom
	}
	return victims, nil
}
