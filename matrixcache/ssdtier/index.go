package ssdtier

// index is the in-memory view of what the file holds: the accounted size
// of every block and a recency list for eviction. The list's front is the
// next victim.
type index struct {
	m     map[string]*entry
	root  entry // sentinel: root.next is the least recently used
	bytes int64
}

type entry struct {
	key        string // ordered key
	size       int64
	prev, next *entry
}

func newIndex() *index {
	ix := &index{m: make(map[string]*entry)}
	ix.root.prev, ix.root.next = &ix.root, &ix.root
	return ix
}

func (ix *index) unlink(e *entry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (ix *index) pushBack(e *entry) {
	e.prev, e.next = ix.root.prev, &ix.root
	ix.root.prev.next = e
	ix.root.prev = e
}

// put records a block of size bytes under key as the most recently used.
func (ix *index) put(key []byte, size int64) {
	if e, ok := ix.m[string(key)]; ok {
		ix.bytes += size - e.size
		e.size = size
		ix.unlink(e)
		ix.pushBack(e)
		return
	}
	e := &entry{key: string(key), size: size}
	ix.m[e.key] = e
	ix.bytes += size
	ix.pushBack(e)
}

// remove forgets key, reporting whether it was there.
func (ix *index) remove(key []byte) bool {
	e, ok := ix.m[string(key)]
	if !ok {
		return false
	}
	ix.unlink(e)
	delete(ix.m, e.key)
	ix.bytes -= e.size
	return true
}

// touch makes key the most recently used.
func (ix *index) touch(key []byte) {
	if e, ok := ix.m[string(key)]; ok {
		ix.unlink(e)
		ix.pushBack(e)
	}
}

// victim is the least recently used block, or nil.
func (ix *index) victim() *entry {
	if ix.root.next == &ix.root {
		return nil
	}
	return ix.root.next
}

func (ix *index) len() int { return len(ix.m) }
