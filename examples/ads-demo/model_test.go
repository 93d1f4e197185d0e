package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPCTR(t *testing.T) {
	cases := []struct {
		name string
		base float64
		f    Features
		seen int
		want float64
	}{
		{"a new user gets the base rate", 0.02, Features{}, 0, 0.02},
		{"the prior's own rate is no lift", 0.02, Features{Clicks24h: 1, Imps24h: 50}, 0, 0.02 * (2.0 / 100) / priorCTR},
		{"a heavy clicker's lift stops at the cap", 0.02, Features{Clicks24h: 10, Imps24h: 50}, 0, 0.02 * maxLift},
		{"a user who never clicks is lifted down to the floor", 0.02, Features{Imps24h: 450}, 0, 0.02 * minLift},
		{"ten impressions in the hour halve it", 0.02, Features{Imps1h: 10}, 0, 0.01},
		{"two earlier views of the campaign halve it", 0.02, Features{}, 2, 0.01},
		{"fatigue and repeat multiply", 0.02, Features{Imps1h: 10}, 2, 0.005},
		{"never above one", 0.5, Features{Clicks24h: 10, Imps24h: 50}, 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.InDelta(t, c.want, PCTR(c.base, c.f, c.seen), 1e-12)
		})
	}
}

func TestChargeAndECPM(t *testing.T) {
	cases := []struct {
		bid        int64
		pctr       float64
		wantCharge int64
		wantECPM   float64
	}{
		{1_000_000, 0.02, 20_000, 20_000_000},
		{1_234_567, 0.01, 12_346, 12_345_670},
		{100, 0.001, 1, 100}, // a charge is at least a micro
		{0, 0.5, 1, 0},
	}
	for _, c := range cases {
		require.Equal(t, c.wantCharge, Charge(c.bid, c.pctr), "charge of %d at %g", c.bid, c.pctr)
		require.InDelta(t, c.wantECPM, ECPM(c.bid, c.pctr), 1e-6, "eCPM of %d at %g", c.bid, c.pctr)
	}
}

func TestRankByECPMThenCampaign(t *testing.T) {
	offers := []Offer{{Campaign: 3, ECPM: 10}, {Campaign: 1, ECPM: 30}, {Campaign: 2, ECPM: 10}, {Campaign: 0, ECPM: 5}}
	Rank(offers)
	var order []int
	for _, o := range offers {
		order = append(order, o.Campaign)
	}
	require.Equal(t, []int{1, 2, 3, 0}, order)
}

func TestPlanAt(t *testing.T) {
	even := NewPlan("even", plans[0].weights)
	daytime := NewPlan("daytime", plans[1].weights)
	var dayTotal float64
	for _, w := range plans[1].weights {
		dayTotal += w
	}
	cases := []struct {
		name   string
		plan   Plan
		offset int64
		want   float64
	}{
		{"nothing before the day", even, -1, 0},
		{"nothing at its start", even, 0, 0},
		{"a quarter by six", even, 6 * hourMs, 0.25},
		{"linear within the hour", even, 12*hourMs + hourMs/2, 12.5 / 24},
		{"all by the end", even, dayMs, 1},
		{"all after it", even, dayMs + hourMs, 1},
		{"a quiet night", daytime, 6 * hourMs, 6 * 0.2 / dayTotal},
		{"half an hour of a busy hour", daytime, 9*hourMs + hourMs/2, (6*0.2 + 3*0.8 + 0.75) / dayTotal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.InDelta(t, c.want, c.plan.At(c.offset), 1e-12)
		})
	}
}

func TestCampaignLimit(t *testing.T) {
	c := Campaign{Budget: 10_000, Slack: 500, Plan: NewPlan("even", plans[0].weights), CapWindowMs: 4 * hourMs}
	cases := []struct {
		name string
		at   int64
		want int64
	}{
		{"the slack alone at the start", dayStart, 500},
		{"a quarter and the slack at six", dayStart + 6*hourMs, 3_000},
		{"half and the slack at noon", dayStart + 12*hourMs, 5_500},
		{"never past the budget", dayStart + 23*hourMs, 10_000},
		{"the budget at the end", dayStart + dayMs, 10_000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, c.Limit(tc.at))
		})
	}
}

func TestWindows(t *testing.T) {
	c := Campaign{CapWindowMs: 4 * hourMs}
	cases := []struct {
		at               int64
		window, bucketAt int64
	}{
		{dayStart, 0, dayStart},
		{dayStart + bucketMs - 1, 0, dayStart},
		{dayStart + bucketMs, 0, dayStart + bucketMs},
		{dayStart + 4*hourMs - 1, 0, dayStart + 4*hourMs - bucketMs},
		{dayStart + 4*hourMs, 1, dayStart + 4*hourMs},
		{dayStart + dayMs - 1, 5, dayStart + dayMs - bucketMs},
	}
	for _, tc := range cases {
		require.Equal(t, tc.window, c.CapWindow(tc.at), "cap window of %d", tc.at-dayStart)
		require.Equal(t, tc.bucketAt, bucketOf(tc.at), "ledger bucket of %d", tc.at-dayStart)
	}
}

func TestCatalogIsSeeded(t *testing.T) {
	a, b := NewCatalog(7, 60, 10_000), NewCatalog(7, 60, 10_000)
	require.Equal(t, a.Campaigns, b.Campaigns)
	require.NotEqual(t, a.Campaigns, NewCatalog(8, 60, 10_000).Campaigns)
	for topic := range topicCount {
		for seg := range segments {
			for _, id := range a.Candidates(topic, seg) {
				c := a.Campaigns[id]
				require.NotZero(t, c.Topics&(1<<topic), "campaign %d does not target topic %d", id, topic)
				require.NotZero(t, c.Segments&(1<<seg), "campaign %d does not target segment %d", id, seg)
			}
		}
	}
	for _, c := range a.Campaigns {
		require.GreaterOrEqual(t, c.Budget, minBudget*Charge(c.Bid, c.BaseCTR))
		require.Greater(t, c.Slack, c.MaxCharge(), "a campaign can always start")
	}
}

func TestWorkloadIsSeededAndSkewed(t *testing.T) {
	const n, users = 20_000, 1_000
	w := NewWorkload(3, n, users)
	require.Equal(t, w, NewWorkload(3, n, users))
	counts := make([]int, users)
	topics := make([]int, topicCount)
	for i := range n {
		counts[w.Users[i]]++
		topics[w.Topics[i]]++
		if i > 0 {
			require.Greater(t, w.At(i), w.At(i-1), "one request a millisecond at most")
		}
	}
	require.Greater(t, counts[0], 5*n/users, "the first user is hot")
	require.Greater(t, topics[0], 3*n/topicCount, "the first topic is hot")
	require.Equal(t, dayStart, w.At(0))
	require.Less(t, w.At(n-1), dayStart+dayMs)
}
