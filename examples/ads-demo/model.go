package main

import (
	"cmp"
	"math"
	"slices"
)

// The click model's constants: a Beta prior on a user's click-through rate
// (priorCTR over priorWeight impressions), the bounds of the lift it gives
// a user, and how fast fatigue sets in.
const (
	priorCTR     = 0.02
	priorWeight  = 50.0
	minLift      = 0.25
	maxLift      = 4.0
	hourFatigue  = 0.1 // per impression in the last hour
	repeatFadeTo = 0.5 // per impression of the same campaign in the day
)

// Features are what the ranking reads about a user at the time of a
// request, from the store.
type Features struct {
	Imps1h, Imps24h, Clicks24h int
}

// PCTR is the predicted click-through rate of a campaign of base rate
// base, shown to a user with features f who saw the campaign seen times in
// the last day: the base rate lifted by the user's own smoothed rate,
// damped by how many ads the user saw in the last hour and how often this
// one.
func PCTR(base float64, f Features, seen int) float64 {
	userCTR := (float64(f.Clicks24h) + priorCTR*priorWeight) / (float64(f.Imps24h) + priorWeight)
	lift := min(max(userCTR/priorCTR, minLift), maxLift)
	fatigue := 1 / (1 + hourFatigue*float64(f.Imps1h))
	repeat := 1 / (1 + repeatFadeTo*float64(seen))
	return min(base*lift*fatigue*repeat, 1)
}

// ECPM is the expected value of a thousand impressions at click price bid
// (micros) and rate pctr: the ranking score.
func ECPM(bid int64, pctr float64) float64 { return float64(bid) * pctr * 1000 }

// Charge is what one impression costs, its expected value in whole
// micros: at least 1.
func Charge(bid int64, pctr float64) int64 {
	return max(1, int64(math.Round(float64(bid)*pctr)))
}

// Offer is a candidate campaign for a request, ranked and priced: what
// Backend.Take needs to grant it.
type Offer struct {
	Campaign int
	ECPM     float64
	// Charge is the impression's price; Limit the most the campaign may
	// have spent with it (Campaign.Limit at the request's time).
	Charge, Limit int64
	// CapN impressions per user in cap window CapWindow.
	CapN      int
	CapWindow int64
}

// Rank orders offers by eCPM, highest first; equal ones by campaign id,
// so that a ranking is the same on every backend.
func Rank(offers []Offer) {
	slices.SortFunc(offers, func(a, b Offer) int {
		if c := cmp.Compare(b.ECPM, a.ECPM); c != 0 {
			return c
		}
		return cmp.Compare(a.Campaign, b.Campaign)
	})
}
