package topology

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// NodeID names a cache node. IDs are compared as byte strings; they must be
// non-empty and unique within a ring.
type NodeID string

// State is a node's availability for new placements.
type State uint8

const (
	// Live nodes own the keys that hash to their points.
	Live State = iota
	// Down nodes stay members and keep their points, but own nothing: their
	// keys go to the next live node clockwise. Marking the node Live again
	// restores exactly the placement it had.
	Down
)

// String returns "live" or "down".
func (s State) String() string {
	switch s {
	case Live:
		return "live"
	case Down:
		return "down"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Node is one member of a ring.
type Node struct {
	// ID names the node. It must be non-empty and unique in the ring.
	ID NodeID
	// Weight is the node's share of the ring relative to the other nodes:
	// the node gets Weight × PointsPerWeight virtual nodes. It must be
	// between 1 and MaxWeight.
	Weight int
	// Domain is the node's failure domain (a rack, a zone). Owners places
	// copies of a key in distinct domains first. Nodes with the same Domain
	// share one domain; a node with an empty Domain is a domain of its own.
	Domain string
	// State is Live or Down. The zero value is Live.
	State State
}

// Limits on a ring.
const (
	// DefaultPointsPerWeight is the number of virtual nodes per unit of
	// weight when Options.PointsPerWeight is 0.
	DefaultPointsPerWeight = 160
	// MaxPointsPerWeight bounds Options.PointsPerWeight.
	MaxPointsPerWeight = 1 << 16
	// MaxWeight bounds Node.Weight.
	MaxWeight = 1 << 16
	// MaxPoints bounds the total number of virtual nodes of a ring: the sum
	// of every member's weight times the points per weight.
	MaxPoints = 1 << 22
)

// Options configures a ring.
type Options struct {
	// PointsPerWeight is the number of virtual nodes per unit of weight.
	// Placement depends on it, so every node of a cluster must use the same
	// value (the encoding carries it). 0 means DefaultPointsPerWeight; the
	// maximum is MaxPointsPerWeight.
	PointsPerWeight int
}

// Ring is an immutable consistent-hash ring: a membership of weighted nodes
// with failure domains and states, and the placement it implies.
//
// A Ring never changes after it is built. Methods that change the
// membership (Add, Remove, SetState, SetWeight) return a new Ring and leave
// the receiver as it was, so any number of goroutines may use a Ring at
// the same time without locking. Publish the current ring to readers with
// a Cluster or an atomic.Pointer.
type Ring struct {
	ppw     int
	nodes   []member    // sorted by ID
	place   []placement // place[i] describes nodes[i], compactly for Owners
	live    int         // live members
	domains int         // distinct failure domains among live members

	// The virtual nodes, sorted by (hash, node index). hashes and owner
	// are shared between rings with the same points (see SetState).
	hashes []uint64
	owner  []int32 // owner[i] is the node index of point i
	// index[s] is the first point whose top indexBits bits are >= s, for
	// s in [0, 2^indexBits]; it narrows the search for a hash to a few
	// points.
	index     []int32
	indexBits uint
	// liveAt[i] is the first point at or after i, wrapping, whose node is
	// live; nil when no node is live.
	liveAt []int32
}

// member is a node plus its failure domain index.
type member struct {
	Node
	domain int32
}

// placement is what the Owners walk needs to know about a node.
type placement struct {
	domain int32
	live   bool
}

// New builds a ring of the given nodes. The order of nodes does not matter:
// the same membership always gives the same placement. It fails with
// ErrEmptyNodeID, ErrDuplicateNode, ErrInvalidWeight, ErrInvalidState,
// ErrInvalidOptions or ErrTooManyPoints. A ring with no nodes is valid; it
// places nothing.
func New(opts Options, nodes ...Node) (*Ring, error) {
	ppw := opts.PointsPerWeight
	if ppw == 0 {
		ppw = DefaultPointsPerWeight
	}
	if ppw < 1 || ppw > MaxPointsPerWeight {
		return nil, fmt.Errorf("%w: points per weight %d not in [1, %d]", ErrInvalidOptions, opts.PointsPerWeight, MaxPointsPerWeight)
	}
	sorted := slices.Clone(nodes)
	if err := validate(sorted); err != nil {
		return nil, err
	}
	slices.SortFunc(sorted, func(a, b Node) int { return strings.Compare(string(a.ID), string(b.ID)) })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].ID == sorted[i-1].ID {
			return nil, fmt.Errorf("%w: %q", ErrDuplicateNode, sorted[i].ID)
		}
	}
	return build(ppw, sorted)
}

// validate checks each node on its own.
func validate(nodes []Node) error {
	for _, n := range nodes {
		if n.ID == "" {
			return ErrEmptyNodeID
		}
		if n.Weight < 1 || n.Weight > MaxWeight {
			return fmt.Errorf("%w: node %q has weight %d", ErrInvalidWeight, n.ID, n.Weight)
		}
		if n.State != Live && n.State != Down {
			return fmt.Errorf("%w: node %q has state %d", ErrInvalidState, n.ID, n.State)
		}
	}
	return nil
}

