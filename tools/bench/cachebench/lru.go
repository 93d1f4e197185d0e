package cachebench

import "container/list"

// lru is a plain least-recently-used cache of keys, the orientation
// baseline: a hit moves the key to the front, an insert into a full cache
// evicts the back. Not safe for concurrent use.
type lru struct {
	capacity int
	order    *list.List // front = most recently used; values are uint64 keys
	items    map[uint64]*list.Element
}

func newLRU(capacity int) *lru {
	return &lru{capacity: capacity, order: list.New(), items: make(map[uint64]*list.Element, capacity)}
}

// get reports whether key is cached, and if so makes it the most recently
// used.
func (c *lru) get(key uint64) bool {
	e, ok := c.items[key]
	if ok {
		c.order.MoveToFront(e)
	}
	return ok
}

// set inserts key as the most recently used, evicting the least recently
// used key when the cache is full.
func (c *lru) set(key uint64) {
	if e, ok := c.items[key]; ok {
		c.order.MoveToFront(e)
		return
	}
	if c.order.Len() >= c.capacity {
		back := c.order.Back()
		c.order.Remove(back)
		delete(c.items, back.Value.(uint64))
	}
	c.items[key] = c.order.PushFront(key)
}

func (c *lru) len() int { return c.order.Len() }

// access replays one request: a hit, or a miss followed by an insert.
func (c *lru) access(key uint64) bool {
	if c.get(key) {
		return true
	}
	c.set(key)
	return false
}

func (c *lru) close() {}
