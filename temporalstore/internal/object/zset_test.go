package object

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

type pair struct {
	m string
	s float64
}

// reference is the sorted order a ZSet must hold.
func reference(m map[string]float64) []pair {
	var ps []pair
	for k, v := range m {
		ps = append(ps, pair{k, v})
	}
	slices.SortFunc(ps, func(a, b pair) int {
		if c := cmp.Compare(a.s, b.s); c != 0 {
			return c
		}
		return cmp.Compare(a.m, b.m)
	})
	return ps
}

// TestZSetAgainstReference drives a ZSet and a map with the same random
// operations and checks order, ranks, counts and ranges after each step.
func TestZSetAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	z := NewZSet()
	ref := map[string]float64{}
	for step := range 3000 {
		m := fmt.Sprintf("m%03d", rng.IntN(300))
		if rng.IntN(3) == 0 {
			_, had := ref[m]
			require.Equal(t, had, z.Remove(m))
			delete(ref, m)
		} else {
			s := float64(rng.IntN(50))
			old, had := ref[m]
			added, changed := z.Add(m, s)
			require.Equal(t, !had, added)
			require.Equal(t, had && old != s, changed)
			ref[m] = s
		}
		if step%50 != 0 {
			continue
		}
		want := reference(ref)
		require.Equal(t, len(want), z.Len())
		var got []pair
		z.All(func(m string, s float64) bool { got = append(got, pair{m, s}); return true })
		require.Equal(t, want, append([]pair(nil), got...))
		for i, p := range want {
			r, ok := z.Rank(p.m)
			require.True(t, ok)
			require.Equal(t, i, r)
		}
		for s := -1.0; s <= 51; s += 7 {
			below, atMost := 0, 0
			for _, p := range want {
				if p.s < s {
					below++
				}
				if p.s <= s {
					atMost++
				}
			}
			require.Equal(t, below, z.CountBelow(s, false))
			require.Equal(t, atMost, z.CountBelow(s, true))
		}
		lo, hi := rng.IntN(len(want)+2)-1, rng.IntN(len(want)+2)-1
		var fwd, rev []pair
		z.Range(lo, hi, false, func(m string, s float64) bool { fwd = append(fwd, pair{m, s}); return true })
		z.Range(lo, hi, true, func(m string, s float64) bool { rev = append(rev, pair{m, s}); return true })
		var wantR []pair
		for i := max(lo, 0); i <= min(hi, len(want)-1); i++ {
			wantR = append(wantR, want[i])
		}
		require.Equal(t, wantR, fwd)
		slices.Reverse(rev)
		require.Equal(t, wantR, rev)
	}
}

func TestZSetLex(t *testing.T) {
	z := NewZSet()
	for _, m := range []string{"a", "b", "c", "d", "e"} {
		z.Add(m, 0)
	}
	require.Equal(t, 2, z.CountBelowLex("c", false))
	require.Equal(t, 3, z.CountBelowLex("c", true))
	require.Equal(t, 0, z.CountBelowLex("", false))
	require.Equal(t, 5, z.CountBelowLex("z", true))
}
