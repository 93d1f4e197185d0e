package temporalstore

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"slices"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// Maintenance stages, in the order a round runs them. The order matters:
// the log is reclaimed before the sweep adds delete records to it, expired
// keys go before memory is reclaimed (their slots are then free), and
// compaction comes last, over what the sweep left live.
const (
	// StageReclaimLog checkpoints a shard that applied CheckpointRecords
	// since its last checkpoint, and drops log segments nothing points
	// into any more.
	StageReclaimLog = "reclaim_log"
	// StageExpire sweeps SweepBudget index entries a shard and deletes the
	// expired keys among them.
	StageExpire = "expire"
	// StageEvict reports the record cache's evictions since the last
	// round: the cache evicts as it fills, on every insert, so that its
	// memory stays within CacheBytes between rounds too. It also spills
	// collections while their memory is over CollectionBytes (Items then
	// counts the cache's evictions plus the collections spilled, Bytes
	// the collections' memory freed).
	StageEvict = "evict"
	// StageReclaimMemory shrinks mostly empty index tables and collection
	// slot tables.
	StageReclaimMemory = "reclaim_memory"
	// StageCompact rewrites at the head the live values of records that
	// are mostly dead (shard.RelocateSparse), then compacts the logs whose
	// space amplification exceeds CompactSpaceAmp: live values in the
	// oldest segments are rewritten at the head, and the segments dropped.
	StageCompact = "compact"
)

// relocateSparsePerRound bounds the sparse records a shard's compact stage
// relocates per round (at most a quarter of their commands each).
const relocateSparsePerRound = 4096

// Stages is the fixed order of a maintenance round.
var Stages = []string{StageReclaimLog, StageExpire, StageEvict, StageReclaimMemory, StageCompact}

// StageReport is what one stage of a round did and cost.
type StageReport struct {
	Name     string
	Duration time.Duration
	// Items is the stage's count: segments dropped (reclaim_log), keys
	// expired, cache entries evicted, bytes of memory freed
	// (reclaim_memory), values moved (compact).
	Items int64
	// Bytes is the log bytes the stage reclaimed (reclaim_log, compact).
	Bytes int64
}

// Round is one maintenance round.
type Round struct {
	Stages   []StageReport
	Duration time.Duration
}

// MaintenanceStats adds up the maintenance rounds since Open.
type MaintenanceStats struct {
	// Rounds counts the rounds run, Failed those that returned an error.
	Rounds, Failed uint64
	// Last is the last round's duration; Total all rounds'.
	Last, Total time.Duration
	// Stages are the totals of each stage, in Stages order.
	Stages []StageReport
}

// MaintenanceStats returns the rounds' totals.
func (e *Engine) MaintenanceStats() MaintenanceStats {
	e.maintStatsMu.Lock()
	defer e.maintStatsMu.Unlock()
	s := e.maintStats
	s.Stages = slices.Clone(s.Stages)
	return s
}

// zeroStages is every stage at zero, so that each has its series from the
// start; the engine's totals begin so.
func zeroStages() []StageReport {
	out := make([]StageReport, len(Stages))
	for i, name := range Stages {
		out[i].Name = name
	}
	return out
}

// countRound adds r to the totals.
func (e *Engine) countRound(r Round, err error) {
	e.maintStatsMu.Lock()
	defer e.maintStatsMu.Unlock()
	s := &e.maintStats
	s.Rounds++
	if err != nil {
		s.Failed++
	}
	s.Last = r.Duration
	s.Total += r.Duration
	for _, st := range r.Stages {
		if i := slices.Index(Stages, st.Name); i >= 0 {
			s.Stages[i].Items += st.Items
			s.Stages[i].Bytes += st.Bytes
			s.Stages[i].Duration += st.Duration
		}
	}
}

