package raftbench

import (
	"context"

	"github.com/temporalstore/temporalstore-go/matrixraft"
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

// transportSet gives each node of one cluster its transport.
type transportSet interface {
	Transport(id uint64) matrixraft.Transport
	Close()
}

// transports are the ways our nodes can talk, by Config.Transport. A
// loopback TCP transport is added here.
var transports = map[string]func() (transportSet, error){
	"mem": func() (transportSet, error) { return memTransports{matrixraft.NewMemNetwork(1)}, nil },
}

// memTransports is matrixraft.MemNetwork: messages copied in memory.
type memTransports struct{ nw *matrixraft.MemNetwork }

func (m memTransports) Transport(id uint64) matrixraft.Transport { return m.nw.Transport(id) }
func (m memTransports) Close()                                   {}
