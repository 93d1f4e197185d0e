package policy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func segmentsOf(p *SLRU, keys ...uint64) []List {
	out := make([]List, len(keys))
	for i, k := range keys {
		out[i] = p.ListOf(k)
	}
	return out
}

func TestSLRUNewEntriesEnterHot(t *testing.T) {
	p := NewSLRU(10, SLRUOptions{})
	_, err := p.Admit(1, 1, nil)
	require.NoError(t, err)
	_, err = p.Admit(2, 1, nil)
	require.NoError(t, err)
	require.Equal(t, []List{ListHot, ListHot, ListNone}, segmentsOf(p, 1, 2, 3))
	require.EqualValues(t, 2, p.ListCost(ListHot))
}

func TestSLRUMaintainerKeepsShares(t *testing.T) {
	tests := []struct {
		name      string
		opts      SLRUOptions
		hot, warm int64
	}{
		{"defaults", SLRUOptions{}, 20, 40},
		{"custom", SLRUOptions{HotPercent: 10, WarmPercent: 60}, 10, 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewSLRU(100, tt.opts)
			for k := uint64(1); k <= 1000; k++ {
				p.Admit(k, 1, nil)
				for j := uint64(0); j < 3; j++ {
					p.Access(k - j*7) // a mix of hit counts
				}
				require.LessOrEqual(t, p.ListCost(ListHot), tt.hot)
				require.LessOrEqual(t, p.ListCost(ListWarm), tt.warm)
				require.Equal(t, p.Cost(), p.ListCost(ListHot)+p.ListCost(ListWarm)+p.ListCost(ListCold))
			}
		})
	}
}

func TestSLRUPromotesOnHitsAndDemotesTheRest(t *testing.T) {
	// Capacity 10: hot holds 2, warm 4.
	p := NewSLRU(10, SLRUOptions{})
	fill(t, p, 2)
	p.Access(1)
	p.Access(1) // two hits: promoted when it leaves hot
	p.Access(2) // one hit: demoted
	fill2 := func(from, to uint64) {
		for k := from; k <= to; k++ {
			_, err := p.Admit(k, 1, nil)
			require.NoError(t, err)
		}
	}
	fill2(3, 4)
	require.Equal(t, []List{ListWarm, ListCold, ListHot, ListHot}, segmentsOf(p, 1, 2, 3, 4))

	// Hits do not reorder: the cold victim order stays FIFO for keys hit once.
	fill2(5, 10)
	require.Equal(t, 10, p.Len())
	victims, err := p.Admit(11, 1, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{2}, victims, "the oldest cold entry goes first")
}

func TestSLRUColdEntryHitTwiceIsRescued(t *testing.T) {
	p := NewSLRU(10, SLRUOptions{})
	fill(t, p, 10) // 1..8 in cold, 9 and 10 in hot
	require.Equal(t, ListCold, p.ListOf(1))
	p.Access(1)
	p.Access(1)
	victims, err := p.Admit(11, 1, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{2}, victims)
	require.Equal(t, ListWarm, p.ListOf(1))
}

func TestSLRUWarmKeepsActiveEntries(t *testing.T) {
	// Capacity 10: hot holds 2, warm 4. Hit 1..5 twice each, so they are
	// promoted as they leave hot; hit 1 again while in warm: it is kept,
	// and the idle 2 is demoted with its hits reset.
	p := NewSLRU(10, SLRUOptions{})
	for k := uint64(1); k <= 5; k++ {
		_, err := p.Admit(k, 1, nil)
		require.NoError(t, err)
		p.Access(k)
		p.Access(k)
	}
	fill := func(from, to uint64) {
		for k := from; k <= to; k++ {
			_, err := p.Admit(k, 1, nil)
			require.NoError(t, err)
		}
	}
	require.Equal(t, []List{ListWarm, ListWarm, ListWarm, ListHot, ListHot},
		segmentsOf(p, 1, 2, 3, 4, 5))
	p.Access(1)
	fill(100, 101) // pushes 4 and 5 into warm: warm is over by one
	require.Equal(t, []List{ListWarm, ListCold, ListWarm, ListWarm, ListWarm},
		segmentsOf(p, 1, 2, 3, 4, 5))
	require.Zero(t, p.segs[0].t.nodes[p.segs[0].t.lookup(2)].hits)
}

func TestSLRUVictimOrder(t *testing.T) {
	// Victims come from cold first, then warm, then hot.
	p := NewSLRU(10, SLRUOptions{})
	for k := uint64(1); k <= 10; k++ {
		_, err := p.Admit(k, 1, nil)
		require.NoError(t, err)
		if k <= 4 {
			p.Access(k)
			p.Access(k)
		}
	}
	require.Equal(t, []List{ListWarm, ListWarm, ListWarm, ListWarm, ListCold, ListCold,
		ListCold, ListCold, ListHot, ListHot}, segmentsOf(p, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10))
	victims, err := p.Admit(11, 1, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{5}, victims, "cold tail first")

	// Shrinking to 3 leaves hot a share of 0 and warm 1: the maintainer
	// demotes hot (9, 10, 11) and then the warm tail (1, 2, 3) to cold, and
	// eviction takes cold in that order.
	victims, err = p.SetCapacity(3, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{6, 7, 8, 9, 10, 11, 1}, victims)
	require.Equal(t, []List{ListCold, ListCold, ListWarm}, segmentsOf(p, 2, 3, 4))
}

