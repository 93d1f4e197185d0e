package matrixcache

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/temporalstore/temporalstore-go/matrixcache/ssdtier"
)

// Health finding ids: the original's health rules that map onto this cache.
// Its expiry_could_not_delete_durable_copy, reads_escalate_to_exclusive and
// eviction_falls_back_to_full_scan have no counterpart here (see
// HealthReport).
const (
	HealthRefillFailures          = "refill_failures"
	HealthPinnedBlockEviction     = "pinned_entries_block_eviction"
	HealthValuesLargerThanTier    = "values_larger_than_tier"
	HealthValuesLargerThanSSD     = "values_larger_than_ssd_block"
	HealthWriteBudgetThrottling   = "ssd_write_budget_throttling"
	HealthWriteBudgetCannotBeMet  = "ssd_write_budget_cannot_be_met"
	HealthWritebackBackpressure   = "writeback_backpressure"
	HealthHitRateBelowFloor       = "hit_rate_below_floor"
	HealthTTLShorterThanReuse     = "time_to_live_shorter_than_reuse"
	HealthMemoryAdmissionRejected = "memory_admission_rejecting"
)

// Thresholds of the health rules. The ratio rules judge a cache only after
// HealthMinRequests lookups.
const (
	HealthMinRequests          = 1000
	HealthHitRateFloor         = 0.5
	HealthExpiredReadsCeiling  = 0.2
	HealthAdmissionRejectRatio = 0.1
	// HealthBudgetShareWarning: a write budget admitting less than this
	// share of keys is a Warning, more an Info.
	HealthBudgetShareWarning = 0.5
	// HealthBudgetOvershoot: under a steady overload the write budget
	// settles between its target and twice it; above twice the target,
	// the writes it cannot refuse alone exceed it.
	HealthBudgetOvershoot = 2
)

// HealthFinding is one thing a health report has to say.
type HealthFinding struct {
	// ID is one of the Health* ids.
	ID string
	// Component is the part of the cache it is about: "dram", "ssd",
	// "ssd_write_budget" or "writeback".
	Component string
	Severity  Severity
	// Observed is the figure the rule judged, and Threshold the bound it
	// crossed (counts have threshold 0; ratios are fractions).
	Observed, Threshold float64
	Message             string
}

// Health is a health report: the findings, worst first and then by id.
type Health struct {
	// Healthy is true when no finding is a Warning or Critical.
	Healthy                 bool
	Critical, Warning, Info int
	Findings                []HealthFinding
}

// AtLeast returns the findings of severity sev or worse.
func (h Health) AtLeast(sev Severity) []HealthFinding {
	var out []HealthFinding
	for _, f := range h.Findings {
		if f.Severity >= sev {
			out = append(out, f)
		}
	}
	return out
}

// Health returns the health report of the cache's counters now:
// HealthReport(c.Stats()).
func (c *Cache) Health() Health { return HealthReport(c.Stats()) }

