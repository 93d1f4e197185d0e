package keyindex

import (
	"iter"
	"math/bits"
)

// Entry is what the index keeps for a key: Addr, the record's address as
// the caller packs it, and Meta, caller-defined bits (type, flags, length).
// Meta must not be zero: a zero Meta marks an empty slot.
type Entry struct {
	Addr uint64
	Meta uint32
}

type slot struct {
	tag  uint32
	meta uint32
	addr uint64
}

// Load bounds: the table grows by growFactor when an insert would take it
// past maxLoad.
const (
	maxLoadNum, maxLoadDen = 9, 10
	growNum, growDen       = 5, 4
	minSlots               = 8
)

// SlotBytes is the memory of one slot.
const SlotBytes = 16

// Index is a shard's key → address table. The zero value is not usable;
// call New.
type Index struct {
	slots []slot
	n     uint64 // len(slots)
	live  int
}

// New returns an empty index with room for about hint keys before it grows.
func New(hint int) *Index {
	n := max(minSlots, hint*maxLoadDen/maxLoadNum+1)
	return &Index{slots: make([]slot, n), n: uint64(n)}
}

// Len is the number of keys.
func (x *Index) Len() int { return x.live }

// Bytes is the memory the slots take.
func (x *Index) Bytes() int { return len(x.slots) * SlotBytes }

// tagOf is the slot tag of a key hash: its high 32 bits, never zero.
func tagOf(h uint64) uint32 {
	t := uint32(h >> 32)
	if t == 0 {
		t = 1
	}
	return t
}

// home is where a tag's probe starts: the tag mixed (so that tags differing
// in low bits spread) and mapped onto [0, n) by multiplication.
func (x *Index) home(tag uint32) uint64 {
	m := uint64(tag) * 0x9e3779b97f4a7c15
	m ^= m >> 29
	hi, _ := bits.Mul64(m, x.n)
	return hi
}

// dist is how far slot i is from the home of its tag.
func (x *Index) dist(i uint64, tag uint32) uint64 {
	h := x.home(tag)
	if i >= h {
		return i - h
	}
	return i + x.n - h
}

func (x *Index) next(i uint64) uint64 {
	if i++; i == x.n {
		return 0
	}
	return i
}

// find returns the slot of the key with hash h, or -1. A probe stops at an
// empty slot or at a slot nearer its home than the key would be (Robin Hood
// order), so a miss is as short as a hit.
func (x *Index) find(h uint64, match func(Entry) bool) int {
	tag := tagOf(h)
	i := x.home(tag)
	for d := uint64(0); ; d++ {
		s := &x.slots[i]
		if s.meta == 0 || x.dist(i, s.tag) < d {
			return -1
		}
		if s.tag == tag && match(Entry{Addr: s.addr, Meta: s.meta}) {
			return int(i)
		}
		i = x.next(i)
	}
}

// Get returns the entry of the key with hash h for which match is true.
func (x *Index) Get(h uint64, match func(Entry) bool) (Entry, bool) {
	i := x.find(h, match)
	if i < 0 {
		return Entry{}, false
	}
	s := &x.slots[i]
	return Entry{Addr: s.addr, Meta: s.meta}, true
}

// Put stores e for the key with hash h: it replaces the entry match
// accepts, if any, and returns the old one. e.Meta must not be zero.
func (x *Index) Put(h uint64, e Entry, match func(Entry) bool) (old Entry, replaced bool) {
	if e.Meta == 0 {
		panic("keyindex: zero Meta")
	}
	if i := x.find(h, match); i >= 0 {
		s := &x.slots[i]
		old = Entry{Addr: s.addr, Meta: s.meta}
		s.addr, s.meta = e.Addr, e.Meta
		return old, true
	}
	if uint64(x.live+1)*maxLoadDen > x.n*maxLoadNum {
		x.resize(max(x.n*growNum/growDen, x.n+1))
	}
	x.insert(slot{tag: tagOf(h), meta: e.Meta, addr: e.Addr})
	x.live++
	return Entry{}, false
}

// insert places s, known absent, by Robin Hood: it takes the place of the
// first slot that sits nearer its home, which moves on in turn.
func (x *Index) insert(s slot) {
	i := x.home(s.tag)
	for d := uint64(0); ; d++ {
		cur := &x.slots[i]
		if cur.meta == 0 {
			*cur = s
			return
		}
		if cd := x.dist(i, cur.tag); cd < d {
			*cur, s = s, *cur
			d = cd
		}
		i = x.next(i)
	}
}

// Delete removes the key with hash h that match accepts and returns its
// entry. The slots after it shift back, so no tombstone is left.
func (x *Index) Delete(h uint64, match func(Entry) bool) (Entry, bool) {
	i := x.find(h, match)
	if i < 0 {
		return Entry{}, false
	}
	at := uint64(i)
	old := Entry{Addr: x.slots[at].addr, Meta: x.slots[at].meta}
	for {
		nx := x.next(at)
		s := x.slots[nx]
		if s.meta == 0 || x.dist(nx, s.tag) == 0 {
			break
		}
		x.slots[at] = s
		at = nx
	}
	x.slots[at] = slot{}
	x.live--
	return old, true
}

func (x *Index) resize(n uint64) {
	old := x.slots
	x.slots, x.n = make([]slot, n), n
	for _, s := range old {
		if s.meta != 0 {
			x.insert(s)
		}
	}
}

// All yields every entry, in table order.
func (x *Index) All() iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		for _, s := range x.slots {
			if s.meta != 0 && !yield(Entry{Addr: s.addr, Meta: s.meta}) {
				return
			}
		}
	}
}

// Shrink rebuilds the table at the size a fresh index of its keys would
// have, when it holds under a quarter of what its slots could: deletes
// never shrink it on their own. It returns the bytes it gave back.
func (x *Index) Shrink() int {
	want := uint64(max(minSlots, x.live*maxLoadDen/maxLoadNum+1))
	if x.n <= minSlots || uint64(x.live)*4 >= x.n*maxLoadNum/maxLoadDen || want >= x.n {
		return 0
	}
	before := x.Bytes()
	x.resize(want * growNum / growDen)
	return before - x.Bytes()
}

// Touch loads the home slot of the key with hash h and returns its meta,
// for a caller about to look up many keys: loading every key's home slot
// first lets the processor wait for their cache misses together rather
// than one lookup at a time.
func (x *Index) Touch(h uint64) uint32 { return x.slots[x.home(tagOf(h))].meta }

// Peek returns the first entry whose tag is h's, without checking the key:
// the entry Get would most likely match, to touch what it points at.
func (x *Index) Peek(h uint64) (Entry, bool) {
	return x.Get(h, func(Entry) bool { return true })
}
