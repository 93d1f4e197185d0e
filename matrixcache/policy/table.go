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
// Freed nodes are reused, so steady-state operation does not allocate.
type table struct {
	nodes  []node
	index  map[uint64]int32
	free   int32 // head of the free chain (through next), or none
	nlists int32
}

func newTable(nlists int) table {
	t := table{
		nodes:  make([]node, nlists),
		index:  make(map[uint64]int32),
		free:   none,
		nlists: int32(nlists),
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
	return i
}

// release drops an unlinked node from the index and frees it.
func (t *table) release(i int32) {
	delete(t.index, t.nodes[i].key)
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
}

// unlink takes i off its list.
func (t *table) unlink(i int32) {
	n := &t.nodes[i]
	t.nodes[n.prev].next = n.next
	t.nodes[n.next].prev = n.prev
	n.prev, n.next = i, i
}

// moveToBack makes i the most recently used node of its list.
func (t *table) moveToBack(i int32) {
	q := t.nodes[i].queue
	if t.nodes[int32(q)].prev == i {
		return
	}
	t.unlink(i)
	t.pushBack(q, i)
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
