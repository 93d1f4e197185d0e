package policy

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// arcKeys returns the keys on list q of p, least recently used first.
func arcKeys(p *ARC, q uint8) []uint64 {
	keys := []uint64{}
	for i := p.t.front(q); i != none; i = p.t.after(i) {
		keys = append(keys, p.t.nodes[i].key)
	}
	return keys
}

// arcState is the lists and target of an ARC.
type arcState struct {
	t1, t2, b1, b2 []uint64
	target         int64
}

func stateOf(p *ARC) arcState {
	return arcState{arcKeys(p, qT1), arcKeys(p, qT2), arcKeys(p, qB1), arcKeys(p, qB2), p.Target()}
}

// arcOp is one step of an ARC scenario: admit key with cost (0: access it;
// -1: remove it), and the victims that step must report.
type arcOp struct {
	key     uint64
	cost    int64
	victims []uint64
}

func TestARCLists(t *testing.T) {
	tests := []struct {
		name     string
		capacity int64
		ops      []arcOp
		want     arcState
	}{
		{
			name:     "new keys enter T1, a hit promotes to T2",
			capacity: 4,
			ops:      []arcOp{{key: 1, cost: 1}, {key: 2, cost: 1}, {key: 3, cost: 1}, {key: 2}},
			want:     arcState{t1: []uint64{1, 3}, t2: []uint64{2}, b1: []uint64{}, b2: []uint64{}},
		},
		{
			name:     "an overwrite counts as a hit",
			capacity: 4,
			ops:      []arcOp{{key: 1, cost: 1}, {key: 2, cost: 1}, {key: 1, cost: 2}},
			want:     arcState{t1: []uint64{2}, t2: []uint64{1}, b1: []uint64{}, b2: []uint64{}},
		},
		{
			name:     "with the target at 0 victims come from T1 and leave ghosts on B1",
			capacity: 3,
			ops: []arcOp{
				{key: 1, cost: 1}, {key: 2, cost: 1}, {key: 3, cost: 1}, {key: 1},
				{key: 4, cost: 1, victims: []uint64{2}},
				{key: 5, cost: 1, victims: []uint64{3}}, // T1 and B1 hold at most 3: 2 is forgotten
			},
			want: arcState{t1: []uint64{4, 5}, t2: []uint64{1}, b1: []uint64{3}, b2: []uint64{}},
		},
		{
			name:     "a ghost on B1 grows the target and the key enters T2",
			capacity: 3,
			ops: []arcOp{
				{key: 1, cost: 1}, {key: 2, cost: 1}, {key: 3, cost: 1}, {key: 1},
				{key: 4, cost: 1, victims: []uint64{2}},
				{key: 2, cost: 1, victims: []uint64{3}},
			},
			want: arcState{t1: []uint64{4}, t2: []uint64{1, 2}, b1: []uint64{3}, b2: []uint64{}, target: 1},
		},
		{
			name:     "with T1 at or under the target victims come from T2 and leave ghosts on B2",
			capacity: 3,
			ops: []arcOp{
				{key: 1, cost: 1}, {key: 2, cost: 1}, {key: 3, cost: 1}, {key: 1},
				{key: 4, cost: 1, victims: []uint64{2}},
				{key: 2, cost: 1, victims: []uint64{3}}, // target 1, T1 {4}
				{key: 3, cost: 1, victims: []uint64{1}}, // target 2, T1 {4} under it
			},
			want: arcState{t1: []uint64{4}, t2: []uint64{2, 3}, b1: []uint64{}, b2: []uint64{1}, target: 2},
		},
		{
			name:     "a ghost on B2 shrinks the target",
			capacity: 3,
			ops: []arcOp{
				{key: 1, cost: 1}, {key: 2, cost: 1}, {key: 3, cost: 1}, {key: 1},
				{key: 4, cost: 1, victims: []uint64{2}},
				{key: 2, cost: 1, victims: []uint64{3}},
				{key: 3, cost: 1, victims: []uint64{1}},
				{key: 1, cost: 1, victims: []uint64{4}}, // target 1; T1 {4} at it, from B2: T1 gives
			},
			want: arcState{t1: []uint64{}, t2: []uint64{2, 3, 1}, b1: []uint64{4}, b2: []uint64{}, target: 1},
		},
		{
			name:     "the target moves by the ghost's cost",
			capacity: 10,
			ops: []arcOp{
				{key: 1, cost: 2}, {key: 2, cost: 3}, {key: 3, cost: 5}, {key: 3},
				{key: 4, cost: 2, victims: []uint64{1}},
				{key: 1, cost: 1, victims: []uint64{2}}, // the ghost cost 2, the entry now 1
			},
			want: arcState{t1: []uint64{4}, t2: []uint64{3, 1}, b1: []uint64{2}, b2: []uint64{}, target: 2},
		},
		{
			name:     "Remove clears a resident key and a ghost alike",
			capacity: 3,
			ops: []arcOp{
				{key: 1, cost: 1}, {key: 2, cost: 1}, {key: 3, cost: 1}, {key: 1},
				{key: 4, cost: 1, victims: []uint64{2}},
				{key: 2, cost: -1}, {key: 1, cost: -1},
				{key: 2, cost: 1}, // no ghost left: a new key, the target stays
			},
			want: arcState{t1: []uint64{3, 4, 2}, t2: []uint64{}, b1: []uint64{}, b2: []uint64{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewARC(tt.capacity)
			for _, op := range tt.ops {
				switch {
				case op.cost == 0:
					require.True(t, p.Access(op.key))
				case op.cost < 0:
					resident := p.Contains(op.key)
					require.Equal(t, resident, p.Remove(op.key))
					require.Equal(t, ARCNone, p.ListOf(op.key))
				default:
					victims, err := p.Admit(op.key, op.cost, nil)
					require.NoError(t, err)
					require.Equal(t, op.victims, victims, "admitting %d", op.key)
				}
			}
			require.Equal(t, tt.want, stateOf(p))
		})
	}
}

func TestARCGhostsAreNotResident(t *testing.T) {
	p := NewARC(2)
	fill(t, p, 2)
	require.True(t, p.Access(1))
	victims, err := p.Admit(3, 1, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{2}, victims)
	require.Equal(t, ARCGhostRecent, p.ListOf(2))
	require.False(t, p.Contains(2))
	require.False(t, p.Access(2))
	require.Equal(t, NoSlot, p.Slot(2))
	require.False(t, p.Pin(2))
	require.False(t, p.Unpin(2))
	require.False(t, p.Remove(2), "a ghost was not resident")
	require.Equal(t, ARCNone, p.ListOf(2))
	require.Equal(t, 2, p.Len())
	require.EqualValues(t, 2, p.Cost())
}

func TestARCGhostListsAreBounded(t *testing.T) {
	tests := []struct {
		name string
		cost func(k uint64) int64
	}{
		{"unit costs", func(uint64) int64 { return 1 }},
		{"mixed costs", func(k uint64) int64 { return int64(k%5 + 1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const capacity = 32
			p := NewARC(capacity)
			r := rand.New(rand.NewPCG(3, 4))
			var victims []uint64
			for range 20_000 {
				// Half the requests go to 16 hot keys, half spread over 2,000.
				k := uint64(r.IntN(16))
				if r.IntN(2) == 0 {
					k = uint64(16 + r.IntN(2000))
				}
				if !p.Access(k) {
					var err error
					victims, err = p.Admit(k, tt.cost(k), victims[:0])
					require.NoError(t, err)
				}
				t1, b1 := p.ListCost(ARCRecent), p.ListCost(ARCGhostRecent)
				ghosts := b1 + p.ListCost(ARCGhostFrequent)
				require.LessOrEqual(t, t1+b1, int64(capacity))
				require.LessOrEqual(t, p.Cost()+ghosts, int64(2*capacity))
				require.LessOrEqual(t, p.Cost(), int64(capacity))
			}
			require.LessOrEqual(t, len(p.t.index), 2*capacity, "keys known, ghosts included")
			require.LessOrEqual(t, len(p.t.nodes), 2*capacity+int(arcLists)+1, "nodes are reused")
		})
	}
}

func TestARCHotSetSurvivesAScan(t *testing.T) {
	p := NewARC(10)
	fill(t, p, 5)
	for k := uint64(1); k <= 5; k++ {
		require.True(t, p.Access(k))
	}
	for k := uint64(100); k < 1100; k++ {
		_, err := p.Admit(k, 1, nil)
		require.NoError(t, err)
	}
	for k := uint64(1); k <= 5; k++ {
		require.True(t, p.Contains(k), "hot key %d", k)
	}
}

func TestARCPinnedEntries(t *testing.T) {
	p := NewARC(4)
	fill(t, p, 4)
	require.True(t, p.Access(2))
	require.True(t, p.Pin(1))
	require.True(t, p.Pin(2))
	require.Equal(t, ARCPinned, p.ListOf(2))

	victims, err := p.Admit(5, 1, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{3}, victims, "the pinned LRU entry is skipped")

	// Pinned cost 2 leaves no room for cost 3.
	_, err = p.Admit(6, 3, nil)
	require.ErrorIs(t, err, ErrNoRoom)
	// Nor for a ghost coming back at cost 3: the target does not move.
	_, err = p.Admit(3, 3, nil)
	require.ErrorIs(t, err, ErrNoRoom)
	require.Zero(t, p.Target())
	require.Equal(t, ARCGhostRecent, p.ListOf(3))

	victims, err = p.SetCapacity(1, nil)
	require.ErrorIs(t, err, ErrNoRoom)
	require.Equal(t, []uint64{4, 5}, victims)
	require.Equal(t, 2, p.Len())

	// Released, an entry returns to T2.
	require.True(t, p.Unpin(1))
	require.Equal(t, ARCFrequent, p.ListOf(1))
	victims, err = p.SetCapacity(1, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{1}, victims)
}

func TestARCSetCapacityClampsTheTargetAndTrimsGhosts(t *testing.T) {
	p := NewARC(8)
	fill(t, p, 8)
	for k := uint64(1); k <= 8; k++ {
		require.True(t, p.Access(k))
	}
	for k := uint64(20); k < 40; k++ { // a scan: ghosts on B1
		_, err := p.Admit(k, 1, nil)
		require.NoError(t, err)
	}
	for k := uint64(20); k < 40; k++ { // the scan again: B1 hits grow the target
		if p.ListOf(k) == ARCGhostRecent {
			_, err := p.Admit(k, 1, nil)
			require.NoError(t, err)
		}
	}
	require.Greater(t, p.Target(), int64(2))
	require.Positive(t, p.ListCost(ARCGhostRecent)+p.ListCost(ARCGhostFrequent))

	victims, err := p.SetCapacity(2, nil)
	require.NoError(t, err)
	require.Len(t, victims, 6)
	require.Equal(t, 2, p.Len())
	require.LessOrEqual(t, p.Target(), int64(2))
	require.LessOrEqual(t, p.Cost()+p.ListCost(ARCGhostRecent)+p.ListCost(ARCGhostFrequent), int64(4))

	_, err = p.SetCapacity(0, nil)
	require.NoError(t, err)
	require.Empty(t, p.t.index, "no ghost outlives a zero capacity")
	require.Zero(t, p.Target())
}

// refARC is the paper's ARC over entries (Megiddo and Modha, FAST 2003,
// figure 4), written with slices for clarity: each list least recently used
// first. The target ratio is rounded down, as ARC does.
type refARC struct {
	c, p           int
	t1, t2, b1, b2 []uint64
}

// request runs the paper's procedure for x and returns the key it evicted
// from the cache, if any.
func (r *refARC) request(x uint64) (victim uint64, evicted bool) {
	take := func(l *[]uint64) bool {
		if i := slices.Index(*l, x); i >= 0 {
			*l = slices.Delete(*l, i, i+1)
			return true
		}
		return false
	}
	replace := func(inB2 bool) {
		if n := len(r.t1); n >= 1 && (inB2 && n == r.p || n > r.p) {
			victim, r.t1 = r.t1[0], r.t1[1:]
			r.b1 = append(r.b1, victim)
		} else {
			victim, r.t2 = r.t2[0], r.t2[1:]
			r.b2 = append(r.b2, victim)
		}
		evicted = true
	}
	switch {
	case take(&r.t1), take(&r.t2):
	case slices.Contains(r.b1, x):
		r.p = min(r.c, r.p+max(1, len(r.b2)/len(r.b1)))
		replace(false)
		take(&r.b1)
	case slices.Contains(r.b2, x):
		r.p = max(0, r.p-max(1, len(r.b1)/len(r.b2)))
		replace(true)
		take(&r.b2)
	default:
		if len(r.t1)+len(r.b1) == r.c {
			if len(r.t1) < r.c {
				r.b1 = r.b1[1:]
				replace(false)
			} else {
				victim, r.t1, evicted = r.t1[0], r.t1[1:], true
			}
		} else if n := len(r.t1) + len(r.t2) + len(r.b1) + len(r.b2); n >= r.c {
			if n == 2*r.c {
				r.b2 = r.b2[1:]
			}
			replace(false)
		}
		r.t1 = append(r.t1, x)
		return victim, evicted
	}
	r.t2 = append(r.t2, x)
	return victim, evicted
}

// With every cost 1, ARC evicts what the paper's algorithm evicts, request
// for request, and keeps the same lists and target.
func TestARCMatchesThePaperWithUnitCosts(t *testing.T) {
	for _, c := range []int{1, 2, 5, 16} {
		p := NewARC(int64(c))
		ref := &refARC{c: c, t1: []uint64{}, t2: []uint64{}, b1: []uint64{}, b2: []uint64{}}
		r := rand.New(rand.NewPCG(uint64(c), 9))
		var victims []uint64
		for n := range 5_000 {
			// Shifting phases of recency (a sliding window) and frequency
			// (a small hot set) bias.
			k := uint64(r.IntN(3 * c))
			if n/500%2 == 1 {
				k = uint64(n/4 + r.IntN(c))
			}
			wantVictim, wantEvicted := ref.request(k)
			victims = victims[:0]
			if !p.Access(k) {
				var err error
				victims, err = p.Admit(k, 1, victims)
				require.NoError(t, err)
			}
			if wantEvicted {
				require.Equal(t, []uint64{wantVictim}, victims, "capacity %d, request %d for %d", c, n, k)
			} else {
				require.Empty(t, victims, "capacity %d, request %d for %d", c, n, k)
			}
			require.Equal(t, arcState{ref.t1, ref.t2, ref.b1, ref.b2, int64(ref.p)}, stateOf(p),
				"capacity %d, request %d for %d", c, n, k)
		}
	}
}
