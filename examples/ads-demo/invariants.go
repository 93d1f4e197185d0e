package main

import (
	"cmp"
	"fmt"
	"slices"
)

// Tally is what the decisions granted and recorded, counted by the load
// generator: each event once, however often it was sent.
type Tally struct {
	// Imps and Charges per campaign.
	Imps, Charges []int64
	Clicks        int64
	// Retries is how many events were sent again; RetriesCounted how many
	// of those the store reported as new.
	Retries, RetriesCounted int64
}

// Invariants is the check of a store's state after a run against the
// catalog and the tally.
type Invariants struct {
	// Held: none of the counts below is above zero.
	Held bool `json:"held"`
	// CapExceeded counts (user, campaign, cap window) with more recorded
	// impressions than the campaign's cap.
	CapExceeded int `json:"cap_exceeded"`
	// Overspent counts campaigns whose spend is above their budget.
	Overspent int `json:"overspent"`
	// DoubleCounted counts events recorded more than once.
	DoubleCounted int `json:"double_counted"`
	// Miscounted counts campaigns whose recorded impressions or their
	// charges differ from those granted or from the spend counter, or
	// whose ledger does not add up to the counter; and the clicks, when
	// the recorded ones differ from those made.
	Miscounted int `json:"miscounted"`
	// CapsReached counts (user, campaign, cap window) at exactly the cap:
	// where the caps bound.
	CapsReached int `json:"caps_reached"`
	// AheadOfPlan counts ledger buckets whose cumulative spend was past
	// the campaign's limit at the bucket's end: its plan plus its slack.
	AheadOfPlan int `json:"ahead_of_plan"`
	// PacingMaxAhead is the furthest any campaign's spend ran ahead of its
	// plan at a bucket's end, as a share of its budget. The tolerance is
	// each campaign's slack (1% of its budget plus one impression's
	// largest charge): PacingTolerance is the largest, as a share of its
	// budget, and PacingUsed the most of its slack any campaign used (at
	// most 1 when AheadOfPlan is 0).
	PacingMaxAhead  float64 `json:"pacing_max_ahead"`
	PacingTolerance float64 `json:"pacing_tolerance"`
	PacingUsed      float64 `json:"pacing_slack_used"`
	// Delivery is the day's spend over the day's budgets.
	Delivery    float64 `json:"delivery"`
	Impressions int64   `json:"impressions"`
	Clicks      int64   `json:"clicks"`
	// Violations describes the first few violations.
	Violations []string `json:"violations,omitempty"`
}

// maxViolations is how many violations Check describes.
const maxViolations = 10

// Check checks a store's state: no frequency cap exceeded, no campaign
// over budget or ahead of its pacing plan past its slack, every event
// counted once and every charge matched by a recorded impression.
func Check(cat *Catalog, st *State, tally *Tally) Invariants {
	var inv Invariants
	note := func(format string, args ...any) {
		if len(inv.Violations) < maxViolations {
			inv.Violations = append(inv.Violations, fmt.Sprintf(format, args...))
		}
	}
	n := len(cat.Campaigns)
	imps := make([]int64, n)
	charges := make([]int64, n)
	type capCell struct {
		campaign int
		window   int64
	}
	for u, list := range st.Imps {
		cells := map[capCell]int{}
		seen := make(map[int64]bool, len(list))
		for _, imp := range list {
			if imp.Campaign < 0 || imp.Campaign >= n {
				inv.Miscounted++
				note("user %d: impression of unknown campaign %d", u, imp.Campaign)
				continue
			}
			if seen[imp.At] {
				inv.DoubleCounted++
				note("user %d: impression at %d recorded twice", u, imp.At)
				continue
			}
			seen[imp.At] = true
			c := &cat.Campaigns[imp.Campaign]
			cell := capCell{imp.Campaign, c.CapWindow(imp.At)}
			cells[cell]++
			switch cells[cell] {
			case c.CapN:
				inv.CapsReached++
			case c.CapN + 1:
				inv.CapsReached--
				inv.CapExceeded++
				note("user %d: campaign %d has more than %d impressions in cap window %d", u, imp.Campaign, c.CapN, cell.window)
			}
			imps[imp.Campaign]++
			charges[imp.Campaign] += imp.Charge
			inv.Impressions++
		}
	}
	for _, k := range st.Clicks {
		inv.Clicks += int64(k)
	}
	if tally.RetriesCounted > 0 {
		inv.DoubleCounted += int(tally.RetriesCounted)
		note("%d of %d retried events were counted again", tally.RetriesCounted, tally.Retries)
	}
	if inv.Clicks != tally.Clicks {
		inv.Miscounted++
		note("%d clicks recorded, %d made", inv.Clicks, tally.Clicks)
	}
	var spent, budget int64
	for i := range cat.Campaigns {
		c := &cat.Campaigns[i]
		spent += st.Spend[i]
		budget += c.Budget
		if st.Spend[i] > c.Budget {
			inv.Overspent++
			note("campaign %d spent %d of a budget of %d", i, st.Spend[i], c.Budget)
		}
		if imps[i] != tally.Imps[i] || charges[i] != tally.Charges[i] || charges[i] != st.Spend[i] {
			inv.Miscounted++
			note("campaign %d: %d impressions charged %d recorded, %d charged %d granted, spend counter %d",
				i, imps[i], charges[i], tally.Imps[i], tally.Charges[i], st.Spend[i])
		}
		ledger := slices.Clone(st.Ledger[i])
		slices.SortFunc(ledger, func(a, b Bucket) int { return cmp.Compare(a.Start, b.Start) })
		var cum int64
		for _, b := range ledger {
			cum += b.Spend
			end := b.Start + bucketMs - 1
			ahead := float64(cum)/float64(c.Budget) - c.Plan.At(end-dayStart)
			inv.PacingMaxAhead = max(inv.PacingMaxAhead, ahead)
			inv.PacingUsed = max(inv.PacingUsed, ahead*float64(c.Budget)/float64(c.Slack))
			if cum > c.Limit(end) {
				inv.AheadOfPlan++
				note("campaign %d: spent %d by %d, past its limit of %d", i, cum, end, c.Limit(end))
			}
		}
		if cum != st.Spend[i] {
			inv.Miscounted++
			note("campaign %d: ledger adds up to %d, spend counter %d", i, cum, st.Spend[i])
		}
		inv.PacingTolerance = max(inv.PacingTolerance, float64(c.Slack)/float64(c.Budget))
	}
	if budget > 0 {
		inv.Delivery = float64(spent) / float64(budget)
	}
	inv.Held = inv.CapExceeded == 0 && inv.Overspent == 0 && inv.DoubleCounted == 0 && inv.Miscounted == 0 && inv.AheadOfPlan == 0
	return inv
}
