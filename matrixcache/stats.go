package matrixcache

import (
	"github.com/temporalstore/temporalstore-go/matrixcache/residenttier"
	"github.com/temporalstore/temporalstore-go/matrixcache/ssdtier"
)

// TierStats are the counters of one tier.
type TierStats struct {
	// Hits and Misses count lookups that reached the tier (Get, GetBatch,
	// Acquire; Peek counts nothing).
	Hits, Misses int64
	// Puts counts values the cache wrote to the tier, demotions included.
	Puts int64
	// Evictions counts entries the tier's replacement policy gave up
	// (DRAM only; the SSD tier's own evictions are in Stats.SSDStore).
	Evictions int64
	// Demotions counts DRAM victims written to a lower tier (DRAM), or
	// written to this tier (Resident).
	Demotions int64
	// Promotions counts values refilled into DRAM from a lower tier (DRAM),
	// or into this tier from the SSD tier (Resident).
	Promotions int64
	// Expired counts expired entries found by a read or as a victim and
	// dropped.
	Expired int64
	// StaleCopiesDropped counts older copies a write dropped from the tier
	// because the new value did not go there (last write wins).
	StaleCopiesDropped int64
	// Entries and Bytes are what the tier holds now (DRAM: value plus key
	// bytes, as the policy accounts them).
	Entries, Bytes int64
}

// Stats is a snapshot of a cache's counters.
type Stats struct {
	DRAM TierStats
	// Resident is the file-backed resident tier (zero when it is off).
	Resident TierStats
	SSD      TierStats
	// SSDStore and ResidentStore are the lower tiers' own snapshots (zero
	// when the tier is off).
	SSDStore      ssdtier.Stats
	ResidentStore residenttier.Stats
	// ResidentWriteFailures counts resident writes that failed (the value
	// then lives in the other tiers only).
	ResidentWriteFailures int64

	// Misses counts lookups no tier answered.
	Misses int64
	// Rejected counts writes no tier accepts (ErrTooLarge).
	Rejected int64
	// Loads counts the loads GetOrLoad ran (one per single flight), and
	// LoadFailures those that returned an error.
	Loads, LoadFailures int64
	// HotnessPromotions counts DRAM entries whose hotness crossed the DRAM
	// hotness threshold.
	HotnessPromotions int64
	// RefillFailures counts SSD hits DRAM could not take (too large, or
	// refused by the replacement policy).
	RefillFailures int64
	// DRAMAdmissionRejected counts values the DRAM replacement policy
	// refused (TinyLFU admission, or no room beside pinned entries).
	DRAMAdmissionRejected int64
	// SSDBudgetRefused counts SSD writes the write budget refused.
	SSDBudgetRefused int64
	// DemotionFailures counts DRAM victims whose demotion to SSD failed.
	DemotionFailures int64
	// Pins and Unpins count Acquire pins and Release unpins;
	// PinnedEntries and PinnedBytes are the DRAM entries pinned now.
	Pins, Unpins               int64
	PinnedEntries, PinnedBytes int64
	// Writeback counters (Options.WriteBack): jobs queued, writes that
	// replaced a queued job of the same key, jobs committed, writes made
	// directly because the queue was full, queued writes that failed to
	// commit, and the queue's depth now and at most.
	WritebackEnqueued, WritebackCoalesced, WritebackDrained int64
	WritebackBackpressure, WritebackFailures                int64
	WritebackQueueDepth, WritebackMaxQueueDepth             int64
	// Latency histograms of Get, Put, and the SSD reads of Get and Acquire
	// that missed DRAM (read-through); with WriteBack, WritebackLatency
	// times each committed batch.
	GetLatency, PutLatency, ReadThroughLatency, WritebackLatency Latency
	// Recovered counts entries AutoRecoverOnStart loaded into DRAM.
	Recovered int64

	// ExpiredReads counts reads (Get, GetBatch, Acquire) that found the
	// key's DRAM entry expired: misses, also counted in DRAM.Expired.
	ExpiredReads int64
	// ExpiredReclaimed counts expired DRAM entries that writes dropped
	// (earliest expiry first, before the policy evicts live entries for
	// room); they are counted in DRAM.Expired too.
	ExpiredReclaimed int64
	// RefillRejected counts refills the DRAM policy's admission declined
	// (TinyLFU preferring the resident entries); they are also counted in
	// RefillFailures and DRAMAdmissionRejected.
	RefillRejected int64
	// DRAMNoRoom counts writes and refills DRAM refused because pinned
	// entries left no room (also counted in DRAMAdmissionRejected, or in
	// RefillFailures for refills), and SetDRAMCapacity calls pinned
	// entries kept above the new capacity.
	DRAMNoRoom int64
	// DRAMOversize counts values written or refilled that are larger than
	// a DRAM block (MaxDRAMBlockBytes) or a DRAM shard, so that they live
	// in the lower tiers only (refills are also counted in RefillFailures).
	DRAMOversize int64
	// BatchReadsCoalesced counts GetBatch positions answered from an
	// earlier position's read of the lower tiers, without reading them
	// again; BatchWritesCoalesced counts PutBatch items not written
	// because a later item of the batch writes the same key.
	BatchReadsCoalesced, BatchWritesCoalesced int64
	// EvictionCallbacks counts the calls of the eviction callback
	// (Options.OnEvict).
	EvictionCallbacks int64
	// DRAMHitsToPolicy counts the DRAM hits the replacement policy was
	// told of. The others were lock-free hits left out of the sample taken
	// while goroutines read a shard at once (see Cache).
	DRAMHitsToPolicy int64
}

