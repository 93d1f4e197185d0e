package topology

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		nodes []Node
		want  error
	}{
		{"empty ID", Options{}, []Node{{ID: "", Weight: 1}}, ErrEmptyNodeID},
		{"duplicate", Options{}, []Node{{ID: "a", Weight: 1}, {ID: "b", Weight: 1}, {ID: "a", Weight: 2}}, ErrDuplicateNode},
		{"weight 0", Options{}, []Node{{ID: "a", Weight: 0}}, ErrInvalidWeight},
		{"negative weight", Options{}, []Node{{ID: "a", Weight: -3}}, ErrInvalidWeight},
		{"weight above max", Options{}, []Node{{ID: "a", Weight: MaxWeight + 1}}, ErrInvalidWeight},
		{"bad state", Options{}, []Node{{ID: "a", Weight: 1, State: 7}}, ErrInvalidState},
		{"negative points", Options{PointsPerWeight: -1}, nil, ErrInvalidOptions},
		{"too many points per weight", Options{PointsPerWeight: MaxPointsPerWeight + 1}, nil, ErrInvalidOptions},
		{"too many points", Options{PointsPerWeight: MaxPointsPerWeight}, []Node{{ID: "a", Weight: 40}, {ID: "b", Weight: 40}}, ErrTooManyPoints},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(tt.opts, tt.nodes...)
			require.ErrorIs(t, err, tt.want)
			require.Nil(t, r)
		})
	}
}

func TestMembershipChangesReject(t *testing.T) {
	r := mustNew(t, uniform(3, 0)...)
	tests := []struct {
		name string
		fn   func() (*Ring, error)
		want error
	}{
		{"add existing", func() (*Ring, error) { return r.Add(Node{ID: "node-01", Weight: 1}) }, ErrDuplicateNode},
		{"add twice in one call", func() (*Ring, error) { return r.Add(Node{ID: "x", Weight: 1}, Node{ID: "x", Weight: 1}) }, ErrDuplicateNode},
		{"add empty ID", func() (*Ring, error) { return r.Add(Node{Weight: 1}) }, ErrEmptyNodeID},
		{"add weight 0", func() (*Ring, error) { return r.Add(Node{ID: "x"}) }, ErrInvalidWeight},
		{"remove unknown", func() (*Ring, error) { return r.Remove("node-00", "nope") }, ErrUnknownNode},
		{"state of unknown", func() (*Ring, error) { return r.SetState("nope", Down) }, ErrUnknownNode},
		{"bad state", func() (*Ring, error) { return r.SetState("node-00", 9) }, ErrInvalidState},
		{"weight of unknown", func() (*Ring, error) { return r.SetWeight("nope", 2) }, ErrUnknownNode},
		{"negative weight", func() (*Ring, error) { return r.SetWeight("node-00", -1) }, ErrInvalidWeight},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn()
			require.ErrorIs(t, err, tt.want)
			require.Nil(t, got)
			// Nothing changed: all or nothing.
			require.Equal(t, uniform(3, 0), r.Nodes())
		})
	}
}

func TestMembershipChangesAreCopyOnWrite(t *testing.T) {
	r := mustNew(t, uniform(4, 2)...)
	before, err := r.MarshalBinary()
	require.NoError(t, err)
	owners := make(map[uint64]NodeID)
	hashes := randomHashes(1000)
	for _, h := range hashes {
		owners[h], _ = r.OwnerOfHash(h)
	}

	added, err := r.Add(Node{ID: "new", Weight: 3, Domain: "zone-9"})
	require.NoError(t, err)
	removed, err := r.Remove("node-00")
	require.NoError(t, err)
	down, err := r.SetState("node-01", Down)
	require.NoError(t, err)
	heavier, err := r.SetWeight("node-02", 5)
	require.NoError(t, err)

	require.Equal(t, 5, added.Len())
	require.Equal(t, 3, removed.Len())
	require.Equal(t, 3, down.LiveCount())
	n, ok := heavier.Node("node-02")
	require.True(t, ok)
	require.Equal(t, 5, n.Weight)

	// r, the ring every change above started from, is untouched.
	after, err := r.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, before, after)
	for _, h := range hashes {
		got, _ := r.OwnerOfHash(h)
		require.Equal(t, owners[h], got)
	}
}

func TestPlacementIgnoresJoinOrder(t *testing.T) {
	nodes := []Node{
		{ID: "c", Weight: 1, Domain: "z1"},
		{ID: "a", Weight: 2, Domain: "z2"},
		{ID: "e", Weight: 1},
		{ID: "b", Weight: 1, Domain: "z1", State: Down},
		{ID: "d", Weight: 3, Domain: "z3"},
	}
	want := mustNew(t, nodes...)
	wantBytes, err := want.MarshalBinary()
	require.NoError(t, err)

	reversed := slices.Clone(nodes)
	slices.Reverse(reversed)
	// One at a time, in another order.
	incremental := mustNew(t)
	for _, n := range reversed {
		incremental, err = incremental.Add(n)
		require.NoError(t, err)
	}
	for _, r := range []*Ring{mustNew(t, reversed...), incremental} {
		got, err := r.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, wantBytes, got)
		for _, h := range randomHashes(2000) {
			a, err := want.AppendOwnersOfHash(nil, h, 3)
			require.NoError(t, err)
			b, err := r.AppendOwnersOfHash(nil, h, 3)
			require.NoError(t, err)
			require.Equal(t, a, b)
		}
	}
}

