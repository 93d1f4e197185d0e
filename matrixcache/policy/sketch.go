package policy

import "math/bits"

// sketch is a count-min sketch of 4-bit counters estimating how often each
// key was seen recently, as in Caffeine's FrequencySketch. The table is cut
// into 64-byte blocks of eight words; a key's four counters sit in four
// different words of one block, so a lookup touches one cache line. When
// the number of increments reaches sampleSize (10x the capacity), every
// counter is halved, so old popularity fades.
type sketch struct {
	table      []uint64
	blockMask  uint64
	capacity   int64
	sampleSize int64
	size       int64
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
	s.blockMask = n>>3 - 1
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

// slot returns the word and the bit offset of the key's counter in row i:
// row i uses word 2i or 2i+1 of the key's block.
func (s *sketch) slot(block, counterHash uint64, row int) (word uint64, off uint64) {
	h := counterHash >> (row << 3)
	return block + h&1 + uint64(row<<1), ((h >> 1) & 15) << 2
}

// hashes returns the key's block start and the hash choosing its counters.
func (s *sketch) hashes(key uint64) (block, counterHash uint64) {
	h := spread(key)
	return (h & s.blockMask) << 3, spread(h + 0x9e3779b97f4a7c15)
}

// frequency returns the estimated count of key, 0 to 15.
func (s *sketch) frequency(key uint64) int {
	if s.table == nil {
		return 0
	}
	block, ch := s.hashes(key)
	f := uint64(15)
	for row := range 4 {
		w, off := s.slot(block, ch, row)
		f = min(f, (s.table[w]>>off)&15)
	}
	return int(f)
}

// increment counts one occurrence of key.
func (s *sketch) increment(key uint64) {
	if s.table == nil {
		return
	}
	block, ch := s.hashes(key)
	added := false
	for row := range 4 {
		w, off := s.slot(block, ch, row)
		if (s.table[w]>>off)&15 != 15 {
			s.table[w] += 1 << off
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
