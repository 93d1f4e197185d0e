package policy

// none marks the absence of a node index.
const none int32 = -1

// node is one resident entry. Nodes live in table.nodes and link into
// intrusive, circular, doubly linked lists through prev and next; the first
// table.nlists nodes are the lists' sentinels.
type node struct {
	key    uint64
	cost   int64
	prev   int32
	next   int32
	pins   uint32
	queue  uint8 // list the node is on, or qPinned
	hits   uint8 // SLRU: hits since admission or demotion (saturating)
	active bool  // SLRU: accessed since last moved
}

// qPinned is the queue of a pinned node: it is on no list.
const qPinned uint8 = 255

// table is a slice-backed node arena with a key index and a free list.
// Freed nodes are reused, so steady-state operation does not allocate. It
// keeps the cost sums every policy needs — per list, pinned, and total — as
// nodes move, so no policy adjusts them by hand.
type table struct {
	nodes  []node
	index  map[uint64]int32
	free   int32 // head of the free chain (through next), or none
	nlists int32

	listCost []int64 // summed cost of the nodes on each list
	pinned   int64   // summed cost of pinned nodes (on no list)
	total    int64   // summed cost of every node
}

func newTable(nlists int) table {
	t := table{
		nodes:  make([]node, nlists),
		index:  make(map[uint64]int32),
		free:   none,
		nlists: int32(nlists),

		listCost: make([]int64, nlists),
	}
	for i := range t.nodes {
		t.nodes[i].prev = int32(i)
		t.nodes[i].next = int32(i)
		t.nodes[i].queue = uint8(i)
	}
	return t
}

func (t *table) lookup(key uint64) int32 {
	if i, ok := t.index[key]; ok {
		return i
	}
	return none
}

func (t *table) len() int { return len(t.index) }

// alloc returns an unlinked node holding key and cost.
func (t *table) alloc(key uint64, cost int64) int32 {
	i := t.free
	if i != none {
		t.free = t.nodes[i].next
	} else {
		i = int32(len(t.nodes))
		t.nodes = append(t.nodes, node{})
	}
	t.nodes[i] = node{key: key, cost: cost, prev: i, next: i}
	t.index[key] = i
	t.total += cost
	return i
}

// remove takes i off its list (or out of the pinned set), drops it from the
// index and frees it.
func (t *table) remove(i int32) {
	n := &t.nodes[i]
	if n.queue == qPinned {
		t.pinned -= n.cost
	} else {
		t.unlink(i)
	}
	t.total -= n.cost
	delete(t.index, n.key)
	t.nodes[i] = node{next: t.free, prev: none}
	t.free = i
}

// pushBack appends i to the most recently used end of list q.
func (t *table) pushBack(q uint8, i int32) {
	h := int32(q)
	tail := t.nodes[h].prev
	n := &t.nodes[i]
	n.prev, n.next, n.queue = tail, h, q
	t.nodes[tail].next = i
	t.nodes[h].prev = i
	t.listCost[q] += n.cost
}

// unlink takes i off its list.
func (t *table) unlink(i int32) {
	n := &t.nodes[i]
	t.nodes[n.prev].next = n.next
	t.nodes[n.next].prev = n.prev
	n.prev, n.next = i, i
	t.listCost[n.queue] -= n.cost
}

// move puts i at the most recently used end of list q.
func (t *table) move(i int32, q uint8) {
	t.unlink(i)
	t.pushBack(q, i)
}

// pin takes i off its list into the pinned set.
func (t *table) pin(i int32) {
	t.unlink(i)
	t.nodes[i].queue = qPinned
	t.pinned += t.nodes[i].cost
}

// roomFor says why an entry of cost cannot be admitted under capacity
// (node i, or none for a key not in the table), in the order the Policy
// contract checks: a bad cost, a cost over the capacity, no room beside the
// pinned entries. nil means it can.
func (t *table) roomFor(i int32, cost, capacity int64) error {
	switch {
	case cost < 1:
		return ErrInvalidCost
	case cost > capacity:
		return ErrTooLarge
	case i == none:
		if t.pinned+cost > capacity {
			return ErrNoRoom
		}
	case t.pinnedAfter(&t.nodes[i], cost) > capacity:
		return ErrNoRoom
	}
	return nil
}

// pinNode adds a pin to node i (none: the key is not resident, and it
// reports false); the first pin takes the node off its list.
func (t *table) pinNode(i int32) bool {
	if i == none {
		return false
	}
	n := &t.nodes[i]
	n.pins++
	if n.pins == 1 {
		t.pin(i)
	}
	return true
}

// unpinNode releases one pin of node i and reports whether it had one; the
// last returns the node to the most recently used end of list q.
func (t *table) unpinNode(i int32, q uint8) bool {
	if i == none || t.nodes[i].pins == 0 {
		return false
	}
	n := &t.nodes[i]
	n.pins--
	if n.pins == 0 {
		t.unpin(i, q)
	}
	return true
}

// unpin returns pinned node i to the most recently used end of list q.
func (t *table) unpin(i int32, q uint8) {
	t.pinned -= t.nodes[i].cost
	t.pushBack(q, i)
}

// pinnedAfter is the pinned cost that resizing resident node n to cost must
// leave room for: the other pinned entries plus n itself.
func (t *table) pinnedAfter(n *node, cost int64) int64 {
	if n.pins > 0 {
		return t.pinned - n.cost + cost
	}
	return t.pinned + cost
}

// setCost changes the cost of node i, wherever it is.
func (t *table) setCost(i int32, cost int64) {
	n := &t.nodes[i]
	delta := cost - n.cost
	if n.queue == qPinned {
		t.pinned += delta
	} else {
		t.listCost[n.queue] += delta
	}
	t.total += delta
	n.cost = cost
}

// moveToBack makes i the most recently used node of its list.
func (t *table) moveToBack(i int32) {
	q := t.nodes[i].queue
	if t.nodes[int32(q)].prev == i {
		return
	}
	t.move(i, q)
}

// front returns the least recently used node of list q, or none.
func (t *table) front(q uint8) int32 {
	if n := t.nodes[int32(q)].next; n >= t.nlists {
		return n
	}
	return none
}

// after returns the node after i on its list (towards the most recently
// used end), or none.
func (t *table) after(i int32) int32 {
	if n := t.nodes[i].next; n >= t.nlists {
		return n
	}
	return none
}
