package raftbench

import (
	"context"
	"fmt"

	"github.com/temporalstore/temporalstore-go/matrixraft"
	"github.com/temporalstore/temporalstore-go/matrixraft/tcptransport"
)

// cluster is one running 3-member system under test.
type cluster interface {
	// Put durably writes value under key and returns once the system
	// acknowledged it (committed and applied on the leader). client is the
	// caller's number, for systems that spread clients over connections.
	Put(ctx context.Context, client int, key, value []byte) error
	// Fsyncs returns the fdatasyncs of the three members' logs so far.
	Fsyncs() (uint64, error)
	// Close stops the members.
	Close() error
}

// explainer is a cluster that can say where its time went.
type explainer interface {
	// Explain returns figures of the leader since the cluster started.
	Explain() map[string]float64
}

// transportSet gives each node of one cluster its transport and the
// address its peers reach it at.
type transportSet interface {
	Transport(id uint64) matrixraft.Transport
	Addr(id uint64) string
	// Close releases transports no node took over (a node closes its own
	// on Stop).
	Close()
}

// transports are the ways our nodes can talk, by Config.Transport, each
// building the transports of nodes 1..n.
var transports = map[string]func(n int) (transportSet, error){
	"mem": func(int) (transportSet, error) { return memTransports{matrixraft.NewMemNetwork(1)}, nil },
	"tcp": newTCPTransports,
}

// memTransports is matrixraft.MemNetwork: messages copied in memory.
type memTransports struct{ nw *matrixraft.MemNetwork }

func (m memTransports) Transport(id uint64) matrixraft.Transport { return m.nw.Transport(id) }
func (m memTransports) Addr(id uint64) string                    { return fmt.Sprintf("n%d", id) }
func (m memTransports) Close()                                   {}

// tcpTransports is tcptransport on loopback: each node listens on a port
// of its own and its messages are framed and written to real sockets.
type tcpTransports struct{ ts []*tcptransport.Transport }

func newTCPTransports(n int) (transportSet, error) {
	set := &tcpTransports{}
	for id := 1; id <= n; id++ {
		t, err := tcptransport.New(tcptransport.Options{ID: uint64(id), ListenAddr: "127.0.0.1:0"})
		if err != nil {
			set.Close()
			return nil, err
		}
		set.ts = append(set.ts, t)
	}
	return set, nil
}

func (s *tcpTransports) Transport(id uint64) matrixraft.Transport { return s.ts[id-1] }
func (s *tcpTransports) Addr(id uint64) string                    { return s.ts[id-1].Addr().String() }
func (s *tcpTransports) Close() {
	for _, t := range s.ts {
		t.Close()
	}
}
