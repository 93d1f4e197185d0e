package policy

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTinyLFUInitialLayout(t *testing.T) {
	tests := []struct {
		capacity, window, protected int64
	}{
		{100, 1, 79},
		{250, 3, 197},
		{1000, 10, 792},
		{1, 1, 0},
	}
	for _, tt := range tests {
		p := NewTinyLFU(tt.capacity)
		require.Equal(t, tt.window, p.WindowCapacity(), "capacity %d", tt.capacity)
		require.Equal(t, tt.protected, p.protMax, "capacity %d", tt.capacity)
	}
}

func TestTinyLFURejectsOneHitWonders(t *testing.T) {
	p := NewTinyLFU(100)
	fill(t, p, 100)
	// Make the resident entries popular.
	for range 40 {
		for k := uint64(1); k <= 100; k++ {
			require.True(t, p.Access(k))
		}
	}
	// A scan of new keys, interleaved with requests for half the popular ones,
	// goes through the window and is rejected: the popular keys keep
	// hitting.
	hits := 0
	for k := uint64(1000); k < 11_000; k++ {
		_, err := p.Admit(k, 1, nil)
		if err != nil {
			require.ErrorIs(t, err, ErrRejected)
		}
		if popular := k%50 + 1; p.Access(popular) {
			hits++
		} else {
			_, _ = p.Admit(popular, 1, nil)
		}
	}
	require.Greater(t, hits, 9700, "popular keys hit")
}

func TestTinyLFUAdmitsNewcomerOnceFrequent(t *testing.T) {
	p := NewTinyLFU(100)
	fill(t, p, 100)
	for k := uint64(1); k <= 100; k++ {
		p.Access(k)
		p.Access(k)
	}
	admitted := -1
	for attempt := range 40 {
		_, err := p.Admit(5000, 1, nil)
		// Keep it out of the window so it competes for the main space.
		p.Admit(uint64(10_000+attempt), 1, nil)
		if p.Contains(5000) {
			admitted = attempt
			break
		}
		require.True(t, err == nil || err == ErrRejected)
	}
	require.GreaterOrEqual(t, admitted, 0, "a newcomer requested repeatedly is admitted")
}

func TestTinyLFUProtectsReusedEntries(t *testing.T) {
	p := NewTinyLFU(100)
	fill(t, p, 100)
	// Entries go window -> probation -> protected on a hit in probation.
	for k := uint64(1); k <= 50; k++ {
		require.True(t, p.Access(k))
	}
	protected := 0
	for k := uint64(1); k <= 50; k++ {
		if p.t.nodes[p.t.lookup(k)].queue == qProtected {
			protected++
		}
	}
	require.Equal(t, 50, protected)
	require.EqualValues(t, 50, p.t.listCost[qProtected])
}

func TestTinyLFUHashDoSJitter(t *testing.T) {
	p := NewTinyLFU(1000)
	const candidate, victim = 1, 2
	for range 8 {
		p.sketch.increment(candidate)
	}
	for range 15 {
		p.sketch.increment(victim)
	}
	wins := 0
	const trials = 128 * 200
	for range trials {
		if p.admit(candidate, victim) {
			wins++
		}
	}
	// About 1 in 128 for a moderately frequent candidate.
	require.InDelta(t, 200, wins, 60)

	// A rare candidate never wins against a more frequent victim.
	require.False(t, p.admit(3, victim))
	// A more frequent candidate always wins.
	require.True(t, p.admit(victim, candidate))
}

// recencyTrace requests each new key once more, 1 to 800 requests later,
// and never again: recency says everything, frequency nothing.
func recencyTrace(n int) []uint64 {
	r := rand.New(rand.NewPCG(3, 4))
	keys := make([]uint64, 0, n)
	pending := map[int]uint64{}
	for k := uint64(1); len(keys) < n; k++ {
		keys = append(keys, k)
		at := len(keys) + 1 + r.IntN(800)
		for pending[at] != 0 {
			at++
		}
		pending[at] = k
		if again, ok := pending[len(keys)+1]; ok && len(keys) < n {
			keys = append(keys, again)
			delete(pending, len(keys))
		}
	}
	return keys
}

