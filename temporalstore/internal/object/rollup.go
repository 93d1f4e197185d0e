package object

import (
	"bytes"
	"strconv"
	"sync"
)

// A rollup ladder keeps, per series, the sum, the count of numeric
// values, the count of points, and the min and max of the points in every
// aligned cell of 1 s, 1 min, 1 h and 1 day, so that an aggregate over a
// wide window reads a few hundred cells instead of every point. It is a
// derived view: built from the points when first asked for, kept up to
// date by every write while it exists, never logged nor imaged. Its sums
// and counts are exact; a removed value that was a cell's min or max marks
// the cell's extremes stale, and they are recomputed from the cell's
// points when read. Results are bit-identical to a scan of the points.

// Rollup widths, in ms, coarsest first.
var rollWidths = [...]int64{86_400_000, 3_600_000, 60_000, 1_000}

// The 1 s level is kept only where it saves work: for a series of fewer
// than fineMinPerSec points a second a 1 s cell holds about one point, and
// its map entry costs more than twice the point (106 B against 40 B at one
// point a second); the window's edges are then scanned from the points,
// at most a minute's worth each. A series whose edge scans read more than
// fineEscalate points in one aggregate gets the 1 s level from then on.
const (
	fineMinPerSec = 4
	fineEscalate  = 2048
	fineLevel     = len(rollWidths) - 1
)

// ParseValue reads a point's value as the aggregators do: a decimal i64
// after leading ASCII whitespace.
func ParseValue(v []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(bytes.TrimLeft(v, " \t\n\r\f\v")), 10, 64)
	return n, err == nil
}

// Agg is an aggregate of points: the sum and count of the numeric values,
// the count of all points, the numeric min and max (valid when Numeric >
// 0).
type Agg struct {
	Sum, Numeric, Points int64
	Min, Max             int64
}

func (a *Agg) addValue(n int64, numeric bool) {
	a.Points++
	if !numeric {
		return
	}
	if a.Numeric == 0 || n < a.Min {
		a.Min = n
	}
	if a.Numeric == 0 || n > a.Max {
		a.Max = n
	}
	a.Sum += n
	a.Numeric++
}

func (a *Agg) merge(b *Agg) {
	if b.Numeric > 0 {
		if a.Numeric == 0 || b.Min < a.Min {
			a.Min = b.Min
		}
		if a.Numeric == 0 || b.Max > a.Max {
			a.Max = b.Max
		}
	}
	a.Sum += b.Sum
	a.Numeric += b.Numeric
	a.Points += b.Points
}

type cell struct {
	Agg
	// stale says Min and Max may be wrong: a removed value was one of
	// them.
	stale bool
}

type rollup struct {
	// levels[fineLevel] is nil when the 1 s level is not kept.
	levels [len(rollWidths)]map[int64]cell
	points int64
}

// floorCell is the start of the width-w cell holding ts.
func floorCell(ts, w int64) int64 {
	m := ts % w
	if m < 0 {
		m += w
	}
	return ts - m
}

// rollMu guards the lazy parts of a series' rollup (its first build, and
// refreshing stale extremes), which concurrent readers may run; writers
// hold the shard's write lock and touch it alone.
type rollMu = sync.Mutex

func newRollup(fine bool) *rollup {
	r := &rollup{}
	for i := range r.levels {
		if i != fineLevel || fine {
			r.levels[i] = map[int64]cell{}
		}
	}
	return r
}

// finest is the width of the finest level kept.
func (r *rollup) finest() int64 {
	if r.levels[fineLevel] == nil {
		return rollWidths[fineLevel-1]
	}
	return rollWidths[fineLevel]
}

// add counts the point (ts, v) in every level.
func (r *rollup) add(ts int64, v []byte) {
	n, ok := ParseValue(v)
	for i, w := range rollWidths {
		if r.levels[i] == nil {
			continue
		}
		start := floorCell(ts, w)
		c := r.levels[i][start]
		c.addValue(n, ok)
		r.levels[i][start] = c
	}
	r.points++
}

