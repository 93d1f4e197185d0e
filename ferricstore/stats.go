package ferricstore

import (
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
		sh.mu.RUnlock()
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