func TestTinyLFUHillClimber(t *testing.T) {
	// On a recency-biased workload the climber moves space from the
	// protected segment to the window (from 1% up to its 81% ceiling).
	p := NewTinyLFU(500)
	replay(p, recencyTrace(200_000))
	require.Greater(t, p.WindowCapacity(), int64(300), "window grew")

	// A frequency-biased workload keeps the window small on average,
	// whatever the hash does to the sketch: the sample-to-sample noise of
	// the hit rate must not walk the window away (before the climber's
	// tolerance, these four runs averaged 34 entries, up to 49). XORing the
	// keys with a salt changes every sketch collision, as another hash
	// function would.
	const salts = 4
	var total int64
	for salt := range uint64(salts) {
		p = NewTinyLFU(500)
		var victims []uint64
		var windowSum int64
		keys := zipfTrace()[:500_000]
		for _, k := range keys {
			k ^= salt * 0x9e3779b97f4a7c15
			if !p.Access(k) {
				victims, _ = p.Admit(k, 1, victims[:0])
			}
			windowSum += p.WindowCapacity()
		}
		mean := windowSum / int64(len(keys))
		require.LessOrEqual(t, mean, int64(30), "mean window, salt %d", salt)
		total += mean
	}
	require.LessOrEqual(t, total/salts, int64(20), "mean window over the salts")
}

func TestTinyLFUClimberTolerance(t *testing.T) {
	// One decision of the climber at 1000 entries (a sample is 10,000
	// requests, a step 62 entries) after a baseline sample with a 30% hit
	// rate. The standard error of the difference is 0.65 points, so the
	// tolerance is 0.32 points: a larger window must gain more than that to
	// keep growing, a smaller one must lose more than that to stop shrinking.
	const sample = 10_000
	tests := []struct {
		name string
		step float64 // direction of the last step
		hits int64   // in the sample
		want int64   // adjustment
	}{
		{"growing, clear gain: keep growing", 62, 3_100, 62},
		{"growing, gain within noise: shrink", 62, 3_020, -62},
		{"growing, loss: shrink", 62, 2_950, -62},
		{"shrinking, gain: keep shrinking", -62, 3_050, -62},
		{"shrinking, loss within noise: keep shrinking", -62, 2_980, -62},
		{"shrinking, clear loss: grow", -62, 2_900, 62},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewTinyLFU(1000)
			require.EqualValues(t, sample, p.sketch.sampleSize)
			p.prevHitRate, p.prevRequests = 0.30, sample
			p.stepSize = tt.step
			p.hitsInSample, p.missesInSample = tt.hits, sample-tt.hits
			p.determineAdjustment()
			require.Equal(t, tt.want, p.adjustment)
			require.Zero(t, p.hitsInSample+p.missesInSample, "a new sample starts")
		})
	}

	// A sample not yet over decides nothing.
	p := NewTinyLFU(1000)
	p.hitsInSample, p.missesInSample = 3_000, sample-3_001
	p.determineAdjustment()
	require.Zero(t, p.adjustment)
	require.EqualValues(t, sample-1, p.hitsInSample+p.missesInSample)
}

func TestTinyLFUUpdateCostInEverySegment(t *testing.T) {
	p := NewTinyLFU(100)
	fill(t, p, 60)
	p.Access(10) // to protected
	segments := map[uint8]uint64{
		qWindow:    60,
		qProbation: 20,
		qProtected: 10,
	}
	for q, k := range segments {
		require.Equal(t, q, p.t.nodes[p.t.lookup(k)].queue)
		_, err := p.Admit(k, 5, nil)
		require.NoError(t, err)
	}
	require.EqualValues(t, 60+3*4, p.Cost())
	require.EqualValues(t, p.Cost(), p.t.listCost[qWindow]+p.t.listCost[qProtected]+probationCost(p))
}

func probationCost(p *TinyLFU) int64 {
	var c int64
	for i := p.t.front(qProbation); i != none; i = p.t.after(i) {
		c += p.t.nodes[i].cost
	}
	return c
}

