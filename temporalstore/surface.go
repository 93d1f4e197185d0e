package temporalstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// This file holds what the serving surfaces (RESP, HTTP, the Go client)
// need from the engine beyond Execute: which kinds exist and which of them
// write, a readiness probe, and the cache's statistics.

// Kinds lists every kind Execute runs, sorted.
func Kinds() []Kind {
	all := slices.Collect(maps.Keys(kinds))
	all = append(all, slices.Collect(maps.Keys(multiKinds))...)
	all = append(all, KindScan)
	slices.Sort(all)
	return slices.Compact(all)
}

// ShardProbe is the result of probing one shard.
type ShardProbe struct {
	Namespace, Table string
	Shard            int
	// Duration is how long the probe took, or waited before ctx ended it.
	Duration time.Duration
	// Err is nil when the shard answered.
	Err error
}

// Probe probes every shard of every table at once (see Ready): each must
// pass its append gate and its lock, and have a working log, before ctx
// ends. It returns one result per shard, tables in name order, and an
// error only when the engine is closed.
func (e *Engine) Probe(ctx context.Context) ([]ShardProbe, error) {
	e.mu.RLock()
	if e.closed {
		e.mu.RUnlock()
		return nil, ErrClosed
	}
	var out []ShardProbe
	var run []func()
	for _, name := range sortedTableNames(e.tables) {
		for i, s := range e.tables[name].shards {
			out = append(out, ShardProbe{Namespace: name.namespace, Table: name.name, Shard: i})
			idx := len(out) - 1
			run = append(run, func() {
				t0 := time.Now()
				err := s.Probe(ctx)
				out[idx].Duration, out[idx].Err = time.Since(t0), err
			})
		}
	}
	e.mu.RUnlock()
	var wg sync.WaitGroup
	for _, f := range run {
		wg.Go(f)
	}
	wg.Wait()
	return out, nil
}

// FreezeShard holds a shard's append gate until the returned function is
// called: its writes wait, its reads go on, and Probe reports it as not
// answering. It is for taking a consistent copy of a shard's files, and
// for testing what a wedged shard does to the surfaces. It waits for the
// shard's writes in flight, or for ctx.
func (e *Engine) FreezeShard(ctx context.Context, namespace, table string, shard int) (func(), error) {
	t, err := e.table(&Command{Namespace: namespace, Table: table})
	if err != nil {
		return nil, err
	}
	if shard < 0 || shard >= len(t.shards) {
		return nil, fmt.Errorf("%w: shard %d of %d", ErrInvalid, shard, len(t.shards))
	}
	return t.shards[shard].Freeze(ctx)
}

// CacheStats returns the record cache's counters; false without one.
func (e *Engine) CacheStats() (storage.CacheStats, bool) {
	if e.cache == nil {
		return storage.CacheStats{}, false
	}
	return e.cache.Stats(), true
}
