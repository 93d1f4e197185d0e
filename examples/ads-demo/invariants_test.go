package main

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// checkCatalog is two campaigns with round numbers: campaign 0 capped at
// 2 an hour, campaign 1 at 1 a day, both on the even plan.
func checkCatalog() *Catalog {
	even := NewPlan("even", plans[0].weights)
	return &Catalog{Campaigns: []Campaign{
		{ID: 0, Budget: 48_000, Slack: 1_000, Plan: even, CapN: 2, CapWindowMs: hourMs},
		{ID: 1, Budget: 24_000, Slack: 1_000, Plan: even, CapN: 1, CapWindowMs: dayMs},
	}}
}

// goodState is a state that keeps every invariant, and its tally: user 0
// saw campaign 0 twice in hour 0 and campaign 1 once, user 1 saw campaign
// 0 in hour 5 and clicked it.
func goodState() (*State, *Tally) {
	st := newState(2, 2)
	st.Imps[0] = []Imp{
		{At: dayStart + 10, Campaign: 0, Charge: 500},
		{At: dayStart + 20, Campaign: 0, Charge: 500},
		{At: dayStart + 30, Campaign: 1, Charge: 700},
	}
	st.Imps[1] = []Imp{{At: dayStart + 5*hourMs, Campaign: 0, Charge: 600}}
	st.Clicks[1] = 1
	st.Spend = []int64{1_600, 700}
	st.Ledger[0] = []Bucket{{Start: dayStart + 5*hourMs, Spend: 600}, {Start: dayStart, Spend: 1_000}}
	st.Ledger[1] = []Bucket{{Start: dayStart, Spend: 700}}
	return st, &Tally{Imps: []int64{3, 1}, Charges: []int64{1_600, 700}, Clicks: 1, Retries: 2}
}

func TestCheckHolds(t *testing.T) {
	st, tally := goodState()
	inv := Check(checkCatalog(), st, tally)
	require.True(t, inv.Held, "%+v", inv)
	require.Empty(t, inv.Violations)
	require.Equal(t, int64(4), inv.Impressions)
	require.Equal(t, int64(1), inv.Clicks)
	require.Equal(t, 2, inv.CapsReached, "campaign 0 for user 0 in hour 0, campaign 1 for user 0")
	require.InDelta(t, 2_300.0/72_000, inv.Delivery, 1e-9)
	require.InDelta(t, 1_000.0/24_000, inv.PacingTolerance, 1e-9)
	require.Less(t, inv.PacingMaxAhead, inv.PacingTolerance)
	// Campaign 1's first bucket, at its last millisecond.
	ahead := 700.0/24_000 - float64(bucketMs-1)/float64(dayMs)
	require.InDelta(t, ahead*24_000/1_000, inv.PacingUsed, 1e-9)
}

