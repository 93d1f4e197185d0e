package object

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// A series agrees with a map from timestamp to value under random
// upserts, range deletes and trims, and its windows are the map's points
// in range, ascending; its image round-trips.
func TestSeriesMatchesAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	o := New(KindSeries, []byte("f"))
	s := o.Series
	model := map[int64]string{}
	for step := range 5000 {
		switch r := rng.IntN(20); {
		case r < 14:
			ts := int64(rng.IntN(500))
			if r < 7 {
				ts = int64(500 + step) // most appends land at the tail
			}
			v := fmt.Sprint(step)
			_, had := model[ts]
			require.Equal(t, !had, s.Upsert(ts, []byte(v)))
			model[ts] = v
		case r < 16:
			a, b := int64(rng.IntN(600)), int64(rng.IntN(600))
			n := 0
			for ts := range model {
				if ts >= a && ts <= b {
					delete(model, ts)
					n++
				}
			}
			require.Equal(t, n, s.DeleteRange(a, b))
		case r < 17:
			keep := rng.IntN(len(model) + 1)
			tss := slices.Sorted(maps.Keys(model))
			for _, ts := range tss[:len(tss)-keep] {
				delete(model, ts)
			}
			require.Equal(t, len(tss)-keep, s.TrimOldest(keep))
		default:
			a, b := int64(rng.IntN(5500)), int64(rng.IntN(5500))
			lo, hi := s.Window(a, b)
			var got, want []int64
			for i := lo; i < hi; i++ {
				ts, v := s.At(i)
				require.Equal(t, model[ts], string(v))
				got = append(got, ts)
			}
			for _, ts := range slices.Sorted(maps.Keys(model)) {
				if ts >= a && ts <= b {
					want = append(want, ts)
				}
			}
			require.Equal(t, want, got)
		}
		require.Equal(t, len(model), s.Len())
	}
	var bytes int64
	for _, v := range model {
		bytes += int64(len(v))
	}
	require.Equal(t, bytes, s.Bytes())
	if s.Len() > 0 {
		back, rest, err := Decode(Append(nil, o))
		require.NoError(t, err)
		require.Empty(t, rest)
		require.Equal(t, Append(nil, o), Append(nil, back))
		require.Equal(t, o.Size(), back.Size())
	}
}

// An image whose series timestamps are not strictly ascending is refused.
func TestSeriesImageOutOfOrderIsRefused(t *testing.T) {
	// kind 5, no expiry, key "f", 2 points: ts 2 "b", then ts 1 "a"
	// (timestamps are zigzag varints: 2 → 4, 1 → 2).
	bad := []byte{5, 0, 1, 'f', 2, 4, 1, 'b', 2, 1, 'a'}
	ok := []byte{5, 0, 1, 'f', 2, 2, 1, 'a', 4, 1, 'b'}
	o, _, err := Decode(ok)
	require.NoError(t, err)
	require.Equal(t, 2, o.Series.Len())
	_, _, err = Decode(bad)
	require.ErrorIs(t, err, ErrImage)
}

// The rollup ladder's aggregates equal a scan of the points, under random
// appends, overwrites (numeric and not), range deletes and trims, over
// random windows from milliseconds to days.
func TestRollupEqualsScan(t *testing.T) {
	// Sparse series keep no 1 s level; dense ones may.
	for _, tc := range []struct {
		name    string
		maxStep int
	}{{"sparse", 5000}, {"dense", 100}} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(8, 9))
			s := New(KindSeries, []byte("r")).Series
			next := int64(0)
			for step := range 20000 {
				switch r := rng.IntN(100); {
				case r < 70:
					next += int64(rng.IntN(tc.maxStep))
					v := fmt.Sprint(rng.IntN(2000) - 1000)
					if rng.IntN(20) == 0 {
						v = "n/a"
					}
					s.Upsert(next, []byte(v))
				case r < 85 && s.Len() > 0:
					ts, _ := s.At(rng.IntN(s.Len()))
					s.Upsert(ts, []byte(fmt.Sprint(rng.IntN(5))))
				case r < 90:
					a := int64(rng.IntN(int(next + 1)))
					s.DeleteRange(a, a+int64(rng.IntN(100_000)))
				case r < 93:
					s.TrimOldest(max(s.Len()-rng.IntN(50), 0))
				default:
					a := int64(rng.IntN(int(next + 1)))
					b := a + int64(rng.IntN([]int{10, 5_000, 4_000_000, 200_000_000}[rng.IntN(4)]))
					require.Equal(t, s.ScanAggregate(a, b), s.Aggregate(a, b), "step %d: %d..%d", step, a, b)
				}
			}
			require.Equal(t, s.ScanAggregate(0, next), s.Aggregate(0, next))
		})
	}
}

