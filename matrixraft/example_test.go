package matrixraft_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

// kv is a replicated map whose commands are "key=value".
type kv struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *kv) Apply(batch []matrixraft.Command) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, len(batch))
	for i, c := range batch {
		k, v, _ := bytes.Cut(c.Data, []byte("="))
		s.m[string(k)] = string(v)
		out[i] = []byte("stored " + string(k))
	}
	return out
}

func (s *kv) Snapshot(w io.Writer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return json.NewEncoder(w).Encode(s.m)
}

func (s *kv) Restore(r io.Reader) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m = map[string]string{}
	return json.NewDecoder(r).Decode(&s.m)
}

func (s *kv) get(k string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[k]
}

// Three members of one raft group on the in-memory transport: a write
// proposed to the leader, then read linearizably on every member.
func Example() {
	ctx := context.Background()
	net := matrixraft.NewMemNetwork(1)
	peers := []matrixraft.Peer{{ID: 1, Addr: "n1"}, {ID: 2, Addr: "n2"}, {ID: 3, Addr: "n3"}}
	nodes := map[uint64]*matrixraft.Node{}
	sms := map[uint64]*kv{}
	for _, p := range peers {
		dir, err := os.MkdirTemp("", "matrixraft-example-")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		sms[p.ID] = &kv{m: map[string]string{}}
		n, err := matrixraft.StartNode(matrixraft.Options{
			ID: p.ID, Dir: dir, Peers: peers, StateMachine: sms[p.ID],
			Transport: net.Transport(p.ID), TickInterval: 5 * time.Millisecond,
		})
		if err != nil {
			panic(err)
		}
		defer n.Stop()
		nodes[p.ID] = n
	}
	var leader uint64
	for leader == 0 {
		time.Sleep(5 * time.Millisecond)
		leader = nodes[1].Leader()
	}
	res, err := nodes[leader].Propose(ctx, []byte("greeting=hello"))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res))
	for _, p := range peers {
		// A linearizable read: the member has applied everything committed
		// before it.
		if err := nodes[p.ID].Read(ctx, matrixraft.ReadLinearizable); err != nil {
			panic(err)
		}
		fmt.Printf("n%d: %s\n", p.ID, sms[p.ID].get("greeting"))
	}
	// Output:
	// stored greeting
	// n1: hello
	// n2: hello
	// n3: hello
}
