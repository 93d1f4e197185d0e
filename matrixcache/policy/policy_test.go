package policy

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// constructors runs a test against every Policy.
var constructors = []struct {
	name string
	new  func(capacity int64) Policy
}{
	{"TinyLFU", func(c int64) Policy { return NewTinyLFU(c) }},
	{"SLRU", func(c int64) Policy { return NewSLRU(c, SLRUOptions{}) }},
	{"FIFO", func(c int64) Policy { return NewFIFO(c) }},
	{"ARC", func(c int64) Policy { return NewARC(c) }},
}

func forEachPolicy(t *testing.T, f func(t *testing.T, newPolicy func(int64) Policy)) {
	for _, c := range constructors {
		t.Run(c.name, func(t *testing.T) { f(t, c.new) })
	}
}

// fill admits keys 1..n with cost 1 and fails on any error.
func fill(t *testing.T, p Policy, n int) {
	t.Helper()
	for k := 1; k <= n; k++ {
		_, err := p.Admit(uint64(k), 1, nil)
		require.NoError(t, err)
	}
}

func TestAdmitErrors(t *testing.T) {
	forEachPolicy(t, func(t *testing.T, newPolicy func(int64) Policy) {
		tests := []struct {
			name string
			cost int64
			want error
		}{
			{"zero cost", 0, ErrInvalidCost},
			{"negative cost", -3, ErrInvalidCost},
			{"larger than capacity", 101, ErrTooLarge},
			{"exactly capacity", 100, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := newPolicy(100)
				victims, err := p.Admit(7, tt.cost, nil)
				require.ErrorIs(t, err, tt.want)
				require.Empty(t, victims)
				if tt.want != nil {
					require.Zero(t, p.Len())
					require.Zero(t, p.Cost())
					require.False(t, p.Contains(7))
				}
			})
		}
	})
}

func TestAccessAndLen(t *testing.T) {
	forEachPolicy(t, func(t *testing.T, newPolicy func(int64) Policy) {
		p := newPolicy(10)
		require.False(t, p.Access(1))
		_, err := p.Admit(1, 3, nil)
		require.NoError(t, err)
		require.True(t, p.Access(1))
		require.True(t, p.Contains(1))
		require.Equal(t, 1, p.Len())
		require.EqualValues(t, 3, p.Cost())
		require.EqualValues(t, 10, p.Capacity())

		// Updating a resident key's cost adjusts the total.
		_, err = p.Admit(1, 5, nil)
		require.NoError(t, err)
		require.Equal(t, 1, p.Len())
		require.EqualValues(t, 5, p.Cost())

		require.True(t, p.Remove(1))
		require.False(t, p.Remove(1))
		require.False(t, p.Contains(1))
		require.Zero(t, p.Len())
		require.Zero(t, p.Cost())
	})
}

func TestEvictionKeepsCostWithinCapacity(t *testing.T) {
	forEachPolicy(t, func(t *testing.T, newPolicy func(int64) Policy) {
		p := newPolicy(100)
		resident := map[uint64]bool{}
		var victims []uint64
		for k := uint64(1); k <= 1000; k++ {
			cost := int64(k%7 + 1)
			var err error
			victims, err = p.Admit(k, cost, victims[:0])
			if err == nil {
				resident[k] = true
			} else {
				require.ErrorIs(t, err, ErrRejected)
			}
			for _, v := range victims {
				require.NotEqual(t, k, v, "the admitted key is never a victim")
				require.True(t, resident[v], "victim %d was not resident", v)
				delete(resident, v)
			}
			require.LessOrEqual(t, p.Cost(), p.Capacity())
			require.Equal(t, len(resident), p.Len())
			if k%3 == 0 {
				p.Access(k)
			}
		}
	})
}

func TestWeightedEntryEvictsUntilItFits(t *testing.T) {
	forEachPolicy(t, func(t *testing.T, newPolicy func(int64) Policy) {
		p := newPolicy(100)
		fill(t, p, 100)
		// TinyLFU rejects a newcomer until it has been seen more often than
		// the entries it would displace; each attempt counts.
		evicted := 0
		var err error
		for range 20 {
			var victims []uint64
			victims, err = p.Admit(1000, 60, nil)
			evicted += len(victims)
			require.LessOrEqual(t, p.Cost(), int64(100))
			if err == nil {
				break
			}
			require.ErrorIs(t, err, ErrRejected)
		}
		require.NoError(t, err)
		require.True(t, p.Contains(1000))
		require.GreaterOrEqual(t, evicted, 60, "a cost-60 entry displaces at least 60 cost-1 entries")
		require.Equal(t, 100-evicted+1, p.Len())
	})
}

