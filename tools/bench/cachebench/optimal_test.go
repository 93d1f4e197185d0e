package cachebench

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOptimalHits(t *testing.T) {
	tests := []struct {
		name     string
		keys     []uint64
		capacity int
		want     int
	}{
		{"empty", nil, 2, 0},
		{"no room", []uint64{1, 1, 1}, 0, 0},
		{"all fit", []uint64{1, 2, 1, 2, 3, 3}, 3, 3},
		// Misses 1 and 2; 3 is requested again last, so it stays out; hits
		// 1 and 2; misses 3.
		{"loop one longer than the cache", []uint64{1, 2, 3, 1, 2, 3}, 2, 2},
		// Miss 5, hit 5; 6 comes back after 5, so it stays out; hit 5;
		// miss 6, which evicts 5 (never requested again); hit 6.
		{"one entry", []uint64{5, 5, 6, 5, 6, 6}, 1, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, optimalHits(tc.keys, tc.capacity))
		})
	}
}

// TestOptimalHitsIsTheBestOfAllEvictionChoices compares the optimum with
// an exhaustive search over every eviction choice, on short random traces,
// and checks that LRU never beats it.
func TestOptimalHitsIsTheBestOfAllEvictionChoices(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for range 300 {
		keys := make([]uint64, 1+r.IntN(11))
		for i := range keys {
			keys[i] = uint64(r.IntN(5))
		}
		capacity := 1 + r.IntN(3)
		want := bestHits(keys, capacity, map[uint64]bool{})
		require.Equal(t, want, optimalHits(keys, capacity), "keys %v, capacity %d", keys, capacity)

		l := newLRU(capacity)
		lruHits := 0
		for _, k := range keys {
			if l.access(k) {
				lruHits++
			}
		}
		require.LessOrEqual(t, lruHits, want)
	}
}

// bestHits tries every eviction on every miss.
func bestHits(keys []uint64, capacity int, cached map[uint64]bool) int {
	if len(keys) == 0 {
		return 0
	}
	k, rest := keys[0], keys[1:]
	if cached[k] {
		return 1 + bestHits(rest, capacity, cached)
	}
	with := func(evict uint64, evicting bool) int {
		next := make(map[uint64]bool, len(cached)+1)
		for c := range cached {
			if !evicting || c != evict {
				next[c] = true
			}
		}
		next[k] = true
		return bestHits(rest, capacity, next)
	}
	if len(cached) < capacity {
		return with(0, false)
	}
	best := bestHits(rest, capacity, cached) // bypass: do not cache k
	for c := range cached {
		best = max(best, with(c, true))
	}
	return best
}

func TestSummarizeCellSaysWhenTheOptimumLeavesNoRoom(t *testing.T) {
	c := cell{trace: &Trace{Name: "t", Keys: make([]uint64, 100)}, capacity: 10}
	runs := map[string][]runResult{
		SystemOurs:      {{HitPercent: 60}},
		SystemOtter:     {{HitPercent: 55}},
		SystemRistretto: {{HitPercent: 60}},
	}
	cr := summarizeCell(c, []string{SystemOurs, SystemOtter, SystemRistretto}, runs, 62)
	require.InDelta(t, 62.0, cr.OptimalHitPercent, 1e-9)
	require.InDelta(t, -2.0, cr.Points["vs_optimal_points"].Median, 1e-9)
	require.True(t, cr.GoalsAttainable["vs_otter_points"])
	require.False(t, cr.GoalsAttainable["vs_ristretto_points"], "60 + 3 > 62")
	require.False(t, cr.GoalsMet["vs_ristretto_points"])

	cr = summarizeCell(c, []string{SystemOurs, SystemOtter, SystemRistretto}, runs, 70)
	require.True(t, cr.GoalsAttainable["vs_ristretto_points"])
}
