package shard

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStringAddrs(t *testing.T) {
	tests := []struct {
		name   string
		add    []uint64
		remove []uint64
		want   uint64
	}{
		{"empty", nil, nil, math.MaxUint64},
		{"one", []uint64{5000}, nil, 5000 / addrBucket * addrBucket},
		{"lowest of several", []uint64{9000, 3000, 70_000}, nil, 3000 / addrBucket * addrBucket},
		{"the lowest removed", []uint64{9000, 3000, 70_000}, []uint64{3000}, 9000 / addrBucket * addrBucket},
		{"a bucket shared", []uint64{addrBucket + 1, addrBucket + 2, 5000}, []uint64{addrBucket + 1}, addrBucket},
		{"all removed", []uint64{1, 2}, []uint64{2, 1}, math.MaxUint64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a stringAddrs
			for _, x := range tc.add {
				a.add(x)
			}
			for _, x := range tc.remove {
				a.remove(x)
			}
			low, ok := a.lowest()
			require.True(t, ok)
			require.Equal(t, tc.want, low)
			require.Equal(t, len(tc.add)-len(tc.remove), counted(&a))
		})
	}
}

func TestStringAddrsRefuseToGuessOnceInconsistent(t *testing.T) {
	var a stringAddrs
	a.add(5000)
	a.remove(100_000) // never added
	_, ok := a.lowest()
	require.False(t, ok)
}

// TestStringAddrsMatchAModel moves entries the way a shard's writes do
// (each rewrite to the head of a growing log, some deletes and adds, a
// rebuild in random order now and then) and compares with the exact
// minimum.
func TestStringAddrsMatchAModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var a stringAddrs
	live := map[int]uint64{} // key -> log index
	head := uint64(1)
	for step := range 200_000 {
		k := r.IntN(2000)
		old, ok := live[k]
		switch {
		case r.IntN(10) == 0 && ok:
			a.remove(old)
			delete(live, k)
		default:
			head += uint64(1 + r.IntN(3))
			if ok {
				a.remove(old)
			}
			a.add(head)
			live[k] = head
		}
		if step%50_000 == 49_999 {
			// A reopen: the counts rebuilt from the index, in hash order.
			a = stringAddrs{}
			for _, x := range live {
				a.add(x)
			}
		}
		if step%997 == 0 {
			want := uint64(math.MaxUint64)
			for _, x := range live {
				want = min(want, x)
			}
			low, ok := a.lowest()
			require.True(t, ok)
			if want == math.MaxUint64 {
				require.Equal(t, want, low)
			} else {
				require.Equal(t, want/addrBucket*addrBucket, low, "step %d", step)
			}
			require.Equal(t, len(live), counted(&a))
		}
	}
	require.LessOrEqual(t, cap(a.counts), 4*len(a.counts)+64, "the window's storage follows it")
}

// requireStringAddrs checks the shard's counts against a scan of its index.
func requireStringAddrs(t *testing.T, s *Shard) {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	var want stringAddrs
	for e := range s.index.All() {
		if !isObject(e) {
			want.add(e.Addr)
		}
	}
	require.False(t, s.strs.broken, "the counts found a removal they did not count")
	require.Equal(t, len(want.counts), len(s.strs.counts))
	if len(want.counts) > 0 {
		require.Equal(t, want.base, s.strs.base)
		require.Equal(t, want.counts, s.strs.counts)
	}
	low, ok := s.strs.lowest()
	require.True(t, ok)
	require.LessOrEqual(t, low, s.scanLowestStringLocked())
}

// counted is the number of entries a counts.
func counted(a *stringAddrs) int {
	n := 0
	for _, c := range a.counts {
		n += int(c)
	}
	return n
}
