package benchkit

import (
	"errors"
	"math"
	"slices"
	"time"
)

// ErrNoData is returned when a statistic is asked of an empty or too small
// sample.
var ErrNoData = errors.New("benchkit: not enough data")

// Summary is a figure over the repeats of a benchmark: the smallest, the
// median and the largest value.
type Summary struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// Column picks one figure out of every run, for Summarize.
func Column[R any](runs []R, f func(R) float64) []float64 {
	xs := make([]float64, len(runs))
	for i, r := range runs {
		xs[i] = f(r)
	}
	return xs
}

// Summarize returns the min/median/max of xs. The median of an even count is
// the mean of the two middle values. NaN values are ignored; an empty (or
// all-NaN) sample gives a Summary of NaNs.
func Summarize(xs []float64) Summary {
	s := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		nan := math.NaN()
		return Summary{Min: nan, Median: nan, Max: nan}
	}
	slices.Sort(s)
	return Summary{Min: s[0], Median: Percentile(s, 50), Max: s[len(s)-1]}
}

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of an ascending
// sorted sample, interpolating linearly between the two closest ranks (the
// "linear" method of NumPy and R type 7). It returns NaN for an empty sample.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	p = min(max(p, 0), 100)
	pos := p / 100 * float64(n-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	if lo == hi {
		return sorted[lo]
	}
	frac := pos - float64(lo)
	return sorted[lo] + (sorted[hi]-sorted[lo])*frac
}

// DurationPercentiles sorts ds in place and returns the requested
// percentiles (0 ≤ p ≤ 100), interpolated as Percentile does. An empty
// sample gives zeros.
func DurationPercentiles(ds []time.Duration, ps ...float64) []time.Duration {
	out := make([]time.Duration, len(ps))
	if len(ds) == 0 {
		return out
	}
	slices.Sort(ds)
	for i, p := range ps {
		p = min(max(p, 0), 100)
		pos := p / 100 * float64(len(ds)-1)
		lo := int(math.Floor(pos))
		hi := int(math.Ceil(pos))
		frac := pos - float64(lo)
		out[i] = ds[lo] + time.Duration(math.Round(float64(ds[hi]-ds[lo])*frac))
	}
	return out
}

// Orientation says which direction of a figure is better, and so how a
// ratio of ours to a peer is formed.
type Orientation int

const (
	// HigherIsBetter (throughput): ratio = ours/peer.
	HigherIsBetter Orientation = iota
	// LowerIsBetter (latency, bytes): ratio = peer/ours.
	LowerIsBetter
)

// Ratios pairs repeat i of ours with repeat i of the peer (the runs that
// alternated next to each other) and returns the per-repeat ratios, oriented
// so that above 1 means ours is better. Pairs where the denominator is zero
// give NaN. The shorter slice bounds the number of pairs.
func Ratios(ours, peer []float64, o Orientation) []float64 {
	n := min(len(ours), len(peer))
	out := make([]float64, n)
	for i := range n {
		num, den := ours[i], peer[i]
		if o == LowerIsBetter {
			num, den = peer[i], ours[i]
		}
		if den == 0 {
			out[i] = math.NaN()
			continue
		}
		out[i] = num / den
	}
	return out
}

// RatioSpread is Summarize(Ratios(ours, peer, o)): the min/median/max of the
// per-repeat ratios.
func RatioSpread(ours, peer []float64, o Orientation) Summary {
	return Summarize(Ratios(ours, peer, o))
}

// Fit is a least-squares line y = Intercept + Slope·x.
type Fit struct {
	Intercept float64 `json:"intercept"`
	Slope     float64 `json:"slope"`
	// R2 is the coefficient of determination (1 when the points lie on the
	// line, or when every y is equal).
	R2 float64 `json:"r2"`
}

// LinearFit fits y = a + b·x by ordinary least squares. It needs at least
// two points with distinct x.
func LinearFit(xs, ys []float64) (Fit, error) {
	n := len(xs)
	if n != len(ys) || n < 2 {
		return Fit{}, ErrNoData
	}
	var mx, my float64
	for i := range n {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxx, sxy, syy float64
	for i := range n {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return Fit{}, ErrNoData
	}
	b := sxy / sxx
	a := my - b*mx
	r2 := 1.0
	if syy > 0 {
		var sse float64
		for i := range n {
			e := ys[i] - (a + b*xs[i])
			sse += e * e
		}
		r2 = 1 - sse/syy
	}
	return Fit{Intercept: a, Slope: b, R2: r2}, nil
}
