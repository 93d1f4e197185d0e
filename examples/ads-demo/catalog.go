package main

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// The simulated day every run serves: request i of n happens at
// dayStart + i*dayMs/n, so no two requests share a millisecond while n is
// at most dayMs, and a request's time identifies its events.
const (
	hourMs   = int64(60 * 60 * 1000)
	dayMs    = 24 * hourMs
	dayStart = int64(1767225600000) // 2026-01-01T00:00:00Z
	// farEnd bounds every "all of the day" window, with room for a day.
	farEnd = dayStart + 2*dayMs
	// bucketMs is the precision of each campaign's spend ledger: pacing is
	// checked at its bucket ends.
	bucketMs = 30 * 60 * 1000
	// lookbackMs is how far back a user's history is read: the longest cap
	// window and the click window.
	lookbackMs = dayMs
)

// Zipf skews of the load: users and topics are drawn by rank with
// P(k) ∝ (v+k)^-s. Topics carry campaign popularity: a campaign's demand
// is the popularity of the topics it targets.
const (
	userSkew   = 1.1
	userOffset = 10.0
	topicSkew  = 1.3
	topicCount = 20
	segments   = 16
)

// Catalog sizing: the share of the day's requests the budgets pay for,
// and the fewest impressions a budget buys.
const (
	budgetFill = 0.7
	minBudget  = 20
	// broadShare of campaigns target every topic.
	broadShare = 0.1
	// pacingSlackShare of a budget may be spent ahead of the plan, plus
	// one impression's largest charge (so that a campaign can start).
	pacingSlackShare = 0.01
)

// Campaign is one advertiser's line: what it targets, what it pays and how
// fast it may spend.
type Campaign struct {
	ID int
	// Topics and Segments are bit sets of what the campaign targets.
	Topics   uint32
	Segments uint32
	// Bid is the price of a click, in micros; an impression is charged
	// its expected value, Bid × pCTR (see Charge).
	Bid int64
	// Budget is the day's spend limit, in micros.
	Budget int64
	// BaseCTR is the campaign's click-through rate on an average user.
	BaseCTR float64
	// CapN impressions per user in each CapWindowMs window of the day
	// (windows aligned to the day's start).
	CapN        int
	CapWindowMs int64
	// Plan is the share of Budget the campaign may have spent by each
	// time of the day.
	Plan Plan
	// Slack is how far spend may run ahead of Plan, in micros.
	Slack int64
}

// Limit is the most the campaign may have spent at simulated time at:
// its budget, or the plan's share of it by then (to the nearest micro)
// plus the slack, whichever is less.
func (c *Campaign) Limit(at int64) int64 {
	planned := int64(math.Round(float64(c.Budget) * c.Plan.At(at-dayStart)))
	return min(c.Budget, planned+c.Slack)
}

// CapWindow is the index of the cap window at falls in.
func (c *Campaign) CapWindow(at int64) int64 { return (at - dayStart) / c.CapWindowMs }

// MaxCharge is the most one impression of the campaign is charged.
func (c *Campaign) MaxCharge() int64 { return Charge(c.Bid, min(c.BaseCTR*maxLift, 1)) }

// Plan is a pacing plan: hourly weights of the day's budget, spent
// linearly within each hour.
type Plan struct {
	Name string
	// cum[h] is the share planned by the start of hour h; cum[24] is 1.
	cum [25]float64
}

