package policy

import "math/bits"

// sketch is a count-min sketch of 4-bit counters estimating how often each
// key was seen recently, as in Caffeine's FrequencySketch. Each key has four
// counters, one per row, packed 16 to a uint64 word. When the number of
// increments reaches sampleSize (10x the capacity), every counter is halved,
// so old popularity fades.
type sketch struct {
	table      []uint64
	mask       uint64
	capacity   int64
	sampleSize int64
	size       int64
}

var sketchSeeds = [4]uint64{
	0xc3a5c85c97cb3127, 0xb492b66fbe98f273, 0x9ae16a3b2f90404f, 0xcbf29ce484222325,
}

const (
	sketchMaxCapacity = 1 << 26
	resetMask         = 0x7777777777777777
	oneMask           = 0x1111111111111111
)

// ensureCapacity sizes the sketch for capacity distinct keys. Growing it
// drops the counts, as Caffeine does; shrinking is ignored.
func (s *sketch) ensureCapacity(capacity int64) {
	capacity = min(max(capacity, 1), sketchMaxCapacity)
	if capacity <= s.capacity {
		return
	}
	n := uint64(1) << bits.Len64(uint64(max(capacity, 8))-1)
	s.table = make([]uint64, n)
	s.mask = n - 1
	s.capacity = capacity
	s.sampleSize = 10 * capacity
	s.size = 0
}

// spread mixes a key so that sequential keys spread over the table
// (murmur3's 64-bit finaliser).
func spread(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func (s *sketch) indexOf(h uint64, row int) uint64 {
	h = (h + sketchSeeds[row]) * sketchSeeds[row]
	h += h >> 32
	return h & s.mask
}

// frequency returns the estimated count of key, 0 to 15.
func (s *sketch) frequency(key uint64) int {
	if s.table == nil {
		return 0
	}
	h := spread(key)
	start := (h & 3) << 2
	f := uint64(15)
	for row := range 4 {
		off := (start + uint64(row)) << 2
		f = min(f, (s.table[s.indexOf(h, row)]>>off)&15)
	}
	return int(f)
}

// increment counts one occurrence of key.
func (s *sketch) increment(key uint64) {
	if s.table == nil {
		return
	}
	h := spread(key)
	start := (h & 3) << 2
	added := false
	for row := range 4 {
		i := s.indexOf(h, row)
		off := (start + uint64(row)) << 2
		if (s.table[i]>>off)&15 != 15 {
			s.table[i] += 1 << off
			added = true
		}
	}
	if added {
		s.size++
		if s.size >= s.sampleSize {
			s.reset()
		}
	}
}

// reset halves every counter.
func (s *sketch) reset() {
	odd := 0
	for i, w := range s.table {
		odd += bits.OnesCount64(w & oneMask)
		s.table[i] = (w >> 1) & resetMask
	}
	s.size = (s.size - int64(odd>>2)) >> 1
}
