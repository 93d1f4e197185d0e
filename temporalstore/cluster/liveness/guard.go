package liveness

import (
	"cmp"
	"fmt"
	"slices"
)

// CheckRemoval reports whether member m may be taken out of every shard
// it votes in (a leave, or the replacement of a dead node), given
// placement (shard → voting members) and the members down now: an error
// wrapping ErrWouldOrphan names a shard left with no live voter (checked
// first, over every shard), one wrapping ErrBelowQuorum a shard whose
// live voters could not form a majority of what is left. A removal
// shrinks the shard's voter set, so the quorum is counted over the voters
// without m.
func CheckRemoval(placement map[string][]string, down map[string]bool, m string) error {
	type count struct {
		shard            string
		remaining, alive int
	}
	var counts []count
	for s, voters := range placement {
		if !slices.Contains(voters, m) {
			continue
		}
		c := count{shard: s}
		for _, x := range voters {
			if x == m {
				continue
			}
			c.remaining++
			if !down[x] {
				c.alive++
			}
		}
		counts = append(counts, c)
	}
	slices.SortFunc(counts, func(a, b count) int { return cmp.Compare(a.shard, b.shard) })
	for _, c := range counts {
		if c.alive == 0 {
			return fmt.Errorf("%w: shard %s: %s is its last live voter", ErrWouldOrphan, c.shard, m)
		}
	}
	for _, c := range counts {
		if c.alive < c.remaining/2+1 {
			return fmt.Errorf("%w: shard %s: %d of its %d other voters live", ErrBelowQuorum, c.shard, c.alive, c.remaining)
		}
	}
	return nil
}