// Stats returns a snapshot of the cache's counters. It locks every shard in
// turn, so it is not free on a large cache.
func (c *Cache) Stats() Stats {
	st := &c.st
	s := Stats{
		DRAM: TierStats{
			Misses: st.dramMisses.Load(), Puts: st.dramPuts.Load(),
			Evictions: st.dramEvictions.Load(), Demotions: st.dramDemotions.Load(),
			Promotions: st.dramPromotions.Load(), Expired: st.dramExpired.Load(),
			StaleCopiesDropped: st.dramStale.Load(),
		},
		SSD: TierStats{
			Hits: st.ssdHits.Load(), Misses: st.ssdMisses.Load(), Puts: st.ssdPuts.Load(),
			StaleCopiesDropped: st.ssdStale.Load(),
		},
		Misses: st.misses.Load(), Rejected: st.rejected.Load(),
		HotnessPromotions: st.hotnessPromotions.Load(), RefillFailures: st.refillFailures.Load(),
		DRAMAdmissionRejected: st.dramAdmissionRejected.Load(), SSDBudgetRefused: st.ssdBudgetRefused.Load(),
		DemotionFailures: st.demotionFailures.Load(), Pins: st.pins.Load(), Unpins: st.unpins.Load(),
		Recovered:    st.recovered.Load(),
		ExpiredReads: st.expiredReads.Load(), RefillRejected: st.refillRejected.Load(),
		ExpiredReclaimed: st.expiredReclaimed.Load(),
		DRAMNoRoom:       st.dramNoRoom.Load(), DRAMOversize: st.dramOversize.Load(),
		EvictionCallbacks: c.ev.n.Load(), BatchReadsCoalesced: st.batchReads.Load(),
		BatchWritesCoalesced: st.batchWrites.Load(),
		Loads:                st.loads.Load(), LoadFailures: st.loadFailures.Load(),
		GetLatency: st.getLatency.snapshot(), PutLatency: st.putLatency.snapshot(),
		ReadThroughLatency: st.readThroughLatency.snapshot(),
	}
	for _, sh := range c.shards {
		sh.mu.Lock()
		c.drainLocked(sh)
		s.DRAM.Hits += sh.hits.Load() + sh.reads.hits()
		s.DRAMHitsToPolicy += sh.hits.Load() + sh.recorded
		s.DRAM.Entries += int64(sh.pol.Len())
		s.DRAM.Bytes += sh.pol.Cost()
		for h, p := range sh.pins {
			if e := sh.m.load(h); e != nil && p.n > 0 {
				s.PinnedEntries++
				s.PinnedBytes += int64(e.vlen)
			}
		}
		sh.mu.Unlock()
	}
	if w := c.wb; w != nil {
		s.WritebackEnqueued, s.WritebackCoalesced = w.enqueued.Load(), w.coalesced.Load()
		s.WritebackDrained, s.WritebackBackpressure = w.drained.Load(), w.backpressure.Load()
		s.WritebackFailures, s.WritebackMaxQueueDepth = w.failures.Load(), w.maxDepth.Load()
		s.WritebackQueueDepth = int64(w.depth())
		s.WritebackLatency = w.latency.snapshot()
	}
	s.Resident = TierStats{
		Hits: st.resHits.Load(), Misses: st.resMisses.Load(), Puts: st.resPuts.Load(),
		Demotions: st.resDemotions.Load(), Promotions: st.resRefills.Load(),
		StaleCopiesDropped: st.resStale.Load(),
	}
	s.ResidentWriteFailures = st.resWriteFailures.Load()
	if c.res != nil {
		s.ResidentStore = c.res.Stats()
		s.Resident.Entries, s.Resident.Bytes = s.ResidentStore.Entries, s.ResidentStore.Bytes
		s.Resident.Evictions, s.Resident.Expired = s.ResidentStore.Evictions, s.ResidentStore.Expired
	}
	if c.ssdSt != nil {
		s.SSDStore = c.ssdSt.Stats()
		s.SSD.Entries, s.SSD.Bytes = s.SSDStore.Entries, s.SSDStore.Bytes
		s.SSD.Evictions = s.SSDStore.Evictions
		s.SSD.Expired = s.SSDStore.Expired
	}
	return s
}
