package matrixcache

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/ssdtier"
)

// sickStats is a snapshot that trips every health rule.
func sickStats() Stats {
	var s Stats
	s.RefillFailures, s.RefillRejected = 7, 2
	s.DRAMNoRoom, s.PinnedEntries, s.PinnedBytes = 3, 1, 32
	s.DRAMOversize = 4
	s.Rejected = 2
	s.SSDBudgetRefused, s.SSDStore.BudgetShare = 9, 1000
	s.SSDStore.BudgetTargetBytesPerSec, s.SSDStore.BudgetObservedBytesPerSec = 100, 201
	s.WritebackBackpressure = 5
	s.DRAM.Hits, s.SSD.Hits, s.Misses = 300, 100, 600 // 40% of 1,000
	s.DRAM.Evictions = 10
	s.ExpiredReads = 250
	s.DRAM.Puts, s.DRAM.Promotions, s.DRAMAdmissionRejected = 50, 30, 20
	return s
}

func healthIDs(h Health) []string {
	var ids []string
	for _, f := range h.Findings {
		ids = append(ids, f.ID)
	}
	return ids
}

func TestHealthReportFiresEveryRuleWorstFirst(t *testing.T) {
	h := HealthReport(sickStats())
	require.Equal(t, []string{
		// Critical, then Warning, then Info; ties by id.
		HealthPinnedBlockEviction, HealthRefillFailures,
		HealthHitRateBelowFloor, HealthWriteBudgetCannotBeMet, HealthWriteBudgetThrottling,
		HealthTTLShorterThanReuse, HealthValuesLargerThanSSD, HealthValuesLargerThanTier,
		HealthWritebackBackpressure,
		HealthMemoryAdmissionRejected,
	}, healthIDs(h))
	require.False(t, h.Healthy)
	require.Equal(t, 2, h.Critical)
	require.Equal(t, 7, h.Warning)
	require.Equal(t, 1, h.Info)
	require.Len(t, h.AtLeast(SeverityCritical), 2)
	require.Len(t, h.AtLeast(SeverityWarning), 9)
	require.Len(t, h.AtLeast(SeverityInfo), 10)

	byID := map[string]HealthFinding{}
	for _, f := range h.Findings {
		require.NotEmpty(t, f.Component, f.ID)
		require.NotEmpty(t, f.Message, f.ID)
		byID[f.ID] = f
	}
	for _, tc := range []struct {
		id                  string
		sev                 Severity
		observed, threshold float64
	}{
		{HealthRefillFailures, SeverityCritical, 5, 0}, // 7 failures, 2 of them the policy's choice
		{HealthPinnedBlockEviction, SeverityCritical, 3, 0},
		{HealthValuesLargerThanTier, SeverityWarning, 4, 0},
		{HealthValuesLargerThanSSD, SeverityWarning, 2, 0},
		{HealthWriteBudgetThrottling, SeverityWarning, 0.1, HealthBudgetShareWarning},
		{HealthWriteBudgetCannotBeMet, SeverityWarning, 201, 200},
		{HealthWritebackBackpressure, SeverityWarning, 5, 0},
		{HealthHitRateBelowFloor, SeverityWarning, 0.4, HealthHitRateFloor},
		{HealthTTLShorterThanReuse, SeverityWarning, 0.25, HealthExpiredReadsCeiling},
		{HealthMemoryAdmissionRejected, SeverityInfo, 0.2, HealthAdmissionRejectRatio},
	} {
		f := byID[tc.id]
		require.Equal(t, tc.sev, f.Severity, tc.id)
		require.InDelta(t, tc.observed, f.Observed, 1e-9, tc.id)
		require.InDelta(t, tc.threshold, f.Threshold, 1e-9, tc.id)
	}
}

