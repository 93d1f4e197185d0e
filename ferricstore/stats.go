package ferricstore

import (
	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

// ShardStats is one shard's figures.
type ShardStats struct {
	// Streams, Entries, Groups and Pending are what the shard holds now
	// (pending: entries in the groups' PELs).
	Streams, Entries, Groups, Pending int64
	// Writes counts the logged writes, Batches the appends they were
	// grouped in, Deliveries the entries reads and claims handed to
	// consumers, Snapshots the snapshots written; all since Open.
	Writes, Batches, Deliveries, Snapshots uint64
	// LogRecords and LogBytes are the shard's log's appended records
	// and bytes since Open; Fsyncs its fdatasyncs.
	LogRecords, LogBytes, Fsyncs uint64
	// Failed says the shard refuses every call (its log failed).
	Failed bool
	// Flows are the shard's flows by state now (see flow.Counts).
	Flows flow.Counts
	// FlowsCreated ... FlowFires count the flow changes since Open:
	// flows made (schedules' included), claimed when due, reclaimed from
	// an expired lease, completed, failed (by FAIL, spent retries or
	// MaxActiveMs), retried, cancelled, failed by MaxActiveMs, and
	// schedule occurrences that made a flow.
	FlowsCreated, FlowsClaimed, FlowsReclaimed, FlowsCompleted, FlowsFailed uint64
	FlowsRetried, FlowsCancelled, FlowsExpired, FlowFires                   uint64
	// FlowWaitBuckets are the upper bounds (ms) of the due-to-claim
	// histogram; FlowWaitCounts its cumulative counts per bound, then
	// the total; FlowWaitSumMs the sum of the waits.
	FlowWaitBuckets []float64
	FlowWaitCounts  []uint64
	FlowWaitSumMs   uint64
}

// Stats returns each shard's figures, in shard order.
func (st *Store) Stats() []ShardStats {
	out := make([]ShardStats, len(st.shards))
	for i, sh := range st.shards {
		o := &out[i]
		sh.mu.RLock()
		o.Failed = sh.failed != nil
		o.Streams = int64(len(sh.streams))
		for _, s := range sh.streams {
			o.Entries += int64(s.Len())
			gs := s.Groups()
			o.Groups += int64(len(gs))
			for _, g := range gs {
				o.Pending += int64(g.PendingCount())
			}
		}
		o.Flows = sh.flows.Counts(st.opts.Now().UnixMilli())
		sh.mu.RUnlock()
		fc := &sh.flowStats
		o.FlowsCreated, o.FlowsClaimed, o.FlowsReclaimed = fc.created.Load(), fc.claimed.Load(), fc.reclaimed.Load()
		o.FlowsCompleted, o.FlowsFailed, o.FlowsRetried = fc.completed.Load(), fc.failed.Load()+fc.expired.Load(), fc.retried.Load()
		o.FlowsCancelled, o.FlowsExpired, o.FlowFires = fc.cancelled.Load(), fc.expired.Load(), fc.fired.Load()
		o.FlowWaitBuckets = flowWaitBuckets[:]
		o.FlowWaitCounts = make([]uint64, len(fc.waited))
		var cum uint64
		for i := range fc.waited {
			cum += fc.waited[i].Load()
			o.FlowWaitCounts[i] = cum
		}
		o.FlowWaitSumMs = fc.waitedSum.Load()
		o.Writes, o.Batches = sh.stats.writes.Load(), sh.stats.batches.Load()
		o.Deliveries, o.Snapshots = sh.stats.deliveries.Load(), sh.stats.snapshots.Load()
		ls := sh.log.Stats()
		o.LogRecords, o.LogBytes, o.Fsyncs = ls.Records, ls.Bytes, ls.Fsyncs
	}
	return out
}

// delivered is how many entries a write's result handed to a consumer.
func delivered(res any) uint64 {
	switch r := res.(type) {
	case []stream.Entry:
		return uint64(len(r))
	case AutoClaimed:
		return uint64(len(r.Claimed))
	}
	return 0
}
