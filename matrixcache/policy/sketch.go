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
	b := s.table[block : block+8 : block+8]
	f := min(
		b[ch&1]>>(ch>>1&15<<2)&15,
		b[2|ch>>8&1]>>(ch>>9&15<<2)&15,
		b[4|ch>>16&1]>>(ch>>17&15<<2)&15,
		b[6|ch>>24&1]>>(ch>>25&15<<2)&15,
	)
	return int(f)
}

// increment counts one occurrence of key. Row r's counter is nibble
// ch>>(8r+1)&15 of word 2r+ch>>8r&1 of the key's block (one cache line);
// the rows are written out, which halves the instructions of a loop.
func (s *sketch) increment(key uint64) {
	if s.table == nil {
		return
	}
	block, ch := s.hashes(key)
	b := s.table[block : block+8 : block+8]
	added := bump(&b[ch&1], ch>>1&15<<2)
	added = bump(&b[2|ch>>8&1], ch>>9&15<<2) || added
	added = bump(&b[4|ch>>16&1], ch>>17&15<<2) || added
	added = bump(&b[6|ch>>24&1], ch>>25&15<<2) || added
	if added {
		s.size++
		if s.size >= s.sampleSize {
			s.reset()
		}
	}
}

// bump adds one to the 4-bit counter at bit off of *w unless it is 15.
func bump(w *uint64, off uint64) bool {
	if *w>>off&15 == 15 {
		return false
	}
	*w += 1 << off
	return true
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

// fold shrinks the sketch to capacity keys and keeps what it counted: a
// key's block is picked by the low bits of its hash, so the blocks that
// share those bits in the smaller table merge, each counter taking the
// larger of its counts; an estimate stays an upper bound of the true count,
// as a count-min sketch's is. The sample (and so the aging period) shrinks
// with it.
func (s *sketch) fold(capacity int64) {
	capacity = min(max(capacity, 1), sketchMaxCapacity)
	if capacity >= s.capacity {
		return
	}
	if n := uint64(1) << bits.Len64(uint64(max(capacity, 8))-1); n < uint64(len(s.table)) {
		small := make([]uint64, n)
		for i, w := range s.table {
			small[uint64(i)&(n-1)] = nibbleMax(small[uint64(i)&(n-1)], w)
		}
		s.table = small
		s.blockMask = n>>3 - 1
	}
	s.capacity = capacity
	s.sampleSize = 10 * capacity
}

// nibbleMax returns, for each of the sixteen 4-bit counters of a word, the
// larger of a's and b's.
func nibbleMax(a, b uint64) uint64 {
	var out uint64
	for off := 0; off < 64; off += 4 {
		out |= max(a>>off&15, b>>off&15) << off
	}
	return out
}