func TestSLRUPromoteHitsOption(t *testing.T) {
	p := NewSLRU(10, SLRUOptions{PromoteHits: 3})
	fill(t, p, 2)
	p.Access(1)
	p.Access(1)
	p.Access(2)
	p.Access(2)
	p.Access(2)
	for k := uint64(3); k <= 4; k++ { // push 1 and 2 out of hot
		_, err := p.Admit(k, 1, nil)
		require.NoError(t, err)
	}
	require.Equal(t, []List{ListCold, ListWarm}, segmentsOf(p, 1, 2))
}

func TestSLRUUpdateCostInEverySegment(t *testing.T) {
	p := NewSLRU(100, SLRUOptions{})
	for k := uint64(1); k <= 40; k++ {
		_, err := p.Admit(k, 1, nil)
		require.NoError(t, err)
		if k <= 10 {
			p.Access(k)
			p.Access(k)
		}
	}
	keys := []uint64{1, 15, 40}
	require.Equal(t, []List{ListWarm, ListCold, ListHot}, segmentsOf(p, keys...))
	for _, k := range keys {
		_, err := p.Admit(k, 3, nil)
		require.NoError(t, err)
	}
	require.EqualValues(t, 46, p.Cost())
	require.Equal(t, p.Cost(), p.ListCost(ListHot)+p.ListCost(ListWarm)+p.ListCost(ListCold))
}

func TestListString(t *testing.T) {
	for s, want := range map[List]string{
		ListNone: "none", ListHot: "hot", ListWarm: "warm", ListCold: "cold", ListPinned: "pinned",
	} {
		require.Equal(t, want, s.String())
	}
}

func TestSLRUSegmentLayout(t *testing.T) {
	tests := []struct {
		name     string
		capacity int64
		segments int
		want     int
	}{
		{"default", 1000, 0, 1},
		{"power of two", 1000, 8, 8},
		{"rounded up", 1000, 5, 8},
		{"capacity below segments", 3, 4, 1},
		{"one", 10, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewSLRU(tt.capacity, SLRUOptions{Segments: tt.segments})
			require.Equal(t, tt.want, p.NumSegments())
			var sum int64
			for i := range p.NumSegments() {
				sum += p.SegmentCapacity(i)
			}
			require.Equal(t, tt.capacity, sum)
		})
	}
	require.Panics(t, func() { NewSLRU(10, SLRUOptions{Segments: -1}) })
	require.Panics(t, func() { NewSLRU(10, SLRUOptions{PromoteHits: 256}) })
}

func TestSLRUSegmentBudgets(t *testing.T) {
	// 4,002 over 4 segments: the remainder goes to the first ones.
	p := NewSLRU(4002, SLRUOptions{Segments: 4})
	require.Equal(t, []int64{1001, 1001, 1000, 1000},
		[]int64{p.SegmentCapacity(0), p.SegmentCapacity(1), p.SegmentCapacity(2), p.SegmentCapacity(3)})

	var victims []uint64
	for k := uint64(1); k <= 20_000; k++ {
		seg := p.SegmentFor(k)
		before := p.SegmentCost(seg)
		var err error
		victims, err = p.Admit(k, 3, victims[:0])
		require.NoError(t, err)
		// Eviction stays within the key's segment.
		for _, v := range victims {
			require.Equal(t, seg, p.SegmentFor(v))
		}
		require.Equal(t, before+3-3*int64(len(victims)), p.SegmentCost(seg))
		require.LessOrEqual(t, p.SegmentCost(seg), p.SegmentCapacity(seg))
	}
	var sum int64
	for i := range p.NumSegments() {
		sum += p.SegmentCost(i)
		require.Greater(t, p.SegmentCost(i), int64(990), "segment %d is used", i)
	}
	require.Equal(t, p.Cost(), sum)

	// An entry must fit its segment's budget.
	_, err := p.Admit(1, 1002, nil)
	require.ErrorIs(t, err, ErrTooLarge)

	// Shrinking splits the new capacity the same way.
	_, err = p.SetCapacity(400, nil)
	require.NoError(t, err)
	require.LessOrEqual(t, p.Cost(), int64(400))
	require.Equal(t, p.Cost(), p.ListCost(ListHot)+p.ListCost(ListWarm)+p.ListCost(ListCold))
	require.Equal(t, int64(100), p.SegmentCapacity(3))
}