// remove takes the point (ts, v) out of every level.
func (r *rollup) remove(ts int64, v []byte) {
	n, ok := ParseValue(v)
	for i, w := range rollWidths {
		if r.levels[i] == nil {
			continue
		}
		start := floorCell(ts, w)
		c, ok2 := r.levels[i][start]
		if !ok2 {
			continue
		}
		c.Points--
		if ok {
			c.Sum -= n
			c.Numeric--
			if n == c.Min || n == c.Max {
				c.stale = true
			}
		}
		if c.Points == 0 {
			delete(r.levels[i], start)
		} else {
			r.levels[i][start] = c
		}
	}
	r.points--
}

// Aggregate aggregates the points of start..end (Unix ms, inclusive),
// from the rollup ladder (built on first use) and the points at the
// window's unaligned edges.
func (s *Series) Aggregate(start, end int64) Agg {
	var a Agg
	if start > end || len(s.ts) == 0 {
		return a
	}
	start, end = max(start, s.ts[0]), min(end, s.ts[len(s.ts)-1])
	if start > end {
		return a
	}
	s.rollMu.Lock()
	defer s.rollMu.Unlock()
	if s.roll == nil || s.roll.points != int64(len(s.ts)) {
		// First use, or found inconsistent with the points: rebuild.
		s.roll = newRollup(s.rollFine || s.dense())
		for i := range s.ts {
			s.roll.add(s.ts[i], s.vals[i])
		}
	}
	finest := s.roll.finest()
	scanned := 0
	for p := start; p <= end; {
		lvl, w := -1, int64(1)
		for i, cw := range rollWidths {
			if s.roll.levels[i] != nil && floorCell(p, cw) == p && p+cw-1 <= end {
				lvl, w = i, cw
				break
			}
		}
		if lvl < 0 {
			// An unaligned edge: scan its points up to the next cell of
			// the finest level.
			stop := min(end, floorCell(p, finest)+finest-1)
			scanned += s.scan(p, stop, &a)
			p = stop + 1
			continue
		}
		if c, ok := s.roll.levels[lvl][p]; ok {
			if c.stale {
				var fresh Agg
				s.scan(p, p+w-1, &fresh)
				c.Agg, c.stale = fresh, false
				s.roll.levels[lvl][p] = c
			}
			a.merge(&c.Agg)
		}
		p += w
	}
	if scanned > fineEscalate && s.roll.levels[fineLevel] == nil {
		// Denser here than on average: keep the 1 s level from now on.
		s.rollFine = true
		s.roll = nil
	}
	return a
}

// dense reports whether the series averages at least fineMinPerSec points
// a second over its span.
func (s *Series) dense() bool {
	n := int64(len(s.ts))
	if n < 2 {
		return false
	}
	span := s.ts[n-1] - s.ts[0]
	return n*1000 >= fineMinPerSec*(span+1000)
}

// RollupBytes is the rollup ladder's approximate memory (0 without one).
func (s *Series) RollupBytes() int64 {
	s.rollMu.Lock()
	defer s.rollMu.Unlock()
	if s.roll == nil {
		return 0
	}
	n := 0
	for _, l := range s.roll.levels {
		n += len(l)
	}
	return int64(n) * rollCellBytes
}

// HasRollup reports whether the series keeps a rollup ladder.
func (s *Series) HasRollup() bool {
	s.rollMu.Lock()
	defer s.rollMu.Unlock()
	return s.roll != nil
}

// ScanAggregate aggregates start..end by reading every point: what
// Aggregate must equal.
func (s *Series) ScanAggregate(start, end int64) Agg {
	var a Agg
	s.scan(start, end, &a)
	return a
}

// scan aggregates the points of start..end into a and returns how many it
// read.
func (s *Series) scan(start, end int64, a *Agg) int {
	lo, hi := s.Window(start, end)
	s.scanPoints(lo, hi, a)
	return hi - lo
}

// ScanPoints aggregates points lo..hi-1 (indexes) by reading each.
func (s *Series) ScanPoints(lo, hi int) Agg {
	var a Agg
	s.scanPoints(lo, hi, &a)
	return a
}

func (s *Series) scanPoints(lo, hi int, a *Agg) {
	for i := lo; i < hi; i++ {
		n, ok := ParseValue(s.vals[i])
		a.addValue(n, ok)
	}
}
