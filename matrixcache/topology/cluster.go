package topology

import "sync/atomic"

// Cluster publishes the current ring of a cluster to concurrent readers.
// Readers call Ring and use the ring they get without locking; writers
// replace it with Update. The zero Cluster is ready to use and holds an
// empty ring with default options.
type Cluster struct {
	ring atomic.Pointer[Ring]
}

// NewCluster returns a Cluster holding r, or an empty ring if r is nil.
func NewCluster(r *Ring) *Cluster {
	c := new(Cluster)
	if r != nil {
		c.ring.Store(r)
	}
	return c
}

// Ring returns the current ring. It never blocks and never returns nil.
func (c *Cluster) Ring() *Ring {
	if r := c.ring.Load(); r != nil {
		return r
	}
	empty := &Ring{ppw: DefaultPointsPerWeight}
	if c.ring.CompareAndSwap(nil, empty) {
		return empty
	}
	return c.ring.Load()
}

// Update replaces the current ring with fn(current). If another Update
// replaced the ring meanwhile, fn is called again with the newer ring, so
// fn must not have side effects. It returns the ring fn was given and the
// ring it returned, ready for Diff. fn must return a ring or an error; if
// it fails, the ring is not replaced and Update returns its error.
func (c *Cluster) Update(fn func(*Ring) (*Ring, error)) (before, after *Ring, err error) {
	for {
		before = c.Ring()
		after, err = fn(before)
		if err != nil {
			return before, nil, err
		}
		if c.ring.CompareAndSwap(before, after) {
			return before, after, nil
		}
	}
}