// Maintain runs one maintenance round over every shard of every table:
// the Stages, in order, each reporting its cost. Rounds never overlap. It
// returns the first error it met, after running every stage it could.
func (e *Engine) Maintain(ctx context.Context) (Round, error) {
	e.maintMu.Lock()
	defer e.maintMu.Unlock()
	shards, err := e.allShards()
	if err != nil {
		return Round{}, err
	}
	start := time.Now()
	var r Round
	var errs []error
	for _, name := range Stages {
		t0 := time.Now()
		rep := StageReport{Name: name}
		if err := ctx.Err(); err != nil {
			return r, err
		}
		switch name {
		case StageReclaimLog:
			for _, s := range shards {
				if s.SinceCheckpoint() >= e.opts.CheckpointRecords {
					if _, err := s.Checkpoint(ctx); err != nil {
						errs = append(errs, err)
						continue
					}
				}
				st, err := s.ReclaimLog(ctx)
				errs = append(errs, err)
				rep.Items += int64(st.Segments)
				rep.Bytes += st.Bytes
			}
		case StageExpire:
			for _, s := range shards {
				st, err := s.Sweep(ctx, e.opts.SweepBudget)
				errs = append(errs, err)
				rep.Items += int64(st.Expired)
				if len(st.Keys) > 0 {
					for _, fn := range e.expired.list() {
						(*fn)(s.table.namespace, s.table.name, st.Keys)
					}
				}
			}
		case StageEvict:
			if e.cache != nil {
				ev := e.cache.Stats().Evictions
				rep.Items = ev - e.lastEvictions
				e.lastEvictions = ev
			}
			// Writes spill from their own shard as they pass the budget;
			// this catches what they leave over it (after an open's
			// replay, or while other shards hold the memory).
			for _, s := range shards {
				b := e.collections
				if b == nil || b.Used() <= b.Limit() {
					break
				}
				st, err := s.Spill(ctx, b.Used()-b.Limit()+b.Limit()/16)
				errs = append(errs, err)
				rep.Items += int64(st.Spilled)
				rep.Bytes += st.Freed
			}
		case StageReclaimMemory:
			for _, s := range shards {
				rep.Items += int64(s.ReclaimMemory())
			}
		case StageCompact:
			for _, s := range shards {
				rs, err := s.RelocateSparse(ctx, relocateSparsePerRound)
				errs = append(errs, err)
				rep.Items += int64(rs.Moved)
				// Judged on written bytes: a preallocated segment's empty
				// tail is not garbage compaction could give back, and a
				// small log is not worth rewriting.
				ss := s.Stats()
				if ss.LiveBytes <= 0 || ss.GarbageBytes < e.opts.CompactMinGarbage ||
					float64(ss.LogWrittenBytes) <= e.opts.CompactSpaceAmp*float64(ss.LiveBytes) {
					continue
				}
				st, err := s.Compact(ctx, e.opts.CompactSegments)
				errs = append(errs, err)
				rep.Items += int64(st.Moved)
				rep.Bytes += st.Bytes
			}
		}
		rep.Duration = time.Since(t0)
		r.Stages = append(r.Stages, rep)
	}
	r.Duration = time.Since(start)
	// A replica that does not lead a shard writes nothing to it: its
	// leader's rounds sweep, spill and compact, and the replica applies
	// what they write.
	errs = slices.DeleteFunc(errs, func(err error) bool { return errors.Is(err, ErrNotLeader) })
	err = errors.Join(errs...)
	e.countRound(r, err)
	return r, err
}

// Checkpoint writes a checkpoint of every shard now (a maintenance round
// writes them every CheckpointRecords records).
func (e *Engine) Checkpoint(ctx context.Context) error {
	shards, err := e.allShards()
	if err != nil {
		return err
	}
	for _, s := range shards {
		if _, err := s.Checkpoint(ctx); err != nil {
			return err
		}
	}
	return nil
}

// allShards lists every shard of every table.
func (e *Engine) allShards() ([]tableShard, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrClosed
	}
	var out []tableShard
	for name, t := range e.tables {
		for _, s := range t.shards {
			out = append(out, tableShard{s, name})
		}
	}
	return out, nil
}

// tableShard is a shard and the table it belongs to.
type tableShard struct {
	*shard.Shard
	table tableName
}

// OnExpired has fn called with the keys of a table that expired and were
// deleted, after each maintenance round's expiry sweep deletes them (so
// up to a MaintenanceInterval after their time: reads stop serving an
// expired key at once). It is what Redis's expired keyspace events are
// made from. fn runs on the maintenance goroutine and must not keep
// keys; cancel stops the calls.
func (e *Engine) OnExpired(fn func(namespace, table string, keys [][]byte)) (cancel func()) {
	return e.expired.add(fn)
}

// maintain runs rounds every MaintenanceInterval until Close.
func (e *Engine) maintain() {
	defer close(e.maintDone)
	tick := time.NewTicker(e.opts.MaintenanceInterval)
	defer tick.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-e.stopMaint
		cancel()
	}()
	for {
		select {
		case <-e.stopMaint:
			return
		case <-tick.C:
		}
		r, err := e.maintainSafely(ctx)
		var pe *shard.PanicError
		switch {
		case errors.As(err, &pe):
			e.opts.Logger.Error("maintenance round panicked; contained", "err", err, "stack", string(pe.Stack))
		case err != nil && !errors.Is(err, ErrClosed) && ctx.Err() == nil:
			e.opts.Logger.Warn("maintenance round failed", "err", err)
		}
		attrs := []any{"duration", r.Duration}
		busy := false
		for _, st := range r.Stages {
			attrs = append(attrs, slog.Group(st.Name, "items", st.Items, "bytes", st.Bytes, "duration", st.Duration))
			busy = busy || st.Items > 0 && st.Name != StageEvict
		}
		if busy {
			e.opts.Logger.Info("maintenance round", attrs...)
		} else {
			e.opts.Logger.Debug("maintenance round", attrs...)
		}
	}
}

