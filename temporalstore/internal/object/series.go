package object

import (
	"slices"
	"sort"
)

// Series is a feature series: points with unique timestamps (Unix ms), in
// ascending order, as parallel arrays. A window read is a binary search
// and a slice, O(log n + k); an append at the tail is amortized O(1), an
// insert in the middle O(n); dropping the oldest points is O(1) until the
// dropped prefix outweighs the rest, when the arrays are compacted.
type Series struct {
	ts   []int64
	vals [][]byte
	// bytes is the values' total length, for Object.Size.
	bytes int64
	// slab is where Upsert copies small values, one after another, so a
	// window's values sit together in memory: a read walks a few lines
	// instead of one scattered allocation per point. A chunk is freed
	// once no value in it is left.
	slab []byte
	// roll is the rollup ladder, once an aggregate asked for it; rollFine
	// says it keeps its 1 s level whatever the series' density.
	roll     *rollup
	rollFine bool
	rollMu   rollMu
}

// Len is the number of points.
func (s *Series) Len() int { return len(s.ts) }

// Bytes is the values' total length.
func (s *Series) Bytes() int64 { return s.bytes }

// At returns point i (0 is the oldest).
func (s *Series) At(i int) (int64, []byte) { return s.ts[i], s.vals[i] }

// search returns the index of the first point at or after ts.
func (s *Series) search(ts int64) int {
	return sort.Search(len(s.ts), func(i int) bool { return s.ts[i] >= ts })
}

// Window returns the index range [lo, hi) of the points with start <= ts
// <= end (empty when start > end).
func (s *Series) Window(start, end int64) (lo, hi int) {
	if start > end {
		return 0, 0
	}
	lo = s.search(start)
	hi = lo + sort.Search(len(s.ts)-lo, func(i int) bool { return s.ts[lo+i] > end })
	return lo, hi
}

// Get returns the value at ts.
func (s *Series) Get(ts int64) ([]byte, bool) {
	i := s.search(ts)
	if i < len(s.ts) && s.ts[i] == ts {
		return s.vals[i], true
	}
	return nil, false
}

// Slab sizes: values up to slabMaxValue bytes are copied into chunks of
// slabChunk bytes; larger ones get their own allocation.
const (
	slabChunk    = 4 << 10
	slabMaxValue = 512
)

// keep copies v into the slab (or alone, when large) and returns the copy,
// its capacity clipped so that nothing can append over its neighbour.
func (s *Series) keep(v []byte) []byte {
	if len(v) > slabMaxValue {
		return clone(v)
	}
	if cap(s.slab)-len(s.slab) < len(v) {
		s.slab = make([]byte, 0, slabChunk)
	}
	at := len(s.slab)
	s.slab = append(s.slab, v...)
	return s.slab[at:len(s.slab):len(s.slab)]
}

// clone returns a copy of s with its own point arrays, sharing the values'
// bytes: a stored value is clipped and never written again, and the copy's
// new values go to a slab of its own. Its rollup is built again if an
// aggregate asks for it.
func (s *Series) clone() *Series {
	s.rollMu.Lock() // readers set rollFine
	fine := s.rollFine
	s.rollMu.Unlock()
	return &Series{ts: slices.Clone(s.ts), vals: slices.Clone(s.vals), bytes: s.bytes, rollFine: fine}
}

// Upsert sets the value at ts (v is copied) and reports whether the point
// is new.
func (s *Series) Upsert(ts int64, v []byte) bool {
	v = s.keep(v)
	if s.roll != nil {
		s.roll.add(ts, v)
	}
	n := len(s.ts)
	if n == 0 || ts > s.ts[n-1] {
		s.ts, s.vals = append(s.ts, ts), append(s.vals, v)
		s.bytes += int64(len(v))
		return true
	}
	i := s.search(ts)
	if s.ts[i] == ts {
		if s.roll != nil {
			s.roll.remove(ts, s.vals[i])
		}
		s.bytes += int64(len(v) - len(s.vals[i]))
		s.vals[i] = v
		return false
	}
	s.ts, s.vals = slices.Insert(s.ts, i, ts), slices.Insert(s.vals, i, v)
	s.bytes += int64(len(v))
	return true
}

// DeleteRange removes the points with start <= ts <= end and returns how
// many there were.
func (s *Series) DeleteRange(start, end int64) int {
	lo, hi := s.Window(start, end)
	for i, v := range s.vals[lo:hi] {
		s.bytes -= int64(len(v))
		if s.roll != nil {
			s.roll.remove(s.ts[lo+i], v)
		}
	}
	s.ts, s.vals = slices.Delete(s.ts, lo, hi), slices.Delete(s.vals, lo, hi)
	return hi - lo
}

// TrimOldest drops the oldest points while more than max remain, and
// returns how many it dropped.
func (s *Series) TrimOldest(max int) int {
	n := len(s.ts) - max
	if n <= 0 {
		return 0
	}
	for i := range n {
		s.bytes -= int64(len(s.vals[i]))
		if s.roll != nil {
			s.roll.remove(s.ts[i], s.vals[i])
		}
		s.vals[i] = nil
	}
	s.ts, s.vals = s.ts[n:], s.vals[n:]
	if cap(s.ts) > 2*len(s.ts)+64 {
		// The dropped prefix is still allocated: give it back.
		s.ts, s.vals = slices.Clone(s.ts), slices.Clone(s.vals)
	}
	return n
}