func TestSketch(t *testing.T) {
	t.Run("never underestimates below saturation", func(t *testing.T) {
		var s sketch
		s.ensureCapacity(4096)
		counts := map[uint64]int{}
		for i := range 8000 {
			k := uint64(i*7919) % 3000
			s.increment(k)
			counts[k]++
		}
		for k, c := range counts {
			require.GreaterOrEqual(t, s.frequency(k), min(c, 15), "key %d", k)
		}
	})
	t.Run("singletons are mostly exact", func(t *testing.T) {
		var s sketch
		s.ensureCapacity(1024)
		for k := range uint64(2000) {
			s.increment(k)
		}
		exact := 0
		for k := range uint64(2000) {
			if s.frequency(k) == 1 {
				exact++
			}
		}
		require.Greater(t, exact, 1800)
	})
	t.Run("unrecorded is zero", func(t *testing.T) {
		var s sketch
		s.ensureCapacity(64)
		require.Zero(t, s.frequency(42))
	})
	t.Run("saturates at 15", func(t *testing.T) {
		var s sketch
		s.ensureCapacity(1000)
		for range 100 {
			s.increment(5)
		}
		require.Equal(t, 15, s.frequency(5))
	})
	t.Run("halves after the sample period", func(t *testing.T) {
		var s sketch
		s.ensureCapacity(16)
		for range 12 {
			s.increment(1)
		}
		require.Equal(t, 12, s.frequency(1))
		for k := uint64(100); s.size != 0 && s.size < s.sampleSize-1; k++ {
			s.increment(k)
		}
		s.increment(1 << 40)
		f := s.frequency(1)
		require.Greater(t, f, 0)
		require.LessOrEqual(t, f, 7)
	})
	t.Run("folding keeps every count an upper bound", func(t *testing.T) {
		var s sketch
		s.ensureCapacity(4096)
		before := map[uint64]int{}
		for i := range 6000 {
			s.increment(uint64(i*7919) % 2500)
		}
		for k := range uint64(2500) {
			before[k] = s.frequency(k)
		}
		s.fold(300)
		require.Len(t, s.table, 512)
		require.EqualValues(t, 300, s.capacity)
		require.EqualValues(t, 3000, s.sampleSize)
		for k, f := range before {
			require.GreaterOrEqual(t, s.frequency(k), f, "key %d", k)
		}
		s.fold(1000) // never grows
		require.EqualValues(t, 300, s.capacity)
	})
	t.Run("nibbleMax", func(t *testing.T) {
		for _, c := range []struct{ a, b, want uint64 }{
			{0, 0, 0},
			{0xf, 0x1, 0xf},
			{0x10, 0x01, 0x11},
			{0x0123456789abcdef, 0xfedcba9876543210, 0xfedcba98_89abcdef},
		} {
			require.Equal(t, c.want, nibbleMax(c.a, c.b))
			require.Equal(t, c.want, nibbleMax(c.b, c.a))
		}
	})
	t.Run("width is a power of two at least the capacity", func(t *testing.T) {
		for _, c := range []int64{0, 1, 7, 8, 1000, 1024, 1025} {
			var s sketch
			s.ensureCapacity(c)
			n := len(s.table)
			require.GreaterOrEqual(t, int64(n), c)
			require.Zero(t, n&(n-1))
			s.increment(3)
			require.Equal(t, 1, s.frequency(3))
		}
	})
}

// A cache whose costs are bytes gets a sketch sized for the entries it
// holds, not for its capacity in bytes; one whose costs are all 1 keeps
// the sketch sized for its capacity.
func TestTinyLFUSketchFollowsEntries(t *testing.T) {
	for _, c := range []struct {
		name           string
		capacity, cost int64
		want           int64
	}{
		{"costs of 1", 1000, 1, 1000},
		{"costs of 40 bytes", 250 * 40, 40, 250},
		{"costs of 40 bytes, a large cache", 20000 * 40, 40, 20000},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := NewTinyLFU(c.capacity)
			var victims []uint64
			var err error
			for k := range uint64(4 * c.capacity / c.cost) {
				victims, err = p.Admit(k, c.cost, victims[:0])
				if err != nil {
					require.ErrorIs(t, err, ErrRejected)
				}
			}
			require.Equal(t, c.want, p.sketch.capacity)
			require.Equal(t, c.want, p.expected)
		})
	}
}
