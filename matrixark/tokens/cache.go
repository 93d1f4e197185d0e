package tokens

import "sync"

// DefaultCacheBytes bounds the texts a Cache keeps unless told otherwise.
const DefaultCacheBytes = 16 << 20

// Cache remembers the counts of the texts c counted, up to about maxBytes
// of texts (DefaultCacheBytes when maxBytes ≤ 0): a pack prices every
// candidate block, and a session's blocks come back pack after pack,
// while o200k_base costs about 1.5 µs a token here. Two generations: a
// text found in the older one moves to the newer, and when the newer
// fills it becomes the older, so what is used stays and the rest goes.
// Safe for concurrent use if c is.
func Cache(c Counter, maxBytes int) Counter {
	if maxBytes <= 0 {
		maxBytes = DefaultCacheBytes
	}
	return &cache{c: c, half: maxBytes / 2, cur: map[string]int{}}
}

type cache struct {
	c    Counter
	half int // bytes of texts a generation holds

	mu        sync.Mutex
	cur, prev map[string]int
	curBytes  int
}

func (x *cache) Name() string { return x.c.Name() }

func (x *cache) Count(s string) int {
	x.mu.Lock()
	n, ok := x.cur[s]
	if !ok {
		if n, ok = x.prev[s]; ok {
			x.keepLocked(s, n)
		}
	}
	x.mu.Unlock()
	if ok {
		return n
	}
	n = x.c.Count(s)
	x.mu.Lock()
	x.keepLocked(s, n)
	x.mu.Unlock()
	return n
}

func (x *cache) keepLocked(s string, n int) {
	if len(s) > x.half {
		return // a text this large would flush everything else
	}
	if x.curBytes+len(s) > x.half {
		x.prev, x.cur, x.curBytes = x.cur, map[string]int{}, 0
	}
	if _, had := x.cur[s]; !had {
		x.cur[s] = n
		x.curBytes += len(s)
	}
}
