package cacheprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/temporalstore/temporalstore-go/matrixcache"
)

// The tables below are every figure the Collector exports. A new field of
// matrixcache.Stats (or TierStats, or ssdtier.Stats) is one line in one of
// them. They are never modified: NewCollector only reads them.

// field is one number of a snapshot of type S: its metric name after the
// namespace, its help, its Prometheus type, and how to read it.
type field[S any] struct {
	name string
	help string
	typ  prometheus.ValueType
	get  func(*S) int64
}

func counter[S any](name, help string, get func(*S) int64) field[S] {
	return field[S]{name, help, prometheus.CounterValue, get}
}

func gauge[S any](name, help string, get func(*S) int64) field[S] {
	return field[S]{name, help, prometheus.GaugeValue, get}
}

type (
	stats     = matrixcache.Stats
	tierStats = matrixcache.TierStats
)

// tiers are the label values of the per-tier metrics, and where each tier's
// counters are in a snapshot. Every tier is exported even when it is off
// (its counters are zero), so that the series a dashboard reads exist
// whatever the cache's options.
var tiers = []struct {
	tier matrixcache.Tier
	get  func(*stats) *tierStats
}{
	{matrixcache.TierDRAM, func(s *stats) *tierStats { return &s.DRAM }},
	{matrixcache.TierResident, func(s *stats) *tierStats { return &s.Resident }},
	{matrixcache.TierSSD, func(s *stats) *tierStats { return &s.SSD }},
}

// tierFields are exported once per tier, as tier_<name>{tier="..."}.
var tierFields = []field[tierStats]{
	counter("hits_total", "Lookups (Get, GetBatch, Acquire) the tier answered.", func(t *tierStats) int64 { return t.Hits }),
	counter("misses_total", "Lookups that reached the tier and did not find the key there.", func(t *tierStats) int64 { return t.Misses }),
	counter("puts_total", "Values the cache wrote to the tier, demotions included.", func(t *tierStats) int64 { return t.Puts }),
	counter("evictions_total", "Entries the tier gave up to stay within its capacity.", func(t *tierStats) int64 { return t.Evictions }),
	counter("demotions_total", "Victims of the tier written to a colder tier.", func(t *tierStats) int64 { return t.Demotions }),
	counter("promotions_total", "Values refilled into the tier from a colder tier.", func(t *tierStats) int64 { return t.Promotions }),
	counter("expired_total", "Expired entries found in the tier and dropped.", func(t *tierStats) int64 { return t.Expired }),
	counter("stale_copies_dropped_total", "Older copies dropped from the tier because a newer write of the key did not go there.", func(t *tierStats) int64 { return t.StaleCopiesDropped }),
	gauge("entries", "Entries the tier holds.", func(t *tierStats) int64 { return t.Entries }),
	gauge("bytes", "Bytes the tier holds, as the tier accounts them (DRAM: values plus keys).", func(t *tierStats) int64 { return t.Bytes }),
}