// Each rule fires on its own signal alone, and only it.
func TestHealthRulesFireAlone(t *testing.T) {
	busy := func(s *Stats) { s.DRAM.Hits = 2000 } // past the ratio rules' floor, all hits
	for _, tc := range []struct {
		id  string
		sev Severity
		set func(*Stats)
	}{
		{HealthRefillFailures, SeverityCritical, func(s *Stats) { s.RefillFailures = 1 }},
		{HealthPinnedBlockEviction, SeverityCritical, func(s *Stats) { s.DRAMNoRoom = 1 }},
		{HealthValuesLargerThanTier, SeverityWarning, func(s *Stats) { s.DRAMOversize = 1 }},
		{HealthValuesLargerThanSSD, SeverityWarning, func(s *Stats) { s.Rejected = 1 }},
		{HealthWriteBudgetThrottling, SeverityWarning, func(s *Stats) { s.SSDBudgetRefused, s.SSDStore.BudgetShare = 1, 4999 }},
		{HealthWriteBudgetThrottling, SeverityInfo, func(s *Stats) { s.SSDBudgetRefused, s.SSDStore.BudgetShare = 1, 5000 }},
		{HealthWriteBudgetCannotBeMet, SeverityWarning, func(s *Stats) {
			s.SSDStore.BudgetTargetBytesPerSec, s.SSDStore.BudgetObservedBytesPerSec = 10, 21
		}},
		{HealthWritebackBackpressure, SeverityWarning, func(s *Stats) { s.WritebackBackpressure = 1 }},
		{HealthHitRateBelowFloor, SeverityWarning, func(s *Stats) { s.DRAM.Hits, s.Misses, s.DRAM.Evictions = 499, 501, 1 }},
		{HealthTTLShorterThanReuse, SeverityWarning, func(s *Stats) { busy(s); s.ExpiredReads = 401 }},
		{HealthMemoryAdmissionRejected, SeverityInfo, func(s *Stats) { busy(s); s.DRAM.Puts, s.DRAMAdmissionRejected = 89, 11 }},
	} {
		t.Run(tc.id+"/"+tc.sev.String(), func(t *testing.T) {
			var s Stats
			tc.set(&s)
			h := HealthReport(s)
			require.Equal(t, []string{tc.id}, healthIDs(h))
			require.Equal(t, tc.sev, h.Findings[0].Severity)
			require.Equal(t, tc.sev == SeverityInfo, h.Healthy)
		})
	}
	for _, tc := range []struct {
		name string
		set  func(*Stats)
	}{
		{"nothing", func(*Stats) {}},
		{"refills the policy declined", func(s *Stats) { s.RefillFailures, s.RefillRejected = 4, 4 }},
		{"budget at its target", func(s *Stats) {
			s.SSDStore.BudgetTargetBytesPerSec, s.SSDStore.BudgetObservedBytesPerSec = 10, 20
			s.SSDStore.BudgetShare = ssdtier.MaxBudgetShare
		}},
		{"low hit rate without evictions", func(s *Stats) { s.DRAM.Hits, s.Misses = 100, 900 }},
		{"at the floors", func(s *Stats) {
			s.DRAM.Hits, s.Misses, s.DRAM.Evictions, s.ExpiredReads = 500, 500, 1, 200
			s.DRAM.Puts, s.DRAMAdmissionRejected = 90, 10
		}},
	} {
		t.Run("quiet/"+tc.name, func(t *testing.T) {
			var s Stats
			tc.set(&s)
			h := HealthReport(s)
			require.Empty(t, h.Findings)
			require.True(t, h.Healthy)
		})
	}
}

// The ratio rules need 1,000 lookups; the count rules do not.
func TestHealthRatioRulesWaitForRequests(t *testing.T) {
	s := sickStats()
	s.DRAM.Hits-- // 999 lookups
	require.Equal(t, []string{
		HealthPinnedBlockEviction, HealthRefillFailures,
		HealthWriteBudgetCannotBeMet, HealthWriteBudgetThrottling,
		HealthValuesLargerThanSSD, HealthValuesLargerThanTier, HealthWritebackBackpressure,
	}, healthIDs(HealthReport(s)))
}

// A live cache reports what its counters say; the counters the rules read
// count what they document.
func TestLiveCacheHealth(t *testing.T) {
	opts, clk := testOptions(t, 1)
	opts.MaxDRAMBlockBytes = 40
	opts.MaxSSDBlockBytes = 64
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.True(t, c.Health().Healthy)
	require.Empty(t, c.Health().Findings)

	big := bytes.Repeat([]byte("B"), 48) // SSD only
	require.NoError(t, c.Put(ctx, skey(1), big, PutOptions{}))
	_, tier := getTier(t, c, skey(1)) // a refill DRAM cannot take
	require.Equal(t, TierSSD, tier)
	require.ErrorIs(t, c.Put(ctx, skey(2), bytes.Repeat([]byte("x"), 65), PutOptions{}), ErrTooLarge)

	require.NoError(t, c.Put(ctx, skey(3), val("p"), PutOptions{TTL: time.Second}))
	h, err := c.Acquire(ctx, skey(3))
	require.NoError(t, err)
	require.NoError(t, c.Put(ctx, skey(4), val("q"), PutOptions{})) // no room beside the pin
	clk.Advance(2 * time.Second)
	_, tier = getTier(t, c, skey(3)) // expired, pinned
	require.Equal(t, TierNone, tier)
	h.Release()

	st := c.Stats()
	require.EqualValues(t, 2, st.DRAMOversize, "the put and the refill")
	require.EqualValues(t, 1, st.RefillFailures)
	require.Zero(t, st.RefillRejected)
	require.EqualValues(t, 1, st.DRAMNoRoom)
	require.EqualValues(t, 1, st.ExpiredReads)
	require.EqualValues(t, 1, st.Rejected)

	health := c.Health()
	require.Equal(t, HealthReport(c.Stats()), health)
	require.Equal(t, []string{
		HealthPinnedBlockEviction, HealthRefillFailures,
		HealthValuesLargerThanSSD, HealthValuesLargerThanTier,
	}, healthIDs(health), "fewer than 1,000 lookups: no ratio rule")
}
