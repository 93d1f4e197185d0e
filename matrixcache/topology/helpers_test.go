package topology

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// mustNew builds a ring or fails the test.
func mustNew(t testing.TB, nodes ...Node) *Ring {
	t.Helper()
	r, err := New(Options{}, nodes...)
	require.NoError(t, err)
	return r
}

// uniform returns n live nodes "node-00", "node-01", ... of weight 1, in
// domains "zone-0" .. "zone-<domains-1>" round robin (no domain if
// domains is 0).
func uniform(n, domains int) []Node {
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{ID: NodeID(fmt.Sprintf("node-%02d", i)), Weight: 1}
		if domains > 0 {
			nodes[i].Domain = fmt.Sprintf("zone-%d", i%domains)
		}
	}
	return nodes
}

// randomHashes returns the hashes of n random 16-byte keys, the same on
// every run.
func randomHashes(n int) []uint64 {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]uint64, n)
	var key [16]byte
	for i := range out {
		for j := range key {
			key[j] = byte(rng.Uint32())
		}
		out[i] = Hash(key[:])
	}
	return out
}