// statsFields are the cache-wide figures and those of the SSD and resident
// stores.
var statsFields = []field[stats]{
	counter("misses_total", "Lookups no tier answered.", func(s *stats) int64 { return s.Misses }),
	counter("rejected_writes_total", "Writes no tier accepts (ErrTooLarge).", func(s *stats) int64 { return s.Rejected }),
	counter("hotness_promotions_total", "DRAM entries whose hotness crossed the DRAM hotness threshold.", func(s *stats) int64 { return s.HotnessPromotions }),
	counter("refill_failures_total", "SSD hits DRAM could not take (too large, or refused by the replacement policy).", func(s *stats) int64 { return s.RefillFailures }),
	counter("dram_admission_rejected_total", "Values the DRAM replacement policy refused.", func(s *stats) int64 { return s.DRAMAdmissionRejected }),
	counter("ssd_budget_refused_total", "SSD writes the SSD write budget refused.", func(s *stats) int64 { return s.SSDBudgetRefused }),
	counter("demotion_failures_total", "DRAM victims whose demotion to the SSD tier failed.", func(s *stats) int64 { return s.DemotionFailures }),
	counter("pins_total", "Entries pinned by Acquire.", func(s *stats) int64 { return s.Pins }),
	counter("unpins_total", "Pins released by Handle.Release.", func(s *stats) int64 { return s.Unpins }),
	gauge("pinned_entries", "DRAM entries pinned now.", func(s *stats) int64 { return s.PinnedEntries }),
	gauge("pinned_bytes", "Value bytes of the DRAM entries pinned now.", func(s *stats) int64 { return s.PinnedBytes }),
	counter("writeback_enqueued_total", "SSD writes queued for the background writer.", func(s *stats) int64 { return s.WritebackEnqueued }),
	counter("writeback_coalesced_total", "Queued SSD writes replaced by a later write of the same key.", func(s *stats) int64 { return s.WritebackCoalesced }),
	counter("writeback_drained_total", "Queued SSD writes the background writer committed.", func(s *stats) int64 { return s.WritebackDrained }),
	counter("writeback_backpressure_total", "SSD writes made directly by the caller because the writeback queue was full.", func(s *stats) int64 { return s.WritebackBackpressure }),
	counter("writeback_failures_total", "Queued SSD writes that failed to commit.", func(s *stats) int64 { return s.WritebackFailures }),
	gauge("writeback_queue_depth", "SSD writes waiting in the writeback queue now.", func(s *stats) int64 { return s.WritebackQueueDepth }),
	gauge("writeback_queue_max_depth", "Largest depth the writeback queue reached since the cache opened.", func(s *stats) int64 { return s.WritebackMaxQueueDepth }),
	counter("recovered_entries_total", "Entries AutoRecoverOnStart loaded into DRAM when the cache opened.", func(s *stats) int64 { return s.Recovered }),
	counter("expired_reads_total", "Reads that found the key's DRAM entry expired.", func(s *stats) int64 { return s.ExpiredReads }),
	counter("expired_reclaimed_total", "Expired DRAM entries dropped by writes, before live entries are evicted for room.", func(s *stats) int64 { return s.ExpiredReclaimed }),
	counter("refill_rejected_total", "Refills the DRAM policy's admission declined (part of refill failures).", func(s *stats) int64 { return s.RefillRejected }),
	counter("dram_no_room_total", "Writes and refills DRAM refused, and capacity changes not completed, because pinned entries left no room.", func(s *stats) int64 { return s.DRAMNoRoom }),
	counter("dram_oversize_total", "Values written or refilled that are larger than a DRAM block or shard, so they live in lower tiers only.", func(s *stats) int64 { return s.DRAMOversize }),
	counter("batch_reads_coalesced_total", "GetBatch positions answered from an earlier position's read of the lower tiers for the same key.", func(s *stats) int64 { return s.BatchReadsCoalesced }),
	counter("batch_writes_coalesced_total", "PutBatch items not written because a later item of the batch writes the same key.", func(s *stats) int64 { return s.BatchWritesCoalesced }),
	counter("eviction_callbacks_total", "Calls of the eviction callback.", func(s *stats) int64 { return s.EvictionCallbacks }),
	counter("loads_total", "Loads GetOrLoad ran on a miss (one for all the concurrent misses of a key).", func(s *stats) int64 { return s.Loads }),
	counter("load_failures_total", "GetOrLoad loads that returned an error.", func(s *stats) int64 { return s.LoadFailures }),
	counter("dram_hits_to_policy_total", "DRAM hits the replacement policy was told of (the rest: a hot entry hit again within an epoch, or left out of the sample taken while goroutines read a shard at once).", func(s *stats) int64 { return s.DRAMHitsToPolicy }),

	gauge("ssd_store_entries", "Blocks the SSD store holds.", func(s *stats) int64 { return s.SSDStore.Entries }),
	gauge("ssd_store_bytes", "Accounted bytes (encoded blocks plus keys) the SSD store holds.", func(s *stats) int64 { return s.SSDStore.Bytes }),
	gauge("ssd_store_capacity_bytes", "Capacity of the SSD store.", func(s *stats) int64 { return s.SSDStore.CapacityBytes }),
	counter("ssd_store_puts_total", "Blocks written to the SSD store.", func(s *stats) int64 { return s.SSDStore.Puts }),
	counter("ssd_store_gets_total", "Lookups in the SSD store.", func(s *stats) int64 { return s.SSDStore.Gets }),
	counter("ssd_store_hits_total", "SSD store lookups that found a live block.", func(s *stats) int64 { return s.SSDStore.Hits }),
	counter("ssd_store_misses_total", "SSD store lookups that found no live block (absent, expired or undecodable).", func(s *stats) int64 { return s.SSDStore.Misses }),
	counter("ssd_store_deletes_total", "Blocks removed from the SSD store by Delete, DeletePrefix and DeleteShard.", func(s *stats) int64 { return s.SSDStore.Deletes }),
	counter("ssd_store_budget_refused_total", "Blocks the SSD store's write budget refused.", func(s *stats) int64 { return s.SSDStore.BudgetRefused }),
	gauge("ssd_store_budget_share_basis_points", "Share of keys the SSD write budget admits, out of 10000 (10000 when unlimited).", func(s *stats) int64 { return s.SSDStore.BudgetShare }),
	gauge("ssd_store_budget_observed_bytes_per_second", "Bytes the SSD store wrote in the last closed one-second budget window.", func(s *stats) int64 { return s.SSDStore.BudgetObservedBytesPerSec }),
	gauge("ssd_store_budget_target_bytes_per_second", "The SSD write budget's target (0: unlimited).", func(s *stats) int64 { return s.SSDStore.BudgetTargetBytesPerSec }),
	counter("ssd_store_evictions_total", "Blocks the SSD store removed to stay within its capacity.", func(s *stats) int64 { return s.SSDStore.Evictions }),
	counter("ssd_store_expired_total", "Expired blocks removed from the SSD store.", func(s *stats) int64 { return s.SSDStore.Expired }),
	counter("ssd_store_corrupt_total", "Blocks of the SSD store that failed to decode and were removed.", func(s *stats) int64 { return s.SSDStore.Corrupt }),
	counter("ssd_store_commits_total", "Write transactions the SSD store committed.", func(s *stats) int64 { return s.SSDStore.Commits }),
	counter("ssd_store_committed_ops_total", "Writes and deletes carried by the SSD store's commits (ops/commits is the batch size).", func(s *stats) int64 { return s.SSDStore.CommittedOps }),
	counter("ssd_store_written_bytes_total", "Encoded block bytes written to the SSD store.", func(s *stats) int64 { return s.SSDStore.BytesWritten }),

	counter("resident_write_failures_total", "Writes to the resident tier that failed (the value then lives in the other tiers only).", func(s *stats) int64 { return s.ResidentWriteFailures }),
	gauge("resident_store_entries", "Blocks the resident store holds.", func(s *stats) int64 { return s.ResidentStore.Entries }),
	gauge("resident_store_bytes", "Bytes of the block files the resident store holds.", func(s *stats) int64 { return s.ResidentStore.Bytes }),
	gauge("resident_store_capacity_bytes", "Capacity of the resident store.", func(s *stats) int64 { return s.ResidentStore.CapacityBytes }),
	counter("resident_store_puts_total", "Blocks written to the resident store.", func(s *stats) int64 { return s.ResidentStore.Puts }),
	counter("resident_store_gets_total", "Lookups in the resident store.", func(s *stats) int64 { return s.ResidentStore.Gets }),
	counter("resident_store_hits_total", "Resident store lookups that found a live block.", func(s *stats) int64 { return s.ResidentStore.Hits }),
	counter("resident_store_misses_total", "Resident store lookups that found no live block.", func(s *stats) int64 { return s.ResidentStore.Misses }),
	counter("resident_store_deletes_total", "Blocks removed from the resident store by Delete, DeletePrefix and DeleteShard.", func(s *stats) int64 { return s.ResidentStore.Deletes }),
	counter("resident_store_evictions_total", "Blocks the resident store removed to stay within its capacity.", func(s *stats) int64 { return s.ResidentStore.Evictions }),
	counter("resident_store_expired_total", "Expired blocks removed from the resident store.", func(s *stats) int64 { return s.ResidentStore.Expired }),
	counter("resident_store_corrupt_total", "Block files of the resident store that failed to decode and were removed.", func(s *stats) int64 { return s.ResidentStore.Corrupt }),
	counter("resident_store_temp_files_removed_total", "Leftovers of interrupted resident writes removed when the store opened.", func(s *stats) int64 { return s.ResidentStore.TempFilesRemoved }),
	counter("resident_store_written_bytes_total", "Bytes of block files written to the resident store.", func(s *stats) int64 { return s.ResidentStore.BytesWritten }),
	counter("resident_store_fsyncs_total", "Fsync calls (files and directories) of the resident store.", func(s *stats) int64 { return s.ResidentStore.Fsyncs }),
}

// latencyField is one latency histogram of a snapshot. It is exported as
// <name>_seconds (a histogram) and <name>_max_seconds (a gauge).
type latencyField struct {
	name string
	help string
	get  func(*stats) matrixcache.Latency
}

var latencyFields = []latencyField{
	{"get_duration", "Latency of the Get calls the cache timed.", func(s *stats) matrixcache.Latency { return s.GetLatency }},
	{"put_duration", "Latency of the Put calls the cache timed.", func(s *stats) matrixcache.Latency { return s.PutLatency }},
	{"read_through_duration", "Latency of the timed SSD reads of Get and Acquire that missed DRAM.", func(s *stats) matrixcache.Latency { return s.ReadThroughLatency }},
	{"writeback_batch_duration", "Latency of committing one writeback batch to the SSD tier.", func(s *stats) matrixcache.Latency { return s.WritebackLatency }},
}
