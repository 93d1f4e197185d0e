package temporalstore

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
)

// percentileAccuracy is the percentiles' relative accuracy.
const percentileAccuracy = 0.01

// aggSpec is a parsed aggregator name.
type aggSpec struct {
	name  string
	kind  string  // the aggregator without its parameter
	param float64 // pNN's quantile, decay's half-life, top's K
}

func parseAgg(name string) (aggSpec, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	a := aggSpec{name: name, kind: n}
	bad := func() (aggSpec, error) {
		return a, fmt.Errorf("%w: unknown aggregator %q (sum, avg, min, max, first, last, count, sumf, avgf, minf, maxf, pNN, distinct, top:K, decay:H)", ErrInvalid, name)
	}
	switch {
	case IsPlainAggregator(n):
		if n == "" {
			a.kind = "count"
		}
	case n == "sumf", n == "avgf", n == "minf", n == "maxf", n == "distinct":
	case strings.HasPrefix(n, "p") && len(n) > 1:
		q, err := strconv.ParseFloat(n[1:], 64)
		if err != nil || q < 0 || q > 100 {
			return bad()
		}
		a.kind, a.param = "p", q/100
	case strings.HasPrefix(n, "top:"):
		k, err := strconv.Atoi(n[4:])
		if err != nil || k < 1 || k > 1000 {
			return bad()
		}
		a.kind, a.param = "top", float64(k)
	case strings.HasPrefix(n, "decay:"):
		h, err := strconv.ParseFloat(n[6:], 64)
		if err != nil || !(h > 0) || math.IsInf(h, 0) {
			return bad()
		}
		a.kind, a.param = "decay", h
	default:
		return bad()
	}
	return a, nil
}

// parseFloat reads a value as the float aggregators do: after leading
// ASCII whitespace, a decimal or float; NaN and infinities are skipped.
func parseFloat(v []byte) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimLeft(string(v), " \t\n\r\f\v"), 64)
	return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}

// aggregateAll computes specs over points lo..hi of o, in one pass, at
// time now (for decay).
func aggregateAll(o *object.Object, lo, hi int, specs []aggSpec, now time.Time) ([]Aggregate, error) {
	out := make([]Aggregate, len(specs))
	var ints object.Agg
	var fsum float64
	var fn int64
	var fmin, fmax float64
	var sketch *ddsketch.DDSketch
	var counts map[string]int64
	var distinct object.Distinct
	decays := make([]float64, len(specs))
	want := map[string]bool{}
	for _, s := range specs {
		want[s.kind] = true
	}
	if want["p"] {
		var err error
		if sketch, err = ddsketch.NewDefaultDDSketch(percentileAccuracy); err != nil {
			return nil, err
		}
	}
	if want["top"] {
		counts = map[string]int64{}
	}
	nowMs := now.UnixMilli()
	for i := lo; i < hi; i++ {
		ts, v := o.Series.At(i)
		n, isInt := object.ParseValue(v)
		ints.Points++
		if isInt {
			if ints.Numeric == 0 || n < ints.Min {
				ints.Min = n
			}
			if ints.Numeric == 0 || n > ints.Max {
				ints.Max = n
			}
			ints.Sum += n
			ints.Numeric++
		}
		f, isFloat := parseFloat(v)
		if isFloat {
			if fn == 0 || f < fmin {
				fmin = f
			}
			if fn == 0 || f > fmax {
				fmax = f
			}
			fsum += f
			fn++
			if sketch != nil {
				// DDSketch takes non-negative values only in its
				// default store; negatives go to its mirror.
				_ = sketch.Add(f)
			}
			if want["decay"] {
				for j, s := range specs {
					if s.kind == "decay" {
						decays[j] += f * math.Exp2(-float64(nowMs-ts)/s.param)
					}
				}
			}
		}
		if counts != nil {
			counts[string(v)]++
		}
		if want["distinct"] {
			distinct.Add(v)
		}
	}
	for j, s := range specs {
		a := Aggregate{Name: s.name}
		switch s.kind {
		case "sum":
			a.Int = ints.Sum
		case "avg", "average":
			if ints.Numeric > 0 {
				a.Int = ints.Sum / ints.Numeric
			}
		case "min":
			a.Int = ints.Min
		case "max":
			a.Int = ints.Max
		case "count", "events":
			a.Int = ints.Points
		case "first", "last":
			if lo < hi {
				at := lo
				if s.kind == "last" {
					at = hi - 1
				}
				_, v := o.Series.At(at)
				a.Int, _ = object.ParseValue(v)
			}
		case "sumf":
			a.Float, a.IsFloat = fsum, true
		case "avgf":
			a.IsFloat = true
			if fn > 0 {
				a.Float = fsum / float64(fn)
			}
		case "minf":
			a.Float, a.IsFloat = fmin, true
		case "maxf":
			a.Float, a.IsFloat = fmax, true
		case "p":
			a.IsFloat = true
			if fn > 0 {
				q, err := sketch.GetValueAtQuantile(s.param)
				if err != nil {
					return nil, err
				}
				a.Float = q
			}
		case "distinct":
			a.Int = object.Union([]*object.Distinct{&distinct})
		case "top":
			for v, c := range counts {
				a.Top = append(a.Top, TopValue{Value: []byte(v), Count: c})
			}
			slices.SortFunc(a.Top, func(x, y TopValue) int {
				return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(string(x.Value), string(y.Value)))
			})
			a.Top = a.Top[:min(len(a.Top), int(s.param))]
			if a.Top == nil {
				a.Top = []TopValue{}
			}
		case "decay":
			a.Float, a.IsFloat = decays[j], true
		}
		out[j] = a
	}
	return out, nil
}
