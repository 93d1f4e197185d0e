package cachebench

import (
	"fmt"

	"github.com/dgraph-io/ristretto/v2"
	"github.com/maypok86/otter/v2"
)

// System names, in the order they alternate within a repeat.
const (
	SystemOurs      = "ours"
	SystemOtter     = "otter"
	SystemRistretto = "ristretto"
	SystemLRU       = "lru"
	// SystemPolicy is a reference in the hit section: our DRAM tier's
	// policy alone, told of every access (see policySystem).
	SystemPolicy = "policy"
	// SystemMap is a reference, not a cache: an unsynchronised Go map
	// read, in the throughput section's Get mix only. No cache does less
	// per hit, so its ratio to a peer bounds the ratio any cache can reach
	// in this harness on this machine.
	SystemMap = "map"
)

// Module paths of the peers, for the versions in the report.
const (
	otterModule     = "github.com/maypok86/otter/v2"
	ristrettoModule = "github.com/dgraph-io/ristretto/v2"
)

// simCache is one system under replay, built for one capacity and
// used by one goroutine.
type simCache interface {
	// access replays one request for key: it reports a hit, and on a miss
	// inserts key the way a user of the system would (Get miss → Set).
	access(key uint64) bool
	close()
}

// system builds fresh caches of one kind.
type system struct {
	name string
	// open returns an empty cache holding at most capacity entries.
	open func(capacity int) (simCache, error)
	// settings describe how open configures it, for the report.
	settings map[string]any
}

// peerSystems returns the peers and the baseline, by name.
func peerSystems() map[string]system {
	return map[string]system{
		SystemOtter: {
			name: SystemOtter,
			open: openOtter,
			settings: map[string]any{
				"module":       otterModule,
				"options":      "otter.Options{MaximumSize: capacity, Executor: run on the calling goroutine}",
				"replay":       "GetIfPresent; on a miss Set",
				"executor_why": "maintenance (buffer drains, eviction) runs synchronously instead of on goroutines, so the hit ratio does not depend on goroutine scheduling",
			},
		},
		SystemRistretto: {
			name: SystemRistretto,
			open: openRistretto,
			settings: map[string]any{
				"module":               ristrettoModule,
				"config":               "ristretto.Config{NumCounters: 10*capacity, MaxCost: capacity, BufferItems: 64, IgnoreInternalCost: true}",
				"cost":                 1,
				"replay":               "Get; on a miss Set(key, value, 1) then Wait()",
				"wait_why":             "Wait after each Set applies the asynchronous set buffer before the next request, so dropped or delayed Sets do not distort the hit ratio (ristretto's own hit-ratio benchmarks assume applied Sets)",
				"ignore_internal_cost": "without IgnoreInternalCost ristretto adds its 56-byte item overhead to each cost of 1, and MaxCost=capacity would hold about capacity/57 entries",
				"keys":                 "uint64 keys, hashed by ristretto's own KeyToHash",
			},
		},
		SystemPolicy: policySystem(),
		SystemLRU: {
			name:     SystemLRU,
			open:     func(capacity int) (simCache, error) { return newLRU(capacity), nil },
			settings: map[string]any{"what": "container/list LRU written for this benchmark, for orientation"},
		},
	}
}

type otterCache struct {
	c *otter.Cache[uint64, struct{}]
}

func openOtter(capacity int) (simCache, error) {
	c, err := otter.New(&otter.Options[uint64, struct{}]{
		MaximumSize: capacity,
		Executor:    func(fn func()) { fn() },
	})
	if err != nil {
		return nil, fmt.Errorf("otter: %w", err)
	}
	return otterCache{c}, nil
}

func (o otterCache) access(key uint64) bool {
	if _, ok := o.c.GetIfPresent(key); ok {
		return true
	}
	o.c.Set(key, struct{}{})
	return false
}

func (o otterCache) close() {
	o.c.InvalidateAll()
	o.c.StopAllGoroutines()
}

type ristrettoCache struct {
	c *ristretto.Cache[uint64, struct{}]
}

func openRistretto(capacity int) (simCache, error) {
	c, err := ristretto.NewCache(&ristretto.Config[uint64, struct{}]{
		NumCounters:        10 * int64(capacity),
		MaxCost:            int64(capacity),
		BufferItems:        64,
		IgnoreInternalCost: true,
	})
	if err != nil {
		return nil, fmt.Errorf("ristretto: %w", err)
	}
	return ristrettoCache{c}, nil
}

func (r ristrettoCache) access(key uint64) bool {
	if _, ok := r.c.Get(key); ok {
		return true
	}
	r.c.Set(key, struct{}{}, 1)
	r.c.Wait()
	return false
}

func (r ristrettoCache) close() { r.c.Close() }
