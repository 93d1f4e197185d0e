package object

import "strings"

// maxLevel bounds a skip list node's height: 2^32 members at p = 1/4.
const maxLevel = 32

// ZSet is a sorted set: members ordered by score, then by member bytes.
type ZSet struct {
	dict   map[string]float64
	head   *zNode
	tail   *zNode
	level  int
	length int
	seed   uint64 // level generator state (xorshift64)
	// bytes is the members' total length, for Object.Size.
	bytes int64
}

type zNode struct {
	member string
	score  float64
	back   *zNode
	lv     []zLevel
}

type zLevel struct {
	next *zNode
	span int // how many ranks next is ahead
}

// NewZSet returns an empty sorted set.
func NewZSet() *ZSet {
	return &ZSet{
		dict:  map[string]float64{},
		head:  &zNode{lv: make([]zLevel, maxLevel)},
		level: 1,
		seed:  0x9e3779b97f4a7c15,
	}
}

// Len is the number of members.
func (z *ZSet) Len() int { return z.length }

// Bytes is the members' total length.
func (z *ZSet) Bytes() int64 { return z.bytes }

// Score returns member's score.
func (z *ZSet) Score(member string) (float64, bool) {
	s, ok := z.dict[member]
	return s, ok
}

func (z *ZSet) randomLevel() int {
	lvl := 1
	for lvl < maxLevel {
		z.seed ^= z.seed << 13
		z.seed ^= z.seed >> 7
		z.seed ^= z.seed << 17
		if z.seed&3 != 0 {
			break
		}
		lvl++
	}
	return lvl
}

// less orders (score, member) pairs.
func less(s1 float64, m1 string, s2 float64, m2 string) bool {
	return s1 < s2 || s1 == s2 && m1 < m2
}

// Add sets member's score. It reports whether the member is new, and
// whether an existing member's score changed.
func (z *ZSet) Add(member string, score float64) (added, changed bool) {
	if old, ok := z.dict[member]; ok {
		if old == score {
			return false, false
		}
		z.remove(member, old)
		z.insert(member, score)
		z.dict[member] = score
		return false, true
	}
	z.insert(member, score)
	z.dict[member] = score
	z.bytes += int64(len(member))
	return true, false
}

// Remove deletes member and reports whether it was there.
func (z *ZSet) Remove(member string) bool {
	s, ok := z.dict[member]
	if !ok {
		return false
	}
	z.remove(member, s)
	delete(z.dict, member)
	z.bytes -= int64(len(member))
	return true
}

func (z *ZSet) insert(member string, score float64) {
	var update [maxLevel]*zNode
	var rank [maxLevel]int
	x := z.head
	for i := z.level - 1; i >= 0; i-- {
		if i < z.level-1 {
			rank[i] = rank[i+1]
		}
		for n := x.lv[i].next; n != nil && less(n.score, n.member, score, member); n = x.lv[i].next {
			rank[i] += x.lv[i].span
			x = n
		}
		update[i] = x
	}
	lvl := z.randomLevel()
	if lvl > z.level {
		for i := z.level; i < lvl; i++ {
			rank[i] = 0
			update[i] = z.head
			update[i].lv[i].span = z.length
		}
		z.level = lvl
	}
	n := &zNode{member: member, score: score, lv: make([]zLevel, lvl)}
	for i := range lvl {
		n.lv[i].next = update[i].lv[i].next
		update[i].lv[i].next = n
		n.lv[i].span = update[i].lv[i].span - (rank[0] - rank[i])
		update[i].lv[i].span = rank[0] - rank[i] + 1
	}
	for i := lvl; i < z.level; i++ {
		update[i].lv[i].span++
	}
	if update[0] != z.head {
		n.back = update[0]
	}
	if n.lv[0].next != nil {
		n.lv[0].next.back = n
	} else {
		z.tail = n
	}
	z.length++
}