// ShardStats is one shard's statistics, for the surfaces to export.
type ShardStats struct {
	Namespace, Table string
	Shard            int
	// Keys is the number of keys (expired ones until swept), Collections
	// how many are hashes, sets, sorted sets or lists, and Spilled how
	// many of those are held in the log rather than in memory.
	Keys, Collections, Spilled int
	// CollectionBytes is the resident collections' memory (estimated).
	CollectionBytes int64
	// RecentBytes is the memory of the newest string records the shard
	// holds besides the record cache (Options.CacheBytes).
	RecentBytes int64
	// Spills counts collections spilled to the log since open; Loads
	// those made resident again by a write, Promotions by a read.
	Spills, Loads, Promotions uint64
	// IndexBytes is the resident index's memory; IndexBytesPerKey is it
	// over Keys.
	IndexBytes       int
	IndexBytesPerKey float64
	// LiveBytes is the log bytes live strings point at; LogBytes the log
	// files' allocated size on disk; SpaceAmp their ratio.
	LiveBytes, LogBytes int64
	SpaceAmp            float64
	LogSegments         int
	// LogRecords, LogFsyncs and LogWritten count since open: records
	// appended, fsyncs, bytes written. WriteAmp is LogWritten over the
	// key and value bytes written since open (compaction's rewrites and
	// the log's envelope included).
	LogRecords, LogFsyncs, LogWritten uint64
	WriteAmp                          float64
	// LogFsyncLatency is the time each of the LogFsyncs took.
	LogFsyncLatency LatencyHistogram
	// StaleRejects counts Feast row writes refused as older than the
	// stored row.
	StaleRejects uint64
	ReadOnly     bool
	// StorageFault is the storage fault the shard refuses writes with
	// (matching ErrStorageFault), nil while it takes them; FaultRecoveries
	// counts the faults it recovered from since open.
	StorageFault    error
	FaultRecoveries uint64
}

// LatencyHistogram counts durations in buckets whose bounds double from
// one microsecond (storage.BucketBound), the last open-ended, with its
// Total, Quantile and Merge.
type LatencyHistogram = storage.Histogram

// Stats returns every shard's statistics, tables in name order.
func (e *Engine) Stats() ([]ShardStats, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrClosed
	}
	var out []ShardStats
	for _, name := range sortedTableNames(e.tables) {
		out = append(out, e.tables[name].stats(name)...)
	}
	return out, nil
}

// stats returns the statistics of t's shards, t named name.
func (t *table) stats(name tableName) []ShardStats {
	out := make([]ShardStats, 0, len(t.shards))
	for i, s := range t.shards {
		st := s.Stats()
		ss := ShardStats{
			Namespace: name.namespace, Table: name.name, Shard: i,
			Keys: st.Keys, Collections: st.Collections, Spilled: st.Spilled,
			CollectionBytes: st.CollectionBytes, RecentBytes: st.RecentBytes,
			Spills: st.Spills, Loads: st.Loads, Promotions: st.Promotions,
			IndexBytes: st.IndexBytes,
			LiveBytes:  st.LiveBytes, LogBytes: st.LogBytes, SpaceAmp: st.SpaceAmp,
			LogSegments: st.LogSegments,
			LogRecords:  st.LogRecords, LogFsyncs: st.LogFsyncs, LogWritten: st.LogWritten,
			WriteAmp:        st.WriteAmp,
			LogFsyncLatency: st.LogFsyncLatency,
			StaleRejects:    t.adm.shards[i].staleRejects.Load(),
			ReadOnly:        t.adm.shards[i].readOnly.Load(),
		}
		if st.Keys > 0 {
			ss.IndexBytesPerKey = float64(st.IndexBytes) / float64(st.Keys)
		}
		ss.StorageFault, ss.FaultRecoveries = s.StorageFault(), s.Recoveries()
		out = append(out, ss)
	}
	return out
}

func sortedTableNames(m map[tableName]*table) []tableName {
	names := make([]tableName, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b tableName) int {
		return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
	})
	return names
}

// maintainSafely is Maintain for the background goroutine: a panic outside
// the shards' steps (which contain their own) ends the round with its
// error instead of the process, and is counted.
func (e *Engine) maintainSafely(ctx context.Context) (r Round, err error) {
	defer func() {
		if p := recover(); p != nil {
			e.panics.Add(1)
			err = &shard.PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	return e.Maintain(ctx)
}
