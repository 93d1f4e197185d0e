package topology

import (
	"cmp"
	"slices"
	"strings"
)

// HashRange is a half-open range [Start, End) of ring positions. A range
// with End <= Start wraps past the top of the hash space: it holds
// [Start, 2^64) and [0, End). A range with Start == End is the whole ring.
type HashRange struct {
	Start, End uint64
}

// Contains reports whether hash h lies in the range.
func (hr HashRange) Contains(h uint64) bool {
	if hr.Start < hr.End {
		return hr.Start <= h && h < hr.End
	}
	return h >= hr.Start || h < hr.End
}

// Fraction returns the share of the hash space the range covers, in (0, 1].
func (hr HashRange) Fraction() float64 {
	if hr.Start == hr.End {
		return 1
	}
	return float64(hr.End-hr.Start) / (1 << 64) // End-Start wraps as intended
}

// Handoff is a set of ranges of keys whose owner changes from From to To
// between two rings. Ranges are sorted by Start, disjoint and never
// adjacent to each other (adjacent ranges are merged).
type Handoff struct {
	From, To NodeID
	Ranges   []HashRange
}

// Contains reports whether hash h lies in one of the handoff's ranges.
func (ho Handoff) Contains(h uint64) bool {
	for _, hr := range ho.Ranges {
		if hr.Contains(h) {
			return true
		}
	}
	return false
}

// Fraction returns the share of the hash space the handoff moves.
func (ho Handoff) Fraction() float64 {
	f := 0.0
	for _, hr := range ho.Ranges {
		f += hr.Fraction()
	}
	return f
}

// Diff returns the handoffs that take the placement of ring before to the
// placement of ring after: for every key whose owner (Owner) differs,
// exactly one handoff range contains Hash(key), in the handoff from its old
// owner to its new owner; keys whose owner is unchanged lie in no range.
// Handoffs are grouped by (From, To) and sorted by From, then To.
//
// Diff compares primary owners only. It returns nil if either ring has no
// live node: there is no owner to hand off from, or none to hand off to.
// Its cost is linear in the two rings' point counts, plus sorting the
// moved ranges.
func Diff(before, after *Ring) []Handoff {
	if before.live == 0 || after.live == 0 {
		return nil
	}
	// Every point of either ring is a boundary; between two consecutive
	// boundaries both owners are constant. Merge the sorted hash lists,
	// dropping duplicates.
	bounds := make([]uint64, 0, len(before.hashes)+len(after.hashes))
	a, b := before.hashes, after.hashes
	for len(a) > 0 || len(b) > 0 {
		var h uint64
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0] < b[0]):
			h, a = a[0], a[1:]
		case len(a) == 0 || b[0] < a[0]:
			h, b = b[0], b[1:]
		default:
			h, a, b = a[0], a[1:], b[1:]
		}
		if len(bounds) == 0 || bounds[len(bounds)-1] != h {
			bounds = append(bounds, h)
		}
	}

	// The stretch [bounds[i], bounds[i+1]) (the last one wrapping to
	// bounds[0]) belongs in each ring to the owner of bounds[i]. Walk the
	// stretches in order with a cursor into each ring instead of searching.
	type move struct {
		from, to int32
		r        HashRange
	}
	var moves []move
	oi, ni := 0, 0 // first point > h in each ring, or len if none
	for i, h := range bounds {
		for oi < len(before.hashes) && before.hashes[oi] <= h {
			oi++
		}
		for ni < len(after.hashes) && after.hashes[ni] <= h {
			ni++
		}
		op, np := oi, ni
		if op == len(before.hashes) {
			op = 0
		}
		if np == len(after.hashes) {
			np = 0
		}
		from, to := before.owner[before.liveAt[op]], after.owner[after.liveAt[np]]
		if before.nodes[from].ID == after.nodes[to].ID {
			continue
		}
		end := bounds[0]
		if i+1 < len(bounds) {
			end = bounds[i+1]
		}
		if k := len(moves) - 1; k >= 0 && moves[k].from == from && moves[k].to == to && moves[k].r.End == h {
			moves[k].r.End = end
			continue
		}
		moves = append(moves, move{from, to, HashRange{h, end}})
	}
	// Join the last stretch with the first across the wrap.
	if k := len(moves) - 1; k > 0 && moves[k].r.End == bounds[0] && moves[0].r.Start == bounds[0] &&
		moves[k].from == moves[0].from && moves[k].to == moves[0].to {
		moves[0].r.Start = moves[k].r.Start
		moves = moves[:k]
	}

	slices.SortStableFunc(moves, func(x, y move) int {
		if c := strings.Compare(string(before.nodes[x.from].ID), string(before.nodes[y.from].ID)); c != 0 {
			return c
		}
		if c := strings.Compare(string(after.nodes[x.to].ID), string(after.nodes[y.to].ID)); c != 0 {
			return c
		}
		return cmp.Compare(x.r.Start, y.r.Start)
	})
	var out []Handoff
	for _, m := range moves {
		from, to := before.nodes[m.from].ID, after.nodes[m.to].ID
		if k := len(out) - 1; k >= 0 && out[k].From == from && out[k].To == to {
			out[k].Ranges = append(out[k].Ranges, m.r)
			continue
		}
		out = append(out, Handoff{From: from, To: to, Ranges: []HashRange{m.r}})
	}
	return out
}

// MovedFraction returns the share of the hash space that the handoffs move.
func MovedFraction(handoffs []Handoff) float64 {
	f := 0.0
	for _, ho := range handoffs {
		f += ho.Fraction()
	}
	return f
}