func TestCounts(t *testing.T) {
	tests := []struct {
		name                         string
		nodes                        []Node
		members, live, domains, pnts int
	}{
		{"empty", nil, 0, 0, 0, 0},
		{"unzoned nodes are their own domain", []Node{{ID: "a", Weight: 1}, {ID: "b", Weight: 2}}, 2, 2, 2, 480},
		{"shared zone is one domain", []Node{{ID: "a", Weight: 1, Domain: "r1"}, {ID: "b", Weight: 1, Domain: "r1"}, {ID: "c", Weight: 1, Domain: "r2"}}, 3, 3, 2, 480},
		{"down nodes count as members only", []Node{{ID: "a", Weight: 1, Domain: "r1"}, {ID: "b", Weight: 1, Domain: "r2", State: Down}, {ID: "c", Weight: 1, State: Down}}, 3, 1, 1, 480},
		{"mixed", []Node{{ID: "a", Weight: 1, Domain: "r1"}, {ID: "b", Weight: 1}, {ID: "c", Weight: 1, Domain: "r1"}, {ID: "d", Weight: 1}}, 4, 4, 3, 640},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustNew(t, tt.nodes...)
			require.Equal(t, tt.members, r.Len())
			require.Equal(t, tt.live, r.LiveCount())
			require.Equal(t, tt.domains, r.FailureDomainCount())
			require.Equal(t, tt.pnts, r.PointCount())
		})
	}
}

func TestPointsPerWeight(t *testing.T) {
	r, err := New(Options{PointsPerWeight: 7}, Node{ID: "a", Weight: 3}, Node{ID: "b", Weight: 1})
	require.NoError(t, err)
	require.Equal(t, 28, r.PointCount())
	require.Equal(t, Options{PointsPerWeight: 7}, r.Options())
	// Changes keep the setting.
	r, err = r.Add(Node{ID: "c", Weight: 1})
	require.NoError(t, err)
	require.Equal(t, 35, r.PointCount())
	require.Equal(t, Options{PointsPerWeight: DefaultPointsPerWeight}, mustNew(t).Options())
}

func TestWeightSetsShare(t *testing.T) {
	r := mustNew(t,
		Node{ID: "a", Weight: 1},
		Node{ID: "b", Weight: 2},
		Node{ID: "c", Weight: 4},
		Node{ID: "d", Weight: 1},
	)
	hashes := randomHashes(100_000)
	count := make(map[NodeID]int)
	for _, h := range hashes {
		o, err := r.OwnerOfHash(h)
		require.NoError(t, err)
		count[o]++
	}
	for _, n := range r.Nodes() {
		want := float64(n.Weight) / 8
		got := float64(count[n.ID]) / float64(len(hashes))
		t.Logf("%s weight %d: %.4f of keys (ideal %.4f)", n.ID, n.Weight, got, want)
		require.InDelta(t, want, got, want*0.2, "node %s", n.ID)
	}
}

func TestNodeLookup(t *testing.T) {
	r := mustNew(t, Node{ID: "a", Weight: 2, Domain: "r1", State: Down}, Node{ID: "b", Weight: 1})
	n, ok := r.Node("a")
	require.True(t, ok)
	require.Equal(t, Node{ID: "a", Weight: 2, Domain: "r1", State: Down}, n)
	_, ok = r.Node("zz")
	require.False(t, ok)

	// Nodes returns a copy.
	nodes := r.Nodes()
	nodes[0].Weight = 99
	n, _ = r.Node("a")
	require.Equal(t, 2, n.Weight)
}

func TestStateString(t *testing.T) {
	require.Equal(t, "live", Live.String())
	require.Equal(t, "down", Down.String())
	require.Equal(t, "State(5)", State(5).String())
}

// Membership changes reuse the points of unchanged nodes; the result must
// be exactly the ring a build from scratch gives.
func TestChangesMatchFreshBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	r, err := New(Options{PointsPerWeight: 8}, uniform(6, 3)...)
	require.NoError(t, err)
	for step := range 300 {
		nodes := r.Nodes()
		var next *Ring
		switch op := rng.IntN(4); {
		case op == 0 || len(nodes) < 2:
			batch := []Node{{ID: NodeID(fmt.Sprintf("n%03d", step)), Weight: 1 + rng.IntN(3), Domain: fmt.Sprint(rng.IntN(4))}}
			if rng.IntN(2) == 0 {
				batch = append(batch, Node{ID: NodeID(fmt.Sprintf("m%03d", step)), Weight: 1})
			}
			next, err = r.Add(batch...)
		case op == 1:
			next, err = r.Remove(nodes[rng.IntN(len(nodes))].ID)
		case op == 2:
			next, err = r.SetWeight(nodes[rng.IntN(len(nodes))].ID, 1+rng.IntN(4))
		default:
			next, err = r.SetState(nodes[rng.IntN(len(nodes))].ID, State(rng.IntN(2)))
		}
		require.NoError(t, err)
		fresh, err := New(next.Options(), next.Nodes()...)
		require.NoError(t, err)
		require.Equal(t, fresh.hashes, next.hashes, "step %d", step)
		require.Equal(t, fresh.owner, next.owner, "step %d", step)
		require.Equal(t, fresh.liveAt, next.liveAt, "step %d", step)
		require.Equal(t, fresh.index, next.index, "step %d", step)
		require.Equal(t, fresh.nodes, next.nodes, "step %d", step)
		r = next
	}
}
