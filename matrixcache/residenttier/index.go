package residenttier

// index is the in-memory view of what the directory holds: per file (by
// the hash that names it), the ordered key of the block in it, its length,
// its expiry, and a recency list for eviction. The list's front is the
// next victim.
type index struct {
	m     map[uint64]*entry
	root  entry // sentinel: root.next is the least recently used
	bytes int64
}

type entry struct {
	hash       uint64
	key        string // ordered key of the stored block
	size       int64  // file length
	expiresAt  int64  // unix nanoseconds, 0 = never
	prev, next *entry
}

func newIndex() *index {
	ix := &index{m: make(map[uint64]*entry)}
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

// put records the file of hash as holding key, most recently used. A file
// of the same hash holding another key is replaced.
func (ix *index) put(hash uint64, key string, size, expiresAt int64) {
	if e, ok := ix.m[hash]; ok {
		ix.bytes += size - e.size
		e.key, e.size, e.expiresAt = key, size, expiresAt
		ix.unlink(e)
		ix.pushBack(e)
		return
	}
	e := &entry{hash: hash, key: key, size: size, expiresAt: expiresAt}
	ix.m[hash] = e
	ix.bytes += size
	ix.pushBack(e)
}

// get returns the entry of hash if it holds key.
func (ix *index) get(hash uint64, key []byte) *entry {
	if e, ok := ix.m[hash]; ok && e.key == string(key) {
		return e
	}
	return nil
}

func (ix *index) remove(e *entry) {
	ix.unlink(e)
	delete(ix.m, e.hash)
	ix.bytes -= e.size
}

// touch makes e the most recently used.
func (ix *index) touch(e *entry) {
	ix.unlink(e)
	ix.pushBack(e)
}

// victim is the least recently used entry, or nil.
func (ix *index) victim() *entry {
	if ix.root.next == &ix.root {
		return nil
	}
	return ix.root.next
}

func (ix *index) len() int { return len(ix.m) }