func (z *ZSet) remove(member string, score float64) {
	var update [maxLevel]*zNode
	x := z.head
	for i := z.level - 1; i >= 0; i-- {
		for n := x.lv[i].next; n != nil && less(n.score, n.member, score, member); n = x.lv[i].next {
			x = n
		}
		update[i] = x
	}
	x = x.lv[0].next
	if x == nil || x.score != score || x.member != member {
		return
	}
	for i := range z.level {
		if update[i].lv[i].next == x {
			update[i].lv[i].span += x.lv[i].span - 1
			update[i].lv[i].next = x.lv[i].next
		} else {
			update[i].lv[i].span--
		}
	}
	if x.lv[0].next != nil {
		x.lv[0].next.back = x.back
	} else {
		z.tail = x.back
	}
	for z.level > 1 && z.head.lv[z.level-1].next == nil {
		z.level--
	}
	z.length--
}

// Rank returns member's 0-based rank in ascending order.
func (z *ZSet) Rank(member string) (int, bool) {
	s, ok := z.dict[member]
	if !ok {
		return 0, false
	}
	// Members ordered before (s, member) are exactly rank many.
	return z.countBefore(func(n *zNode) bool { return less(n.score, n.member, s, member) }), true
}

// countBefore counts the members for which before is true; before must
// hold for a prefix of the order.
func (z *ZSet) countBefore(before func(*zNode) bool) int {
	r := 0
	x := z.head
	for i := z.level - 1; i >= 0; i-- {
		for n := x.lv[i].next; n != nil && before(n); n = x.lv[i].next {
			r += x.lv[i].span
			x = n
		}
	}
	return r
}

// CountBelow returns how many members score below s, or at most s when
// inclusive: the rank where a score range bounded there starts or ends.
func (z *ZSet) CountBelow(s float64, inclusive bool) int {
	if inclusive {
		return z.countBefore(func(n *zNode) bool { return n.score <= s })
	}
	return z.countBefore(func(n *zNode) bool { return n.score < s })
}

// CountBelowLex is CountBelow for members compared as bytes, meaningful
// (as Redis's BYLEX) when every member has the same score.
func (z *ZSet) CountBelowLex(m string, inclusive bool) int {
	if inclusive {
		return z.countBefore(func(n *zNode) bool { return strings.Compare(n.member, m) <= 0 })
	}
	return z.countBefore(func(n *zNode) bool { return n.member < m })
}

// byRank returns the node at 0-based rank r, or nil.
func (z *ZSet) byRank(r int) *zNode {
	if r < 0 || r >= z.length {
		return nil
	}
	r++ // spans count from the head at rank 0
	t := 0
	x := z.head
	for i := z.level - 1; i >= 0; i-- {
		for x.lv[i].next != nil && t+x.lv[i].span <= r {
			t += x.lv[i].span
			x = x.lv[i].next
		}
		if t == r {
			return x
		}
	}
	return nil
}

// Range calls fn for ranks lo..hi inclusive (clamped), ascending, or
// descending from hi when rev, until fn returns false.
func (z *ZSet) Range(lo, hi int, rev bool, fn func(member string, score float64) bool) {
	lo, hi = max(lo, 0), min(hi, z.length-1)
	if lo > hi {
		return
	}
	if rev {
		for n, i := z.byRank(hi), hi; n != nil && i >= lo; n, i = n.back, i-1 {
			if !fn(n.member, n.score) {
				return
			}
		}
		return
	}
	for n, i := z.byRank(lo), lo; n != nil && i <= hi; n, i = n.lv[0].next, i+1 {
		if !fn(n.member, n.score) {
			return
		}
	}
}

// All calls fn for every member in ascending order until it returns false.
func (z *ZSet) All(fn func(member string, score float64) bool) {
	for n := z.head.lv[0].next; n != nil; n = n.lv[0].next {
		if !fn(n.member, n.score) {
			return
		}
	}
}

// Members returns the member → score map. Callers must not modify it.
func (z *ZSet) Members() map[string]float64 { return z.dict }
