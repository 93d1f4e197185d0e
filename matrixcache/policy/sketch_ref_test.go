package policy

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// refSketch is the sketch's counter layout written out plainly: row i of
// key uses word block+2i+(h&1) and nibble (h>>1)&15 of h = counterHash>>8i.
type refSketch struct{ s sketch }

func (r *refSketch) slot(block, ch uint64, row int) (uint64, uint64) {
	h := ch >> (row << 3)
	return block + h&1 + uint64(row<<1), ((h >> 1) & 15) << 2
}

func (r *refSketch) increment(key uint64) {
	block, ch := r.s.hashes(key)
	added := false
	for row := range 4 {
		w, off := r.slot(block, ch, row)
		if (r.s.table[w]>>off)&15 != 15 {
			r.s.table[w] += 1 << off
			added = true
		}
	}
	if added {
		r.s.size++
		if r.s.size >= r.s.sampleSize {
			r.s.reset()
		}
	}
}

func (r *refSketch) frequency(key uint64) int {
	block, ch := r.s.hashes(key)
	f := uint64(15)
	for row := range 4 {
		w, off := r.slot(block, ch, row)
		f = min(f, (r.s.table[w]>>off)&15)
	}
	return int(f)
}

// The sketch's counters, resets and estimates are exactly the reference
// layout's, over skewed random keys that saturate counters and trigger
// resets.
func TestSketchMatchesItsReferenceLayout(t *testing.T) {
	for _, capacity := range []int64{1, 8, 100, 4096} {
		var s sketch
		s.ensureCapacity(capacity)
		var r refSketch
		r.s.ensureCapacity(capacity)
		rng := rand.New(rand.NewPCG(uint64(capacity), 7))
		z := rand.NewZipf(rng, 1.1, 1, uint64(4*capacity))
		for i := range 50_000 {
			k := z.Uint64()
			s.increment(k)
			r.increment(k)
			if i%97 == 0 {
				q := rng.Uint64N(uint64(4 * capacity))
				require.Equal(t, r.frequency(q), s.frequency(q), "capacity %d step %d key %d", capacity, i, q)
			}
		}
		require.Equal(t, r.s.table, s.table, "capacity %d", capacity)
		require.Equal(t, r.s.size, s.size)
	}
}