// HealthReport judges a Stats snapshot by the original's health rules
// (cache_health_report) that map onto this cache; it is a pure function.
//
//   - refill_failures (Critical): SSD or resident hits DRAM could not take
//     for a reason other than its policy's admission (RefillFailures −
//     RefillRejected): a value larger than a DRAM block or shard, or pins
//     leaving no room. Each later read of the key pays a lower tier again.
//   - pinned_entries_block_eviction (Critical): DRAMNoRoom > 0.
//   - values_larger_than_tier (Warning): DRAMOversize > 0, values that can
//     never live in DRAM.
//   - values_larger_than_ssd_block (Warning): Rejected > 0, writes no tier
//     accepts.
//   - ssd_write_budget_throttling: the write budget refused writes
//     (SSDBudgetRefused > 0); Warning when it admits less than
//     HealthBudgetShareWarning of keys, else Info.
//   - ssd_write_budget_cannot_be_met (Warning): the last closed window
//     wrote more than HealthBudgetOvershoot times the target.
//   - writeback_backpressure (Warning): WritebackBackpressure > 0.
//   - hit_rate_below_floor (Warning): below HealthHitRateFloor while DRAM
//     evicts.
//   - time_to_live_shorter_than_reuse (Warning): ExpiredReads above
//     HealthExpiredReadsCeiling of lookups.
//   - memory_admission_rejecting (Info): the DRAM policy refused more than
//     HealthAdmissionRejectRatio of the values offered to it (puts and
//     refills). With TinyLFU this is the policy keeping one-time keys out,
//     which is only a problem when the hit rate is low too.
//
// The ratio rules (the last three) need HealthMinRequests lookups (hits of
// every tier plus misses). The original's expiry_could_not_delete_durable_copy
// does not apply (a block's expiry is in its header, checked on every read
// and at open, so a failed delete never serves or resurrects it), nor do
// reads_escalate_to_exclusive (DRAM hits take no lock at all) and
// eviction_falls_back_to_full_scan (victims come off the policy's lists in
// O(1); there is no candidate window).
func HealthReport(s Stats) Health {
	var fs []HealthFinding
	add := func(id, component string, sev Severity, observed, threshold float64, format string, args ...any) {
		fs = append(fs, HealthFinding{ID: id, Component: component, Severity: sev,
			Observed: observed, Threshold: threshold, Message: fmt.Sprintf(format, args...)})
	}
	if n := s.RefillFailures - s.RefillRejected; n > 0 {
		add(HealthRefillFailures, "dram", SeverityCritical, float64(n), 0,
			"%d lower-tier hits could not be refilled into DRAM (too large, or pinned entries left no room): their later reads pay a lower tier again", n)
	}
	if s.DRAMNoRoom > 0 {
		add(HealthPinnedBlockEviction, "dram", SeverityCritical, float64(s.DRAMNoRoom), 0,
			"pinned entries left DRAM no room %d times (%d entries, %d bytes pinned now): release handles sooner or give DRAM more capacity",
			s.DRAMNoRoom, s.PinnedEntries, s.PinnedBytes)
	}
	if s.DRAMOversize > 0 {
		add(HealthValuesLargerThanTier, "dram", SeverityWarning, float64(s.DRAMOversize), 0,
			"%d values were larger than a DRAM block or shard and live in lower tiers only: raise MaxDRAMBlockBytes or lower Shards", s.DRAMOversize)
	}
	if s.Rejected > 0 {
		add(HealthValuesLargerThanSSD, "ssd", SeverityWarning, float64(s.Rejected), 0,
			"%d writes were larger than every tier accepts (ErrTooLarge) and are not cached", s.Rejected)
	}
	if s.SSDBudgetRefused > 0 {
		share := float64(s.SSDStore.BudgetShare) / ssdtier.MaxBudgetShare
		sev := SeverityInfo
		if share < HealthBudgetShareWarning {
			sev = SeverityWarning
		}
		add(HealthWriteBudgetThrottling, "ssd_write_budget", sev, share, HealthBudgetShareWarning,
			"the SSD write budget refused %d writes and admits %.1f%% of keys", s.SSDBudgetRefused, 100*share)
	}
	if target := s.SSDStore.BudgetTargetBytesPerSec; target > 0 {
		limit := float64(HealthBudgetOvershoot * target)
		if obs := float64(s.SSDStore.BudgetObservedBytesPerSec); obs > limit {
			add(HealthWriteBudgetCannotBeMet, "ssd_write_budget", SeverityWarning, obs, limit,
				"the SSD tier wrote %.0f bytes/s against a budget of %d: more than the budget can throttle", obs, target)
		}
	}
	if s.WritebackBackpressure > 0 {
		add(HealthWritebackBackpressure, "writeback", SeverityWarning, float64(s.WritebackBackpressure), 0,
			"the writeback queue was full %d times and callers wrote to SSD themselves: raise WriteBackQueueLen or reduce the write rate", s.WritebackBackpressure)
	}
	hits := s.DRAM.Hits + s.Resident.Hits + s.SSD.Hits
	requests := hits + s.Misses
	if requests >= HealthMinRequests {
		r := float64(requests)
		if rate := float64(hits) / r; rate < HealthHitRateFloor && s.DRAM.Evictions > 0 {
			add(HealthHitRateBelowFloor, "dram", SeverityWarning, rate, HealthHitRateFloor,
				"%.1f%% of %d lookups hit while DRAM evicts: the working set does not fit", 100*rate, requests)
		}
		if ratio := float64(s.ExpiredReads) / r; ratio > HealthExpiredReadsCeiling {
			add(HealthTTLShorterThanReuse, "dram", SeverityWarning, ratio, HealthExpiredReadsCeiling,
				"%.1f%% of lookups found their entry expired: the TTL is shorter than the keys' reuse interval", 100*ratio)
		}
		offered := s.DRAM.Puts + s.DRAM.Promotions + s.DRAMAdmissionRejected
		if offered > 0 {
			if ratio := float64(s.DRAMAdmissionRejected) / float64(offered); ratio > HealthAdmissionRejectRatio {
				add(HealthMemoryAdmissionRejected, "dram", SeverityInfo, ratio, HealthAdmissionRejectRatio,
					"the DRAM policy refused %.1f%% of the values offered to it", 100*ratio)
			}
		}
	}
	slices.SortFunc(fs, func(a, b HealthFinding) int {
		return cmp.Or(cmp.Compare(b.Severity, a.Severity), cmp.Compare(a.ID, b.ID))
	})
	h := Health{Findings: fs}
	for _, f := range fs {
		switch f.Severity {
		case SeverityCritical:
			h.Critical++
		case SeverityWarning:
			h.Warning++
		default:
			h.Info++
		}
	}
	h.Healthy = h.Critical == 0 && h.Warning == 0
	return h
}