// build makes a ring of nodes already validated and sorted by ID.
func build(ppw int, nodes []Node) (*Ring, error) {
	return derive(ppw, nil, nodes)
}

// derive makes a ring of nodes, already validated and sorted by ID, reusing
// the points of prev (which may be nil) for the nodes it shares with prev
// at the same weight, so a membership change hashes only the nodes it adds
// or reweights. The result is the same as a build from scratch.
func derive(ppw int, prev *Ring, nodes []Node) (*Ring, error) {
	total := 0
	for _, n := range nodes {
		total += n.Weight * ppw
		if total > MaxPoints {
			return nil, fmt.Errorf("%w: more than %d", ErrTooManyPoints, MaxPoints)
		}
	}
	// remap[i] is the new index of prev's node i, or -1 if its points
	// cannot be reused. fresh lists the nodes to hash.
	var remap []int32
	var fresh []int32
	if prev != nil && prev.ppw == ppw {
		remap = make([]int32, len(prev.nodes))
		i := 0
		for j, n := range nodes {
			for i < len(prev.nodes) && prev.nodes[i].ID < n.ID {
				remap[i] = -1
				i++
			}
			if i < len(prev.nodes) && prev.nodes[i].ID == n.ID && prev.nodes[i].Weight == n.Weight {
				remap[i] = int32(j)
				i++
				continue
			}
			fresh = append(fresh, int32(j))
		}
		for ; i < len(prev.nodes); i++ {
			remap[i] = -1
		}
	} else {
		fresh = make([]int32, len(nodes))
		for j := range fresh {
			fresh[j] = int32(j)
		}
	}

	// Hash the fresh nodes. They are made in node order, so a stable sort
	// by hash leaves equal hashes in node order.
	freshTotal := 0
	for _, j := range fresh {
		freshTotal += nodes[j].Weight * ppw
	}
	points := make([]point, 0, freshTotal)
	var buf [128]byte
	for _, j := range fresh {
		for i := range nodes[j].Weight * ppw {
			points = append(points, point{pointHash(buf[:0], nodes[j].ID, i), j})
		}
	}
	sortPoints(points)

	// Merge them with the reused points, which stay sorted by (hash, node)
	// because remap keeps the order of the nodes it keeps.
	r := &Ring{
		ppw:    ppw,
		hashes: make([]uint64, 0, total),
		owner:  make([]int32, 0, total),
	}
	k := 0
	if remap != nil {
		for i, h := range prev.hashes {
			j := remap[prev.owner[i]]
			if j < 0 {
				continue
			}
			for k < len(points) && (points[k].hash < h || (points[k].hash == h && points[k].node < j)) {
				r.hashes = append(r.hashes, points[k].hash)
				r.owner = append(r.owner, points[k].node)
				k++
			}
			r.hashes = append(r.hashes, h)
			r.owner = append(r.owner, j)
		}
	}
	for ; k < len(points); k++ {
		r.hashes = append(r.hashes, points[k].hash)
		r.owner = append(r.owner, points[k].node)
	}
	r.buildIndex()
	r.setMembers(nodes)
	return r, nil
}

// setMembers installs nodes (sorted by ID, matching r.owner) and derives the
// failure domains, live counts and the live successor table.
func (r *Ring) setMembers(nodes []Node) {
	r.nodes = make([]member, len(nodes))
	named := make(map[string]int32)
	next := int32(0)
	for i, n := range nodes {
		d, ok := named[n.Domain]
		if !ok {
			d = next
			next++
			if n.Domain != "" {
				named[n.Domain] = d
			}
		}
		r.nodes[i] = member{Node: n, domain: d}
	}
	r.place = make([]placement, len(nodes))
	for i, m := range r.nodes {
		r.place[i] = placement{domain: m.domain, live: m.State == Live}
	}
	seen := make([]bool, next)
	r.live, r.domains = 0, 0
	for _, m := range r.nodes {
		if m.State != Live {
			continue
		}
		r.live++
		if !seen[m.domain] {
			seen[m.domain] = true
			r.domains++
		}
	}
	r.liveAt = nil
	if r.live == 0 {
		return
	}
	r.liveAt = make([]int32, len(r.hashes))
	// Walk backwards twice so points near the end see the live points at
	// the start of the ring.
	last := int32(-1)
	for pass := 0; pass < 2; pass++ {
		for i := len(r.hashes) - 1; i >= 0; i-- {
			if r.place[r.owner[i]].live {
				last = int32(i)
			}
			r.liveAt[i] = last
		}
	}
}

// buildIndex fills r.index with about one slot per four points, between
// 2^4 and 2^16 slots.
func (r *Ring) buildIndex() {
	r.indexBits = uint(min(max(bits.Len(uint(len(r.hashes)+3)/4), 4), 16))
	slots := 1 << r.indexBits
	r.index = make([]int32, slots+1)
	i := 0
	for s := range slots + 1 {
		for i < len(r.hashes) && r.hashes[i]>>(64-r.indexBits) < uint64(s) {
			i++
		}
		r.index[s] = int32(i)
	}
}

