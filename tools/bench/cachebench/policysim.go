package cachebench

import (
	"errors"
	"fmt"

	"github.com/temporalstore/temporalstore-go/matrixcache/policy"
)

// policySystem is our DRAM tier's policy alone, a reference beside ours
// (the Cache): policy.TinyLFU behind a map that stands for the cache's
// table, every access told to it, every cost 1.
func policySystem() system {
	return system{
		name: SystemPolicy,
		open: openPolicySim,
		settings: map[string]any{
			"what":        "reference, not a cache: our DRAM tier's policy alone, told of every access",
			"source_dir":  "matrixcache/policy",
			"constructor": "policy.NewTinyLFU(capacity), cost 1 per entry",
			"replay":      "key in the map? Access : Admit(key, 1); victims leave the map, the key enters it unless Admit rejects it (ErrRejected)",
			"keys":        "trace keys passed as the policy's 64-bit keys (the policy mixes them itself)",
		},
	}
}

// policySim is a simulated cache: a map of the resident keys, kept in step
// with the policy's decisions, as the Cache's table is.
type policySim struct {
	p        *policy.TinyLFU
	resident map[uint64]struct{}
	victims  []uint64
	err      error // first disagreement between the map and the policy
}

func openPolicySim(capacity int) (simCache, error) {
	return &policySim{
		p:        policy.NewTinyLFU(int64(capacity)),
		resident: make(map[uint64]struct{}, capacity),
		victims:  make([]uint64, 0, 16),
	}, nil
}

func (c *policySim) access(key uint64) bool {
	if _, ok := c.resident[key]; ok {
		if !c.p.Access(key) && c.err == nil {
			c.err = fmt.Errorf("key %d is in the map but the policy does not hold it", key)
		}
		return true
	}
	var err error
	c.victims, err = c.p.Admit(key, 1, c.victims[:0])
	for _, v := range c.victims {
		delete(c.resident, v)
	}
	switch {
	case err == nil:
		c.resident[key] = struct{}{}
	case errors.Is(err, policy.ErrRejected):
	default:
		if c.err == nil {
			c.err = fmt.Errorf("admit %d: %w", key, err)
		}
	}
	return false
}

// verify reports the first disagreement seen, and checks that the map and
// the policy hold the same number of entries within the capacity.
func (c *policySim) verify() error {
	if c.err != nil {
		return c.err
	}
	if len(c.resident) != c.p.Len() {
		return fmt.Errorf("map holds %d keys, policy %d", len(c.resident), c.p.Len())
	}
	if c.p.Cost() > c.p.Capacity() {
		return fmt.Errorf("policy cost %d above capacity %d", c.p.Cost(), c.p.Capacity())
	}
	return nil
}

func (c *policySim) close() {}
