package local

import (
	"cmp"
	"context"
	"fmt"

	"github.com/temporalstore/temporalstore-go/matrixcache"
	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/disk"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/largelog"
)

// Open opens (creating if needed) the engine in opts.Dir, with
// disk.OpenLog wrapped by largelog (a value over 1 MiB in a file beside
// its shard's log, up to 512 MiB) as its OpenLog and, unless opts.CacheBytes is Disabled, a
// RecordCache over a DRAM-only matrixcache of opts.CacheBytes (default
// temporalstore.DefaultCacheBytes), where opts leaves them unset. Such a
// cache holds memory alone: nothing to close besides the engine.
func Open(ctx context.Context, opts temporalstore.Options) (*temporalstore.Engine, error) {
	if opts.OpenLog == nil {
		opts.OpenLog = largelog.Wrap(disk.OpenLog, largelog.Options{Own: command.IsOne, Logger: opts.Logger})
	}
	if opts.RecordCache == nil && opts.CacheBytes != temporalstore.Disabled {
		// The zero matrixcache Options but the DRAM tier's size: DRAM only.
		c, err := matrixcache.New(ctx, matrixcache.Options{DRAMCapacityBytes: cmp.Or(opts.CacheBytes, temporalstore.DefaultCacheBytes)})
		if err != nil {
			return nil, fmt.Errorf("local: record cache: %w", err)
		}
		opts.RecordCache = disk.NewRecordCache(c)
	}
	return temporalstore.Open(ctx, opts)
}