// Options returns the options the ring was built with, with defaults
// filled in.
func (r *Ring) Options() Options {
	return Options{PointsPerWeight: r.ppw}
}

// Len returns the number of members, live or down.
func (r *Ring) Len() int { return len(r.nodes) }

// LiveCount returns the number of live members.
func (r *Ring) LiveCount() int { return r.live }

// FailureDomainCount returns the number of distinct failure domains among
// the live members. Nodes sharing a Domain count once; each node with an
// empty Domain counts as a domain of its own.
func (r *Ring) FailureDomainCount() int { return r.domains }

// PointCount returns the number of virtual nodes on the ring, including
// those of down members.
func (r *Ring) PointCount() int { return len(r.hashes) }

// Nodes returns a copy of the members, sorted by ID.
func (r *Ring) Nodes() []Node {
	out := make([]Node, len(r.nodes))
	for i, m := range r.nodes {
		out[i] = m.Node
	}
	return out
}

// Node returns the member with the given ID.
func (r *Ring) Node(id NodeID) (Node, bool) {
	i, ok := r.find(id)
	if !ok {
		return Node{}, false
	}
	return r.nodes[i].Node, true
}

// find returns the position of id in r.nodes.
func (r *Ring) find(id NodeID) (int, bool) {
	return slices.BinarySearchFunc(r.nodes, id, func(m member, id NodeID) int {
		return strings.Compare(string(m.ID), string(id))
	})
}

// Add returns a new ring with the given nodes added. Either all nodes are
// added or, on error, none: it fails with ErrDuplicateNode if a node is
// already a member or appears twice, and otherwise as New does.
func (r *Ring) Add(nodes ...Node) (*Ring, error) {
	if err := validate(nodes); err != nil {
		return nil, err
	}
	merged := make([]Node, 0, len(r.nodes)+len(nodes))
	for _, m := range r.nodes {
		merged = append(merged, m.Node)
	}
	merged = append(merged, nodes...)
	slices.SortStableFunc(merged, func(a, b Node) int { return strings.Compare(string(a.ID), string(b.ID)) })
	for i := 1; i < len(merged); i++ {
		if merged[i].ID == merged[i-1].ID {
			return nil, fmt.Errorf("%w: %q", ErrDuplicateNode, merged[i].ID)
		}
	}
	return derive(r.ppw, r, merged)
}

// Remove returns a new ring without the given nodes. It fails with
// ErrUnknownNode if any of them is not a member, and then removes none.
func (r *Ring) Remove(ids ...NodeID) (*Ring, error) {
	drop := make(map[NodeID]bool, len(ids))
	for _, id := range ids {
		if _, ok := r.find(id); !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownNode, id)
		}
		drop[id] = true
	}
	kept := make([]Node, 0, len(r.nodes))
	for _, m := range r.nodes {
		if !drop[m.ID] {
			kept = append(kept, m.Node)
		}
	}
	return derive(r.ppw, r, kept)
}

// SetState returns a new ring in which node id has state s. The node keeps
// its points, so this is cheaper than Remove and Add: it does not rehash
// the ring. It fails with ErrUnknownNode or ErrInvalidState.
func (r *Ring) SetState(id NodeID, s State) (*Ring, error) {
	i, ok := r.find(id)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownNode, id)
	}
	if s != Live && s != Down {
		return nil, fmt.Errorf("%w: %d", ErrInvalidState, s)
	}
	nodes := r.Nodes()
	nodes[i].State = s
	// The points are unchanged: share them with the receiver.
	nr := &Ring{ppw: r.ppw, hashes: r.hashes, owner: r.owner, index: r.index, indexBits: r.indexBits}
	nr.setMembers(nodes)
	return nr, nil
}

// SetWeight returns a new ring in which node id has the given weight. It
// fails with ErrUnknownNode or ErrInvalidWeight.
func (r *Ring) SetWeight(id NodeID, weight int) (*Ring, error) {
	i, ok := r.find(id)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownNode, id)
	}
	nodes := r.Nodes()
	nodes[i].Weight = weight
	if err := validate(nodes[i : i+1]); err != nil {
		return nil, err
	}
	return derive(r.ppw, r, nodes)
}

// point is a virtual node while a ring is built.
type point struct {
	hash uint64
	node int32
}

// sortPoints sorts points by hash, stably: a least-significant-digit radix
// sort, one byte per pass, for large rings.
func sortPoints(points []point) {
	if len(points) < 256 {
		slices.SortStableFunc(points, func(a, b point) int { return cmp.Compare(a.hash, b.hash) })
		return
	}
	src, dst := points, make([]point, len(points))
	for shift := 0; shift < 64; shift += 8 {
		var count [257]int
		for _, p := range src {
			count[int(byte(p.hash>>shift))+1]++
		}
		if count[int(byte(src[0].hash>>shift))+1] == len(src) {
			continue // every point has the same byte here
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for _, p := range src {
			d := byte(p.hash >> shift)
			dst[count[d]] = p
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &points[0] {
		copy(points, src)
	}
}
