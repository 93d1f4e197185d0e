package matrixcache

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func indexEntry(h uint64) *entry {
	return &entry{record: fmt.Sprint(h)}
}

// The index agrees with a map under random stores, replacements and
// deletes, with hashes crowded onto few home slots so probe chains,
// tombstones and rebuilds all occur.
func TestIndexMatchesAMap(t *testing.T) {
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 1))
		x, m := newIndex(), map[uint64]*entry{}
		for range 20_000 {
			// Few distinct low bits, many distinct hashes.
			h := uint64(r.IntN(300))<<20 | uint64(r.IntN(4)) + 1
			switch r.IntN(3) {
			case 0, 1:
				e := indexEntry(h)
				x.store(h, e)
				m[h] = e
			default:
				require.Equal(t, m[h], x.delete(h))
				delete(m, h)
			}
			require.Same(t, m[h], x.load(h))
			require.Equal(t, len(m), x.len())
		}
		seen := map[uint64]*entry{}
		for h, e := range x.all() {
			seen[h] = e
		}
		require.Equal(t, m, seen)
		for h, e := range m {
			require.Same(t, e, x.load(h))
		}
	}
}

// Readers racing a writer always find a key that stays stored throughout,
// with its own entry. Under a hash whose tombstone a writer is reusing, a
// reader may briefly find the new key's entry: the cache compares the
// entry's whole key (entry.matches), so that reads as the miss it is, and
// the entry is always a whole one of some key, never a torn one.
func TestIndexConcurrentReaders(t *testing.T) {
	x := newIndex()
	var mu sync.Mutex
	const stable = 64
	for h := uint64(1); h <= stable; h++ {
		x.store(h<<32, indexEntry(h<<32))
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 2))
			for !stop.Load() {
				h := uint64(r.IntN(stable)+1) << 32
				e := x.load(h)
				if e == nil || e.record != fmt.Sprint(h) {
					t.Errorf("stable hash %x: got %v", h, e)
					return
				}
				h = uint64(r.IntN(5000) + 1)
				if e := x.load(h); e != nil && e.record != fmt.Sprint(h) {
					// Another key's entry: a miss to the cache, which
					// compares keys. It must still be a real one.
					if n, err := strconv.ParseUint(e.record, 10, 64); err != nil || n < 1 || n > 5000 {
						t.Errorf("hash %d: a torn entry %q", h, e.record)
						return
					}
				}
			}
		})
	}
	r := rand.New(rand.NewPCG(9, 9))
	for range 100_000 {
		h := uint64(r.IntN(5000) + 1)
		mu.Lock()
		if r.IntN(2) == 0 {
			x.store(h, indexEntry(h))
		} else {
			x.delete(h)
		}
		mu.Unlock()
	}
	stop.Store(true)
	wg.Wait()
}