// Each way a store can break the day is caught, and by its own count.
func TestCheckReports(t *testing.T) {
	cases := []struct {
		name  string
		spoil func(st *State, tally *Tally)
		count func(inv Invariants) int
	}{
		{"a cap exceeded", func(st *State, tally *Tally) {
			st.Imps[0] = append(st.Imps[0], Imp{At: dayStart + 40, Campaign: 0, Charge: 500})
			st.Spend[0] += 500
			st.Ledger[0][1].Spend += 500
			tally.Imps[0]++
			tally.Charges[0] += 500
		}, func(inv Invariants) int { return inv.CapExceeded }},
		{"a day cap exceeded hours apart", func(st *State, tally *Tally) {
			st.Imps[0] = append(st.Imps[0], Imp{At: dayStart + 20*hourMs, Campaign: 1, Charge: 100})
			st.Spend[1] += 100
			st.Ledger[1] = append(st.Ledger[1], Bucket{Start: dayStart + 20*hourMs, Spend: 100})
			tally.Imps[1]++
			tally.Charges[1] += 100
		}, func(inv Invariants) int { return inv.CapExceeded }},
		{"an overspent budget", func(st *State, tally *Tally) {
			st.Imps[1] = append(st.Imps[1], Imp{At: dayStart + 23*hourMs, Campaign: 1, Charge: 24_000})
			st.Spend[1] += 24_000
			st.Ledger[1] = append(st.Ledger[1], Bucket{Start: dayStart + 23*hourMs, Spend: 24_000})
			tally.Imps[1]++
			tally.Charges[1] += 24_000
		}, func(inv Invariants) int { return inv.Overspent }},
		{"spend ahead of the plan", func(st *State, tally *Tally) {
			// 5,000 by half past midnight: the plan says 1,000 and
			// the slack allows 1,000 more.
			st.Imps[1] = append(st.Imps[1], Imp{At: dayStart + 50, Campaign: 0, Charge: 5_000})
			st.Spend[0] += 5_000
			st.Ledger[0][1].Spend += 5_000
			tally.Imps[0]++
			tally.Charges[0] += 5_000
		}, func(inv Invariants) int { return inv.AheadOfPlan }},
		{"an impression recorded twice", func(st *State, _ *Tally) {
			st.Imps[1] = append(st.Imps[1], st.Imps[1][0])
		}, func(inv Invariants) int { return inv.DoubleCounted }},
		{"a retry counted again", func(_ *State, tally *Tally) {
			tally.RetriesCounted = 1
		}, func(inv Invariants) int { return inv.DoubleCounted }},
		{"a charge with no impression", func(st *State, _ *Tally) {
			st.Spend[1] += 300
			st.Ledger[1][0].Spend += 300
		}, func(inv Invariants) int { return inv.Miscounted }},
		{"a ledger that does not add up", func(st *State, _ *Tally) {
			st.Ledger[0][0].Spend--
		}, func(inv Invariants) int { return inv.Miscounted }},
		{"a granted impression never recorded", func(st *State, _ *Tally) {
			st.Imps[1] = nil
			st.Spend[0] -= 600
			st.Ledger[0][0].Spend -= 600
		}, func(inv Invariants) int { return inv.Miscounted }},
		{"a click lost", func(st *State, _ *Tally) {
			st.Clicks[1] = 0
		}, func(inv Invariants) int { return inv.Miscounted }},
		{"an impression of no campaign", func(st *State, _ *Tally) {
			st.Imps[0] = append(st.Imps[0], Imp{At: dayStart + 99, Campaign: 7})
		}, func(inv Invariants) int { return inv.Miscounted }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, tally := goodState()
			c.spoil(st, tally)
			inv := Check(checkCatalog(), st, tally)
			require.False(t, inv.Held)
			require.Positive(t, c.count(inv), "%+v", inv)
			require.NotEmpty(t, inv.Violations)
		})
	}
}

// brokenStore is a map store that breaks every invariant: it reads no
// history (so the cap filter sees nothing), grants the best offer without
// checking cap or budget and charges it three times, and records every
// event it is sent.
type brokenStore struct{ *mapStore }

func (b brokenStore) History(_ context.Context, _ int, _ int64, into *History) error {
	into.Imps, into.Clicks = into.Imps[:0], 0
	return nil
}

func (b brokenStore) Take(_ context.Context, _ int, at int64, offers []Offer) (int, int, error) {
	if len(offers) == 0 {
		return -1, 0, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	o := offers[0]
	b.spend[o.Campaign] += 3 * o.Charge
	b.ledger[o.Campaign][bucketOf(at)] += 3 * o.Charge
	return 0, 1, nil
}

func (b brokenStore) Record(_ context.Context, ev Event) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ev.Click {
		b.clicks[ev.User] = append(b.clicks[ev.User], ev.Imp.At)
	} else {
		b.imps[ev.User] = append(b.imps[ev.User], ev.Imp)
	}
	return true, nil
}

// A day served on a broken store fails the check, on every count.
func TestCheckCatchesABrokenStore(t *testing.T) {
	const requests, users, campaigns = 4000, 200, 30
	cat := NewCatalog(5, campaigns, requests)
	w := NewWorkload(5, requests, users)
	cfg := runConfig{clients: 4, maxOffers: 4, retry: 0.2, refresh: time.Hour, progress: time.Hour}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	res, err := serve(t.Context(), log, brokenStore{newMap(campaigns)}, "broken", cat, w, cfg)
	require.NoError(t, err)
	inv := res.Invariants
	require.False(t, inv.Held)
	require.Positive(t, inv.CapExceeded, "%+v", inv)
	require.Positive(t, inv.Overspent, "%+v", inv)
	require.Positive(t, inv.AheadOfPlan, "%+v", inv)
	require.Positive(t, inv.DoubleCounted, "%+v", inv)
	require.Positive(t, inv.Miscounted, "%+v", inv)

	res, err = serve(t.Context(), log, newMap(campaigns), "map", cat, w, cfg)
	require.NoError(t, err)
	require.True(t, res.Invariants.Held, "the same day on a sound store: %+v", res.Invariants)
}