// plans are the pacing plans campaigns choose from, by hourly weight.
var plans = []struct {
	name    string
	weights [24]float64
}{
	{"even", [24]float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
	{"daytime", [24]float64{.2, .2, .2, .2, .2, .2, .8, .8, .8, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.2, 1.2, 1.2, 1.2, .5, .5}},
	{"evening", [24]float64{.3, .3, .3, .3, .3, .3, .8, .8, .8, .8, .8, .8, .8, .8, .8, .8, 1.8, 1.8, 1.8, 1.8, 1.8, 1.8, 1.8, 1}},
}

// NewPlan is the plan of hourly weights w.
func NewPlan(name string, w [24]float64) Plan {
	p := Plan{Name: name}
	var total float64
	for _, x := range w {
		total += x
	}
	for h, x := range w {
		p.cum[h+1] = p.cum[h] + x/total
	}
	p.cum[24] = 1 // no rounding short of the whole budget
	return p
}

// At is the share of the budget planned by offset ms into the day: 0
// before the day, 1 after it.
func (p Plan) At(offset int64) float64 {
	switch {
	case offset <= 0:
		return 0
	case offset >= dayMs:
		return 1
	}
	h := offset / hourMs
	frac := float64(offset%hourMs) / float64(hourMs)
	return p.cum[h] + (p.cum[h+1]-p.cum[h])*frac
}

// Catalog is the campaigns and the targeting index over them, generated
// from a seed.
type Catalog struct {
	Campaigns []Campaign
	seed      uint64
	// targets[topic*segments+segment] are the campaigns a request of that
	// topic from a user of that segment may show, by id.
	targets [][]int32
	// topicP is each topic's share of requests.
	topicP []float64
}

// NewCatalog generates n campaigns from seed, their budgets sized for a
// day of the given number of requests.
func NewCatalog(seed uint64, n, requests int) *Catalog {
	rng := rand.New(rand.NewPCG(seed, 0xad5))
	cat := &Catalog{seed: seed, Campaigns: make([]Campaign, n), topicP: zipfShares(topicCount, topicSkew, 1)}
	caps := []int{1, 2, 3, 5}
	windows := []int64{hourMs, 4 * hourMs, dayMs}
	eligible := make([]float64, n)
	var total float64
	for i := range cat.Campaigns {
		c := &cat.Campaigns[i]
		c.ID = i
		if rng.Float64() < broadShare {
			c.Topics = 1<<topicCount - 1
		} else {
			for range 1 + rng.IntN(2) {
				c.Topics |= 1 << rng.IntN(topicCount)
			}
		}
		for s := range segments {
			if rng.IntN(2) == 0 {
				c.Segments |= 1 << s
			}
		}
		if c.Segments == 0 {
			c.Segments = 1 << rng.IntN(segments)
		}
		c.Bid = 200_000 + rng.Int64N(1_800_001)
		c.BaseCTR = 0.005 + 0.025*rng.Float64()
		c.CapN = caps[rng.IntN(len(caps))]
		c.CapWindowMs = windows[rng.IntN(len(windows))]
		pl := plans[rng.IntN(len(plans))]
		c.Plan = NewPlan(pl.name, pl.weights)
		for t := range topicCount {
			if c.Topics&(1<<t) != 0 {
				eligible[i] += cat.topicP[t]
			}
		}
		eligible[i] *= float64(bits.OnesCount32(c.Segments)) / segments
		total += eligible[i]
	}
	for i := range cat.Campaigns {
		c := &cat.Campaigns[i]
		// A budget pays for the campaign's share of the eligible demand,
		// at its expected charge on an average user.
		imps := max(minBudget, math.Round(float64(requests)*budgetFill*eligible[i]/total))
		c.Budget = int64(imps) * Charge(c.Bid, c.BaseCTR)
		c.Slack = int64(float64(c.Budget)*pacingSlackShare) + c.MaxCharge()
	}
	cat.targets = make([][]int32, topicCount*segments)
	for t := range topicCount {
		for s := range segments {
			var ids []int32
			for i := range cat.Campaigns {
				c := &cat.Campaigns[i]
				if c.Topics&(1<<t) != 0 && c.Segments&(1<<s) != 0 {
					ids = append(ids, int32(i))
				}
			}
			cat.targets[t*segments+s] = ids
		}
	}
	return cat
}

// Candidates are the campaigns targeting topic and segment.
func (cat *Catalog) Candidates(topic, segment int) []int32 {
	return cat.targets[topic*segments+segment]
}

// Segment is the user's audience segment.
func (cat *Catalog) Segment(user int) int {
	return int(mix(cat.seed^0x5e6^uint64(user)<<20) % segments)
}

// Affinity is how much more than average the user clicks: 0.5 to 2.
func (cat *Catalog) Affinity(user int) float64 {
	return 0.5 + 1.5*unit(mix(cat.seed^0xaff^uint64(user)<<20))
}

// AvgCandidates is the mean number of campaigns a request targets.
func (cat *Catalog) AvgCandidates() float64 {
	var sum float64
	for t := range topicCount {
		for s := range segments {
			sum += cat.topicP[t] / segments * float64(len(cat.Candidates(t, s)))
		}
	}
	return sum
}

// TotalBudget is the sum of the campaigns' budgets.
func (cat *Catalog) TotalBudget() int64 {
	var sum int64
	for i := range cat.Campaigns {
		sum += cat.Campaigns[i].Budget
	}
	return sum
}

// zipfShares are the probabilities of ranks 0..n-1 under P(k) ∝ (v+k)^-s,
// the distribution rand.Zipf draws from.
func zipfShares(n int, s, v float64) []float64 {
	p := make([]float64, n)
	var total float64
	for k := range p {
		p[k] = math.Pow(v+float64(k), -s)
		total += p[k]
	}
	for k := range p {
		p[k] /= total
	}
	return p
}

// mix is splitmix64's finalizer: a well-spread hash of x.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// unit maps a hash to [0, 1).
func unit(x uint64) float64 { return float64(x>>11) / (1 << 53) }
