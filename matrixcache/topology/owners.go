package topology

import "slices"

// search returns the index of the first point whose hash is strictly
// greater than h, wrapping to 0 past the last point. The ring must have
// points. Point i therefore owns the hashes in [hashes[i-1], hashes[i]).
func (r *Ring) search(h uint64) int {
	slot := h >> (64 - r.indexBits)
	lo, hi := int(r.index[slot]), int(r.index[slot+1])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.hashes[m] <= h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(r.hashes) {
		return 0
	}
	return lo
}

// ownerIndex returns the node index owning hash h; the ring must have a
// live node.
func (r *Ring) ownerIndex(h uint64) int32 {
	return r.owner[r.liveAt[r.search(h)]]
}

// Owner returns the node that owns key: the node of the first live point
// clockwise from Hash(key). It fails with ErrNoLiveNodes.
func (r *Ring) Owner(key []byte) (NodeID, error) {
	return r.OwnerOfHash(Hash(key))
}

// OwnerOfHash is Owner for a key already hashed with Hash or HashString.
func (r *Ring) OwnerOfHash(h uint64) (NodeID, error) {
	if r.live == 0 {
		return "", ErrNoLiveNodes
	}
	return r.nodes[r.ownerIndex(h)].ID, nil
}

// Owners returns up to n distinct live nodes to hold copies of key, primary
// owner first. See AppendOwners.
func (r *Ring) Owners(key []byte, n int) ([]NodeID, error) {
	if n < 1 {
		return nil, ErrInvalidCount
	}
	if r.live == 0 {
		return nil, ErrNoLiveNodes
	}
	return r.AppendOwners(make([]NodeID, 0, min(n, r.live)), key, n)
}

// AppendOwners appends to dst up to n distinct live nodes to hold copies of
// key and returns the extended slice. With enough capacity in dst it does
// not allocate.
//
// List the live nodes in the order a clockwise walk from Hash(key) first
// meets them. The owners are the first node met in each failure domain, in
// walk order, followed by the other nodes, in walk order, cut to n. So the
// first owner is the primary owner (Owner), the copies span
// min(n, FailureDomainCount()) domains, a domain holds a second copy only
// when every domain holds one, and the owners for fewer copies are a prefix
// of the owners for more. If n exceeds LiveCount, every live node is
// returned.
//
// It fails with ErrInvalidCount if n < 1 and ErrNoLiveNodes if no node is
// live, returning dst unchanged.
func (r *Ring) AppendOwners(dst []NodeID, key []byte, n int) ([]NodeID, error) {
	return r.AppendOwnersOfHash(dst, Hash(key), n)
}

// AppendOwnersOfHash is AppendOwners for a key already hashed with Hash or
// HashString.
func (r *Ring) AppendOwnersOfHash(dst []NodeID, h uint64, n int) ([]NodeID, error) {
	if n < 1 {
		return dst, ErrInvalidCount
	}
	if r.live == 0 {
		return dst, ErrNoLiveNodes
	}
	n = min(n, r.live)
	start := int(r.liveAt[r.search(h)])
	if n == 1 {
		return append(dst, r.nodes[r.owner[start]].ID), nil
	}
	var takenBuf, passedBuf [8]int32
	taken, passed := takenBuf[:0], passedBuf[:0]
	domains := 0 // failure domains holding a copy
	for k, j := 0, start; k < len(r.hashes) && len(taken) < n; k, j = k+1, j+1 {
		if j == len(r.hashes) {
			j = 0
		}
		ni := r.owner[j]
		p := r.place[ni]
		if !p.live || slices.Contains(taken, ni) || slices.Contains(passed, ni) {
			continue
		}
		if domains == r.domains {
			taken = append(taken, ni)
			continue
		}
		if r.domainTaken(taken, p.domain) {
			passed = append(passed, ni)
			continue
		}
		taken = append(taken, ni)
		domains++
		if domains == r.domains {
			// Every domain holds a copy: the nodes passed over come next.
			for _, p := range passed {
				if len(taken) == n {
					break
				}
				taken = append(taken, p)
			}
			passed = passed[:0]
		}
	}
	for _, ni := range taken {
		dst = append(dst, r.nodes[ni].ID)
	}
	return dst, nil
}

// domainTaken reports whether one of the nodes in taken is in domain d.
func (r *Ring) domainTaken(taken []int32, d int32) bool {
	for _, ni := range taken {
		if r.place[ni].domain == d {
			return true
		}
	}
	return false
}