func TestPinnedEntriesAreNeverEvicted(t *testing.T) {
	forEachPolicy(t, func(t *testing.T, newPolicy func(int64) Policy) {
		p := newPolicy(10)
		fill(t, p, 10)
		for k := uint64(1); k <= 4; k++ {
			require.True(t, p.Pin(k))
		}
		require.False(t, p.Pin(99), "pinning an absent key")
		var all []uint64
		for k := uint64(100); k < 200; k++ {
			victims, err := p.Admit(k, 1, nil)
			if err != nil {
				require.ErrorIs(t, err, ErrRejected)
			}
			all = append(all, victims...)
		}
		for k := uint64(1); k <= 4; k++ {
			require.NotContains(t, all, k)
			require.True(t, p.Contains(k))
		}
		require.EqualValues(t, 10, p.Cost())

		// A pinned entry still counts: with 4 units pinned, 7 cannot fit.
		_, err := p.Admit(500, 7, nil)
		require.ErrorIs(t, err, ErrNoRoom)
		require.False(t, p.Contains(500))
		_, err = p.Admit(500, 6, nil)
		if err != nil {
			require.ErrorIs(t, err, ErrRejected)
		}

		// Pins are counted: one Unpin of a doubly pinned key keeps it pinned.
		require.True(t, p.Pin(1))
		require.True(t, p.Unpin(1))
		_, err = p.SetCapacity(4, nil)
		require.NoError(t, err)
		require.True(t, p.Contains(1))

		// Everything left is pinned: shrinking further cannot make room.
		victims, err := p.SetCapacity(1, nil)
		require.ErrorIs(t, err, ErrNoRoom)
		require.Empty(t, victims)
		require.EqualValues(t, 4, p.Cost())

		// After the last unpin the entries become evictable again.
		for k := uint64(1); k <= 4; k++ {
			require.True(t, p.Unpin(k))
		}
		require.False(t, p.Unpin(2), "unpinning an unpinned key")
		victims, err = p.SetCapacity(1, nil)
		require.NoError(t, err)
		require.Len(t, victims, 3)
		require.EqualValues(t, 1, p.Cost())
	})
}

func TestRemovePinned(t *testing.T) {
	forEachPolicy(t, func(t *testing.T, newPolicy func(int64) Policy) {
		p := newPolicy(4)
		fill(t, p, 4)
		require.True(t, p.Pin(2))
		require.True(t, p.Remove(2))
		require.False(t, p.Unpin(2))
		require.Equal(t, 3, p.Len())
		require.EqualValues(t, 3, p.Cost())
		// The pinned cost went with it: a cost-4 entry fits again.
		_, err := p.Admit(9, 4, nil)
		if err != nil {
			require.ErrorIs(t, err, ErrRejected)
		}
		require.LessOrEqual(t, p.Cost(), int64(4))
	})
}

func TestSetCapacityEvictsDown(t *testing.T) {
	forEachPolicy(t, func(t *testing.T, newPolicy func(int64) Policy) {
		for _, c := range []int64{50, 10, 1, 0} {
			t.Run(fmt.Sprint(c), func(t *testing.T) {
				p := newPolicy(100)
				fill(t, p, 100)
				victims, err := p.SetCapacity(c, nil)
				require.NoError(t, err)
				require.Len(t, victims, int(100-c))
				require.Equal(t, int(c), p.Len())
				require.Equal(t, c, p.Cost())
				require.Equal(t, c, p.Capacity())
				for _, v := range victims {
					require.False(t, p.Contains(v))
				}
			})
		}
	})
}

func TestZeroCapacity(t *testing.T) {
	forEachPolicy(t, func(t *testing.T, newPolicy func(int64) Policy) {
		p := newPolicy(0)
		_, err := p.Admit(1, 1, nil)
		require.ErrorIs(t, err, ErrTooLarge)
		require.Zero(t, p.Len())
	})
}

func TestNegativeCapacityPanics(t *testing.T) {
	require.Panics(t, func() { NewTinyLFU(-1) })
	require.Panics(t, func() { NewSLRU(-1, SLRUOptions{}) })
	require.Panics(t, func() { NewFIFO(-1) })
	require.Panics(t, func() { NewARC(-1) })
	require.Panics(t, func() { NewSLRU(10, SLRUOptions{HotPercent: 70, WarmPercent: 40}) })
}

func TestNodeReuse(t *testing.T) {
	forEachPolicy(t, func(t *testing.T, newPolicy func(int64) Policy) {
		p := newPolicy(64)
		var victims []uint64
		for k := range uint64(100_000) {
			victims, _ = p.Admit(k, 1, victims[:0])
		}
		nodes, limit := 0, 64+8
		switch p := p.(type) {
		case *TinyLFU:
			nodes = len(p.t.nodes)
		case *SLRU:
			nodes = len(p.segs[0].t.nodes)
		case *FIFO:
			nodes = len(p.t.nodes)
		case *ARC:
			// Ghosts hold nodes too: up to twice the capacity in all.
			nodes, limit = len(p.t.nodes), 2*64+8
		}
		require.LessOrEqual(t, nodes, limit, "freed nodes are reused")
	})
}