// The 1 s level is kept for a series of at least fineMinPerSec points a
// second, and not below.
func TestRollupFineLevelByDensity(t *testing.T) {
	for _, tc := range []struct {
		stepMs int64
		fine   bool
	}{{1000, false}, {300, false}, {200, true}, {10, true}} {
		s := New(KindSeries, []byte("d")).Series
		for i := range int64(3000) {
			s.Upsert(i*tc.stepMs, []byte("1"))
		}
		end := 2999 * tc.stepMs
		require.Equal(t, s.ScanAggregate(3, end-3), s.Aggregate(3, end-3))
		require.Equal(t, tc.fine, s.roll.levels[fineLevel] != nil, "step %d ms", tc.stepMs)
	}
}

// A series' Size counts its rollup ladder's cells once an aggregate built
// it, and the cells written after.
func TestSizeCountsTheRollup(t *testing.T) {
	o := New(KindSeries, []byte("d"))
	for i := range int64(3000) {
		o.Series.Upsert(i*200, []byte("1"))
	}
	bare := o.Size()
	require.Zero(t, o.Series.RollupBytes())
	o.Series.Aggregate(0, 3000*200)
	cells := 600 + 10 + 1 + 1 // 1 s, 1 min, 1 h and 1 d
	require.Equal(t, int64(cells*rollCellBytes), o.Series.RollupBytes())
	require.Equal(t, bare+int64(cells*rollCellBytes), o.Size())
	o.Series.Upsert(3000*200+5000, []byte("1")) // a new second's and minute's cells
	require.Equal(t, int64((cells+2)*rollCellBytes), o.Series.RollupBytes())
}

// A sparse series whose window edges turn out dense (a burst) gets the
// 1 s level, and its aggregates stay equal to a scan throughout.
func TestRollupFineLevelOnABurst(t *testing.T) {
	s := New(KindSeries, []byte("b")).Series
	for i := range 2000 { // one point a minute: sparse
		s.Upsert(int64(i)*60_000, []byte(fmt.Sprint(i%7)))
	}
	burst := int64(1000*60_000 + 1)
	for i := range 5000 { // 5000 points within 50 s
		s.Upsert(burst+int64(i)*10, []byte(fmt.Sprint(i%11)))
	}
	end := burst + 50_000
	require.Equal(t, s.ScanAggregate(0, end), s.Aggregate(0, end))
	require.Nil(t, s.roll, "dropped, to be rebuilt with the 1 s level")
	require.Equal(t, s.ScanAggregate(0, end), s.Aggregate(0, end))
	require.NotNil(t, s.roll.levels[fineLevel])
	require.Equal(t, s.ScanAggregate(burst+5, end-7), s.Aggregate(burst+5, end-7))
}

// Upsert copies its value: the caller's buffer can be reused at once, and
// a value read back cannot be grown over its neighbour's bytes.
func TestSeriesUpsertCopies(t *testing.T) {
	s := New(KindSeries, []byte("f")).Series
	buf := []byte("aaaa")
	s.Upsert(1, buf)
	copy(buf, "bbbb")
	s.Upsert(2, buf)
	big := make([]byte, slabMaxValue+1)
	s.Upsert(3, big)
	big[0] = 'x'
	_, v1 := s.At(0)
	_, v2 := s.At(1)
	_, v3 := s.At(2)
	require.Equal(t, "aaaa", string(v1))
	require.Equal(t, "bbbb", string(v2))
	require.Zero(t, v3[0])
	_ = append(v1, "zz"...)
	_, v2 = s.At(1)
	require.Equal(t, "bbbb", string(v2))
	require.Equal(t, int64(8+slabMaxValue+1), s.Bytes())
}

// A clone and the series it copies change independently: points added,
// replaced, trimmed or deleted on one are not seen by the other, and
// values both append after the clone was made do not overwrite each other
// (the clone has a slab of its own).
func TestObjectCloneIndependent(t *testing.T) {
	for _, k := range []Kind{KindSeries, KindHash, KindControl} {
		t.Run(k.String(), func(t *testing.T) {
			o := New(k, []byte("k"))
			fill := func(o *Object, from, to int, v string) {
				for i := from; i < to; i++ {
					switch k {
					case KindSeries:
						o.Series.Upsert(int64(i), []byte(v))
					case KindHash:
						o.HSet(strconv.Itoa(i), []byte(v))
					case KindControl:
						o.Control.Add(int64(i)*1000, 1)
					}
				}
			}
			fill(o, 0, 100, "a")
			before := Append(nil, o)
			c, err := o.Clone()
			require.NoError(t, err)
			require.Equal(t, before, Append(nil, c))
			fill(c, 50, 150, "b")
			require.Equal(t, before, Append(nil, o), "the original is untouched by the clone's writes")
			cloned := Append(nil, c)
			fill(o, 100, 200, "c")
			if k == KindSeries {
				o.Series.TrimOldest(20)
				o.Series.DeleteRange(120, 130)
			}
			require.Equal(t, cloned, Append(nil, c), "the clone is untouched by the original's writes")
		})
	}
}
