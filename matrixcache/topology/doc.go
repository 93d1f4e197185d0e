// Package topology places cache keys on the nodes of a cache cluster: a
// consistent-hash ring of weighted nodes with failure domains and states,
// replica placement across failure domains, and the handoffs a membership
// change implies.
//
//	r, err := topology.New(topology.Options{},
//		topology.Node{ID: "cache-a", Weight: 1, Domain: "rack-1"},
//		topology.Node{ID: "cache-b", Weight: 2, Domain: "rack-2"})
//	owners, err := r.Owners([]byte("key"), 2)
//
// # Ring
//
// Each [Node] has an ID, a weight, a failure domain (rack, zone) and a
// [State]. A node of weight w gets w × [Options.PointsPerWeight] (default
// 160) virtual nodes, so its share of the keys is proportional to its
// weight. A [Down] node stays a member but owns nothing: its keys go to the
// next live node clockwise, and marking it [Live] again restores exactly
// its placement. Nodes with the same Domain form one failure domain; a node
// with an empty Domain is a domain of its own. Placement depends only on
// the membership and the points per weight, never on the order nodes
// joined in.
//
// The hash is fixed, so that every node of a cluster, on every build,
// agrees on it: a key's position is XXH64 (seed 0) of its bytes ([Hash]),
// and virtual node i of node id sits at XXH64 of id + "#" + decimal(i)
// ([PointHash]). A key belongs to the first virtual node whose hash is
// strictly greater than the key's, wrapping past the last one; points with
// equal hashes are ordered by node ID. This placement is not that of the
// matrixcache of TemporalStore's Rust implementation (MurmurHash64A, seed
// 0x20170730): the two do not share a cluster.
//
// # Owners and handoffs
//
// [Ring.Owner] returns a key's primary owner, the node of the first live
// virtual node clockwise. [Ring.Owners] and [Ring.AppendOwners] return n
// distinct live nodes for n copies: walking clockwise from the key, the
// first node met in each failure domain, then the other nodes, in walk
// order. So the primary comes first, a domain gets a second copy only when
// every live domain holds one, and owners for fewer copies are a prefix of
// owners for more. AppendOwners does not allocate when dst has room.
//
// [Diff] compares the primary owners of two rings: for each (from, to)
// pair of nodes, the hash ranges that move. Every key whose owner changed
// lies in exactly one range, and unchanged keys in none. A node joining n
// equal nodes takes about 1/(n+1) of the keys, only from the others; a node
// leaving gives up only its own keys.
//
// # Concurrency and encoding
//
// A Ring is immutable: [Ring.Add], [Ring.Remove], [Ring.SetState] and
// [Ring.SetWeight] return a new ring (sharing what they can with the old
// one), so any number of goroutines may read a Ring without locking.
// [Cluster] publishes the current ring through an atomic pointer; writers
// replace it with [Cluster.Update].
//
// [Ring.MarshalBinary] encodes a ring's membership and points per weight
// canonically (equal memberships encode to equal bytes, CRC-32C checked),
// for gossip and persistence, and [Decode] rebuilds the ring. Decode
// rejects anything else with an error wrapping [ErrMalformed] and never
// panics.
package topology
