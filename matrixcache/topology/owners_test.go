package topology

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// pinnedRing is the membership of TestOwnersArePinned.
func pinnedRing(t testing.TB) *Ring {
	return mustNew(t,
		Node{ID: "a", Weight: 1, Domain: "z1"},
		Node{ID: "b", Weight: 2, Domain: "z2"},
		Node{ID: "c", Weight: 1, Domain: "z3"},
		Node{ID: "d", Weight: 1, Domain: "z1"},
	)
}

// Placement must not change between builds: these are literal owners.
func TestOwnersArePinned(t *testing.T) {
	r := pinnedRing(t)
	tests := []struct {
		key  string
		want []NodeID
	}{
		{"", []NodeID{"b", "d", "c"}},
		{"abc", []NodeID{"a", "b", "c"}},
		{"user:42", []NodeID{"b", "c", "a"}},
		{"block/7/0001", []NodeID{"b", "d", "c"}},
		{"k3", []NodeID{"b", "a", "c"}},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.key), func(t *testing.T) {
			got, err := r.Owners([]byte(tt.key), 3)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			owner, err := r.Owner([]byte(tt.key))
			require.NoError(t, err)
			require.Equal(t, tt.want[0], owner)
		})
	}
}

func TestOwnersInvariants(t *testing.T) {
	tests := []struct {
		name  string
		nodes []Node
	}{
		{"one node", uniform(1, 0)},
		{"unzoned", uniform(7, 0)},
		{"three zones", uniform(9, 3)},
		{"two zones", uniform(6, 2)},
		{"uneven zones", []Node{
			{ID: "a", Weight: 1, Domain: "big"}, {ID: "b", Weight: 3, Domain: "big"}, {ID: "c", Weight: 2, Domain: "big"},
			{ID: "d", Weight: 1, Domain: "small"}, {ID: "e", Weight: 1},
		}},
		{"with down nodes", []Node{
			{ID: "a", Weight: 1, Domain: "r1"}, {ID: "b", Weight: 1, Domain: "r1", State: Down},
			{ID: "c", Weight: 2, Domain: "r2", State: Down}, {ID: "d", Weight: 1, Domain: "r3"},
			{ID: "e", Weight: 1, Domain: "r2"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustNew(t, tt.nodes...)
			domainOf := make(map[NodeID]string)
			for _, n := range r.Nodes() {
				domainOf[n.ID] = n.Domain
				if n.Domain == "" {
					domainOf[n.ID] = "own:" + string(n.ID)
				}
			}
			for _, h := range randomHashes(500) {
				primary, err := r.OwnerOfHash(h)
				require.NoError(t, err)
				for n := 1; n <= r.LiveCount()+2; n++ {
					owners, err := r.AppendOwnersOfHash(nil, h, n)
					require.NoError(t, err)
					require.Len(t, owners, min(n, r.LiveCount()))
					require.Equal(t, primary, owners[0])
					seen := make(map[NodeID]bool)
					domains := make(map[string]bool)
					for i, o := range owners {
						node, ok := r.Node(o)
						require.True(t, ok)
						require.Equal(t, Live, node.State, "down node %s placed", o)
						require.False(t, seen[o], "duplicate owner %s", o)
						seen[o] = true
						// A domain is reused only after every domain holds a copy.
						if i < r.FailureDomainCount() {
							require.False(t, domains[domainOf[o]], "domain of %s reused early in %v", o, owners)
						}
						domains[domainOf[o]] = true
					}
					require.Len(t, domains, min(n, r.FailureDomainCount()))
				}
			}
		})
	}
}

func TestOwnersAreAPrefixOfMoreOwners(t *testing.T) {
	r := mustNew(t, uniform(8, 3)...)
	for _, h := range randomHashes(2000) {
		all, err := r.AppendOwnersOfHash(nil, h, r.LiveCount())
		require.NoError(t, err)
		for n := 1; n < len(all); n++ {
			got, err := r.AppendOwnersOfHash(nil, h, n)
			require.NoError(t, err)
			require.Equal(t, all[:n], got)
		}
	}
}

func TestOwnersSpreadAcrossDomains(t *testing.T) {
	// Zone "a" has most of the weight, so a walk meets it first and often.
	r := mustNew(t,
		Node{ID: "a1", Weight: 8, Domain: "a"}, Node{ID: "a2", Weight: 8, Domain: "a"}, Node{ID: "a3", Weight: 8, Domain: "a"},
		Node{ID: "b1", Weight: 1, Domain: "b"},
		Node{ID: "c1", Weight: 1, Domain: "c"},
	)
	require.Equal(t, 3, r.FailureDomainCount())
	for _, h := range randomHashes(2000) {
		owners, err := r.AppendOwnersOfHash(nil, h, 4)
		require.NoError(t, err)
		zones := make(map[byte]bool)
		for _, o := range owners[:3] {
			zones[o[0]] = true
		}
		require.Len(t, zones, 3, "first three copies %v span every zone", owners)
		require.Equal(t, byte('a'), owners[3][0])
	}
}

func TestOwnersRejects(t *testing.T) {
	allDown := mustNew(t, Node{ID: "a", Weight: 1, State: Down}, Node{ID: "b", Weight: 1, State: Down})
	tests := []struct {
		name string
		r    *Ring
		n    int
		want error
	}{
		{"n is 0", pinnedRing(t), 0, ErrInvalidCount},
		{"n is negative", pinnedRing(t), -2, ErrInvalidCount},
		{"empty ring", mustNew(t), 1, ErrNoLiveNodes},
		{"every node down", allDown, 3, ErrNoLiveNodes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.r.Owners([]byte("k"), tt.n)
			require.ErrorIs(t, err, tt.want)
			require.Nil(t, got)
			dst := []NodeID{"keep"}
			got, err = tt.r.AppendOwners(dst, []byte("k"), tt.n)
			require.ErrorIs(t, err, tt.want)
			require.Equal(t, dst, got)
			if tt.n >= 1 {
				_, err = tt.r.Owner([]byte("k"))
				require.ErrorIs(t, err, tt.want)
			}
		})
	}
}

