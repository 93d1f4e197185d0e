package policy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func segmentsOf(p *SLRU, keys ...uint64) []Segment {
	out := make([]Segment, len(keys))
	for i, k := range keys {
		out[i] = p.SegmentOf(k)
	}
	return out
}

func TestSLRUNewEntriesEnterHot(t *testing.T) {
	p := NewSLRU(10, SLRUOptions{})
	_, err := p.Admit(1, 1, nil)
	require.NoError(t, err)
	_, err = p.Admit(2, 1, nil)
	require.NoError(t, err)
	require.Equal(t, []Segment{SegmentHot, SegmentHot, SegmentNone}, segmentsOf(p, 1, 2, 3))
	require.EqualValues(t, 2, p.SegmentCost(SegmentHot))
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
				require.LessOrEqual(t, p.SegmentCost(SegmentHot), tt.hot)
				require.LessOrEqual(t, p.SegmentCost(SegmentWarm), tt.warm)
				require.Equal(t, p.Cost(), p.SegmentCost(SegmentHot)+p.SegmentCost(SegmentWarm)+p.SegmentCost(SegmentCold))
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
	require.Equal(t, []Segment{SegmentWarm, SegmentCold, SegmentHot, SegmentHot}, segmentsOf(p, 1, 2, 3, 4))

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
	require.Equal(t, SegmentCold, p.SegmentOf(1))
	p.Access(1)
	p.Access(1)
	victims, err := p.Admit(11, 1, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{2}, victims)
	require.Equal(t, SegmentWarm, p.SegmentOf(1))
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
	require.Equal(t, []Segment{SegmentWarm, SegmentWarm, SegmentWarm, SegmentHot, SegmentHot},
		segmentsOf(p, 1, 2, 3, 4, 5))
	p.Access(1)
	fill(100, 101) // pushes 4 and 5 into warm: warm is over by one
	require.Equal(t, []Segment{SegmentWarm, SegmentCold, SegmentWarm, SegmentWarm, SegmentWarm},
		segmentsOf(p, 1, 2, 3, 4, 5))
	require.Zero(t, p.t.nodes[p.t.lookup(2)].hits)
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
	require.Equal(t, []Segment{SegmentWarm, SegmentWarm, SegmentWarm, SegmentWarm, SegmentCold, SegmentCold,
		SegmentCold, SegmentCold, SegmentHot, SegmentHot}, segmentsOf(p, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10))
	victims, err := p.Admit(11, 1, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{5}, victims, "cold tail first")

	// Shrinking to 3 leaves hot a share of 0 and warm 1: the maintainer
	// demotes hot (9, 10, 11) and then the warm tail (1, 2, 3) to cold, and
	// eviction takes cold in that order.
	victims, err = p.SetCapacity(3, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{6, 7, 8, 9, 10, 11, 1}, victims)
	require.Equal(t, []Segment{SegmentCold, SegmentCold, SegmentWarm}, segmentsOf(p, 2, 3, 4))
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
	require.Equal(t, []Segment{SegmentCold, SegmentWarm}, segmentsOf(p, 1, 2))
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
	require.Equal(t, []Segment{SegmentWarm, SegmentCold, SegmentHot}, segmentsOf(p, keys...))
	for _, k := range keys {
		_, err := p.Admit(k, 3, nil)
		require.NoError(t, err)
	}
	require.EqualValues(t, 46, p.Cost())
	require.Equal(t, p.Cost(), p.SegmentCost(SegmentHot)+p.SegmentCost(SegmentWarm)+p.SegmentCost(SegmentCold))
}

func TestSegmentString(t *testing.T) {
	for s, want := range map[Segment]string{
		SegmentNone: "none", SegmentHot: "hot", SegmentWarm: "warm", SegmentCold: "cold", SegmentPinned: "pinned",
	} {
		require.Equal(t, want, s.String())
	}
}
