package cachebench

import (
	"context"
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"

	"github.com/temporalstore/temporalstore-go/matrixcache"
	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// oursModule is the module of our cache, for the version in the report.
const oursModule = "github.com/temporalstore/temporalstore-go/matrixcache"

// oursMissing says why ours is not in the run ("" once it is built in).
const oursMissing = ""

// ours returns our Cache, DRAM tier alone, as a user would replay a trace
// through it: GetShared, and Put on a miss.
func ours() (system, bool) {
	return system{
		name: SystemOurs,
		open: openOurs,
		settings: map[string]any{
			"module":     oursModule,
			"source_dir": "matrixcache",
			"options":    "matrixcache.Options{SSDCapacityBytes: Disabled, DRAMCapacityBytes: capacity × the entry cost, Shards: 1}; every other field its default (policy tinylfu)",
			"shards_why": "one policy over the whole capacity, as otter and ristretto have; shards spread concurrent writers, and this replay is one goroutine (Options.Shards asks for about a thousand entries per shard)",
			"keys":       "cachekey.String(0, record), record \"key-\" and the trace key in 20 digits, so every key costs the same (key.Size() bytes, the value empty) and the capacity in bytes holds exactly capacity entries",
			"replay":     "GetShared; on a miss Put(key, empty value)",
		},
	}, true
}

// oursCache replays through a matrixcache.Cache.
type oursCache struct {
	c        *matrixcache.Cache
	capacity int
}

// oursKey is the Cache key of trace key k: its 20 digits make every key
// the same size.
func oursKey(k uint64) blockfmt.Key { return cachekey.String(0, fmt.Sprintf("key-%020d", k)) }

func openOurs(capacity int) (simCache, error) {
	cost := int64(oursKey(0).Size())
	c, err := matrixcache.New(context.Background(), matrixcache.Options{
		SSDCapacityBytes:  matrixcache.Disabled,
		DRAMCapacityBytes: int64(capacity) * cost,
		Shards:            1,
	})
	if err != nil {
		return nil, fmt.Errorf("matrixcache: %w", err)
	}
	return &oursCache{c: c, capacity: capacity}, nil
}

func (o *oursCache) access(k uint64) bool {
	ctx := context.Background()
	key := oursKey(k)
	if _, _, ok, _ := o.c.GetShared(ctx, key); ok {
		return true
	}
	_ = o.c.Put(ctx, key, []byte{}, matrixcache.PutOptions{})
	return false
}

// verify checks that the Cache holds no more entries than the capacity.
func (o *oursCache) verify() error {
	if n := o.c.Stats().DRAM.Entries; n > int64(o.capacity) {
		return fmt.Errorf("DRAM holds %d entries, above the capacity %d", n, o.capacity)
	}
	return nil
}

func (o *oursCache) close() { _ = o.c.Close() }
