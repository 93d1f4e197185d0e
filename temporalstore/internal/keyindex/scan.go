package keyindex

import "math/bits"

// mixOf is the 64-bit value a tag's home is taken from (see home): slots
// are in home order, and home is monotonic in it, so it orders a scan.
func mixOf(tag uint32) uint64 {
	m := uint64(tag) * 0x9e3779b97f4a7c15
	return m ^ m>>29
}

// homeOfMix is home for a mix value.
func (x *Index) homeOfMix(m uint64) uint64 {
	hi, _ := bits.Mul64(m, x.n)
	return hi
}

// firstMix is the smallest mix value whose home is h (h < n).
func (x *Index) firstMix(h uint64) uint64 {
	// ceil(h * 2^64 / n)
	q, r := bits.Div64(h, 0, x.n)
	if r != 0 {
		q++
	}
	return q
}

// Scan calls fn for entries whose position in the scan order is at cursor
// or after it, at least count of them unless the table ends first, and
// returns the cursor to continue from (0 when the scan is done). Start at
// 0. As Redis's SCAN promises, an entry present for the whole scan is
// returned at least once, across inserts, deletes and resizes between
// calls, and an entry may be returned more than once. The scan order is the
// entries' tag mix, on which the table's layout is built, so a resize does
// not move an entry relative to the cursor.
func (x *Index) Scan(cursor uint64, count int, fn func(Entry)) uint64 {
	if x.live == 0 {
		return 0
	}
	n := 0
	for h := x.homeOfMix(cursor); h < x.n; h++ {
		if n >= count && h > x.homeOfMix(cursor) {
			return x.firstMix(h)
		}
		// The entries of home h are contiguous from position h on, after
		// any displaced from earlier homes.
		i := h
		for {
			s := &x.slots[i]
			if s.meta == 0 {
				break
			}
			sh := x.home(s.tag)
			if sh == h {
				if mixOf(s.tag) >= cursor {
					fn(Entry{Addr: s.addr, Meta: s.meta})
					n++
				}
			} else if x.dist(i, s.tag) < x.distFrom(i, h) {
				break // a later home: home h's entries are done
			}
			i = x.next(i)
			if i == h {
				break
			}
		}
	}
	return 0
}

// distFrom is how far position i is from position h, cyclically.
func (x *Index) distFrom(i, h uint64) uint64 {
	if i >= h {
		return i - h
	}
	return i + x.n - h
}
