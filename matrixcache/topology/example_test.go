package topology_test

import (
	"fmt"

	"github.com/temporalstore/temporalstore-go/matrixcache/topology"
)

func ExampleRing_Owners() {
	ring, err := topology.New(topology.Options{},
		topology.Node{ID: "cache-a", Weight: 1, Domain: "zone-1"},
		topology.Node{ID: "cache-b", Weight: 1, Domain: "zone-1"},
		topology.Node{ID: "cache-c", Weight: 1, Domain: "zone-2"},
		topology.Node{ID: "cache-d", Weight: 2, Domain: "zone-3"},
	)
	if err != nil {
		panic(err)
	}
	owners, err := ring.Owners([]byte("table/7/block/42"), 3)
	if err != nil {
		panic(err)
	}
	// Three copies, one in each zone.
	for _, id := range owners {
		n, _ := ring.Node(id)
		fmt.Println(id, n.Domain)
	}
	// Output:
	// cache-a zone-1
	// cache-d zone-3
	// cache-c zone-2
}

func ExampleDiff() {
	before, err := topology.New(topology.Options{},
		topology.Node{ID: "cache-a", Weight: 1},
		topology.Node{ID: "cache-b", Weight: 1},
		topology.Node{ID: "cache-c", Weight: 1},
	)
	if err != nil {
		panic(err)
	}
	after, err := before.Add(topology.Node{ID: "cache-d", Weight: 1})
	if err != nil {
		panic(err)
	}
	// Only the new node gains keys, about a quarter of them.
	for _, ho := range topology.Diff(before, after) {
		fmt.Printf("%s -> %s: %d ranges, %.3f of the keys\n", ho.From, ho.To, len(ho.Ranges), ho.Fraction())
	}
	fmt.Printf("moved %.2f\n", topology.MovedFraction(topology.Diff(before, after)))
	// Output:
	// cache-a -> cache-d: 37 ranges, 0.071 of the keys
	// cache-b -> cache-d: 39 ranges, 0.085 of the keys
	// cache-c -> cache-d: 44 ranges, 0.076 of the keys
	// moved 0.23
}

func ExampleCluster() {
	var cluster topology.Cluster
	// A writer changes the membership...
	before, after, err := cluster.Update(func(r *topology.Ring) (*topology.Ring, error) {
		return r.Add(topology.Node{ID: "cache-a", Weight: 1}, topology.Node{ID: "cache-b", Weight: 1})
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(before.Len(), "->", after.Len(), "nodes")
	// ...while readers use whichever ring is current, without locking.
	owner, err := cluster.Ring().Owner([]byte("some key"))
	if err != nil {
		panic(err)
	}
	fmt.Println(owner != "")
	// Output:
	// 0 -> 2 nodes
	// true
}
