package object

import "bytes"

// List is a deque of byte strings in a ring buffer.
type List struct {
	buf  [][]byte
	head int
	n    int
	// bytes is the elements' total length, for Object.Size.
	bytes int64
}

// Len is the number of elements.
func (l *List) Len() int { return l.n }

// Bytes is the elements' total length.
func (l *List) Bytes() int64 { return l.bytes }

func (l *List) at(i int) int { return (l.head + i) % len(l.buf) }

func (l *List) grow() {
	if l.n < len(l.buf) {
		return
	}
	nb := make([][]byte, max(4, 2*len(l.buf)))
	for i := range l.n {
		nb[i] = l.buf[l.at(i)]
	}
	l.buf, l.head = nb, 0
}

// shrink halves the buffer when a quarter or less of it is used, so a
// drained list gives its memory back.
func (l *List) shrink() {
	if len(l.buf) <= 16 || l.n > len(l.buf)/4 {
		return
	}
	nb := make([][]byte, len(l.buf)/2)
	for i := range l.n {
		nb[i] = l.buf[l.at(i)]
	}
	l.buf, l.head = nb, 0
}

// PushFront inserts v (not copied) at the head.
func (l *List) PushFront(v []byte) {
	l.grow()
	l.head = (l.head - 1 + len(l.buf)) % len(l.buf)
	l.buf[l.head] = v
	l.n++
	l.bytes += int64(len(v))
}

// PushBack appends v (not copied) at the tail.
func (l *List) PushBack(v []byte) {
	l.grow()
	l.buf[l.at(l.n)] = v
	l.n++
	l.bytes += int64(len(v))
}

// PopFront removes and returns the head, or nil when empty.
func (l *List) PopFront() []byte {
	if l.n == 0 {
		return nil
	}
	v := l.buf[l.head]
	l.buf[l.head] = nil
	l.head = (l.head + 1) % len(l.buf)
	l.n--
	l.bytes -= int64(len(v))
	l.shrink()
	return v
}

// PopBack removes and returns the tail, or nil when empty.
func (l *List) PopBack() []byte {
	if l.n == 0 {
		return nil
	}
	i := l.at(l.n - 1)
	v := l.buf[i]
	l.buf[i] = nil
	l.n--
	l.bytes -= int64(len(v))
	l.shrink()
	return v
}

// Index returns element i (0 is the head); i must be in range.
func (l *List) Index(i int) []byte { return l.buf[l.at(i)] }

// Set replaces element i; i must be in range.
func (l *List) Set(i int, v []byte) {
	j := l.at(i)
	l.bytes += int64(len(v) - len(l.buf[j]))
	l.buf[j] = v
}

// Trim keeps elements start..stop inclusive (already clamped to the list;
// start > stop empties it).
func (l *List) Trim(start, stop int) {
	if start > stop || start >= l.n {
		l.reset(nil)
		return
	}
	kept := make([][]byte, 0, stop-start+1)
	for i := start; i <= stop; i++ {
		kept = append(kept, l.Index(i))
	}
	l.reset(kept)
}

func (l *List) reset(vs [][]byte) {
	l.buf, l.head, l.n, l.bytes = nil, 0, 0, 0
	for _, v := range vs {
		l.PushBack(v)
	}
}

// Remove deletes up to count elements equal to v: from the head when count
// > 0, from the tail when count < 0, all of them when count is 0. It
// returns how many it removed.
func (l *List) Remove(count int, v []byte) int {
	vs := l.Slice()
	removed := 0
	// Unsigned, so that the count −2⁶³ has a magnitude too.
	limit := uint64(count)
	if count < 0 {
		limit = -limit
	}
	keep := make([]bool, len(vs))
	for i := range keep {
		keep[i] = true
	}
	visit := func(i int) bool {
		if bytes.Equal(vs[i], v) {
			keep[i] = false
			removed++
		}
		return limit == 0 || uint64(removed) < limit
	}
	if count >= 0 {
		for i := 0; i < len(vs) && visit(i); i++ {
		}
	} else {
		for i := len(vs) - 1; i >= 0 && visit(i); i-- {
		}
	}
	if removed == 0 {
		return 0
	}
	out := vs[:0:0]
	for i, k := range keep {
		if k {
			out = append(out, vs[i])
		}
	}
	l.reset(out)
	return removed
}

// Insert puts v before (or after) the first element equal to pivot and
// returns the new length, or -1 when pivot is absent.
func (l *List) Insert(before bool, pivot, v []byte) int {
	vs := l.Slice()
	for i, e := range vs {
		if !bytes.Equal(e, pivot) {
			continue
		}
		if !before {
			i++
		}
		out := make([][]byte, 0, len(vs)+1)
		out = append(append(append(out, vs[:i]...), v), vs[i:]...)
		l.reset(out)
		return l.n
	}
	return -1
}

// Slice returns the elements, head first, in a new slice.
func (l *List) Slice() [][]byte {
	out := make([][]byte, l.n)
	for i := range l.n {
		out[i] = l.Index(i)
	}
	return out
}