func TestDownNodeOwnsNothingAndComesBack(t *testing.T) {
	r := mustNew(t, uniform(5, 0)...)
	down, err := r.SetState("node-02", Down)
	require.NoError(t, err)
	require.Equal(t, r.PointCount(), down.PointCount(), "a down node keeps its points")
	require.Equal(t, 5, down.Len())
	require.Equal(t, 4, down.LiveCount())

	for _, h := range randomHashes(5000) {
		owners, err := down.AppendOwnersOfHash(nil, h, 5)
		require.NoError(t, err)
		require.NotContains(t, owners, NodeID("node-02"))
		// Keys of other nodes stay where they were.
		before, _ := r.OwnerOfHash(h)
		after, _ := down.OwnerOfHash(h)
		if before != "node-02" {
			require.Equal(t, before, after)
		}
	}

	up, err := down.SetState("node-02", Live)
	require.NoError(t, err)
	for _, h := range randomHashes(5000) {
		a, _ := r.AppendOwnersOfHash(nil, h, 3)
		b, _ := up.AppendOwnersOfHash(nil, h, 3)
		require.Equal(t, a, b)
	}
}

func TestAppendOwnersDoesNotAllocate(t *testing.T) {
	r := mustNew(t, uniform(12, 3)...)
	key := []byte("some-block-key")
	dst := make([]NodeID, 0, 3)
	allocs := testing.AllocsPerRun(1000, func() {
		var err error
		dst, err = r.AppendOwners(dst[:0], key, 3)
		if err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
	allocs = testing.AllocsPerRun(1000, func() {
		if _, err := r.Owner(key); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
}

// The slot index must not change the result of the search.
func TestSearchMatchesBinarySearch(t *testing.T) {
	for _, nodes := range []int{1, 2, 7, 100} {
		for _, ppw := range []int{1, 3, 160} {
			r, err := New(Options{PointsPerWeight: ppw}, uniform(nodes, 0)...)
			require.NoError(t, err)
			hashes := append(randomHashes(2000), 0, 1, math.MaxUint64, math.MaxUint64-1, 1<<63, 1<<63-1)
			for _, p := range r.hashes {
				hashes = append(hashes, p-1, p, p+1)
			}
			for _, h := range hashes {
				want, _ := slices.BinarySearch(r.hashes, h+1)
				if h == math.MaxUint64 || want == len(r.hashes) {
					want = 0
				}
				require.Equal(t, want, r.search(h), "nodes %d, points/weight %d, hash %#x", nodes, ppw, h)
			}
		}
	}
}

// referenceOwners is the placement rule stated plainly: list the live
// nodes in the order a clockwise walk from h first meets them; the owners
// are the first node of each failure domain, in that order, followed by the
// other nodes, in that order.
func referenceOwners(r *Ring, h uint64, n int) []NodeID {
	var walk []int32
	start := r.search(h)
	for k := range len(r.hashes) {
		ni := r.owner[(start+k)%len(r.hashes)]
		if r.nodes[ni].State == Live && !slices.Contains(walk, ni) {
			walk = append(walk, ni)
		}
	}
	var first, rest []NodeID
	domains := make(map[int32]bool)
	for _, ni := range walk {
		if d := r.nodes[ni].domain; !domains[d] {
			domains[d] = true
			first = append(first, r.nodes[ni].ID)
		} else {
			rest = append(rest, r.nodes[ni].ID)
		}
	}
	all := append(first, rest...)
	return all[:min(n, len(all))]
}

func TestOwnersMatchReference(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		nodes []Node
	}{
		{"three zones", Options{}, uniform(9, 3)},
		{"unzoned", Options{PointsPerWeight: 8}, uniform(6, 0)},
		{"skewed", Options{PointsPerWeight: 4}, []Node{
			{ID: "a1", Weight: 9, Domain: "a"}, {ID: "a2", Weight: 9, Domain: "a"}, {ID: "a3", Weight: 9, Domain: "a"},
			{ID: "a4", Weight: 9, Domain: "a"}, {ID: "b1", Weight: 1, Domain: "b"}, {ID: "c1", Weight: 1},
			{ID: "d1", Weight: 2, Domain: "d", State: Down}, {ID: "b2", Weight: 1, Domain: "b", State: Down},
		}},
		{"many small domains", Options{PointsPerWeight: 2}, uniform(24, 11)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(tt.opts, tt.nodes...)
			require.NoError(t, err)
			for _, h := range randomHashes(300) {
				for n := 1; n <= r.LiveCount(); n++ {
					got, err := r.AppendOwnersOfHash(nil, h, n)
					require.NoError(t, err)
					require.Equal(t, referenceOwners(r, h, n), got, "hash %#x, n %d", h, n)
				}
			}
		})
	}
}
