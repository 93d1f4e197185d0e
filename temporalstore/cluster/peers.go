package cluster

import (
	"strings"
	"sync"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

// A member's addresses travel in raft as one string, its raft address
// first: raft-addr|resp-addr|http-addr|zone. Membership changes carry it, so
// every member learns a new one's RESP and HTTP addresses with the change
// that adds it. A bare raft address (no '|') is read too.
func joinAddr(p Peer) string {
	return p.RaftAddr + "|" + p.RESPAddr + "|" + p.HTTPAddr + "|" + p.Zone
}

func splitAddr(id uint64, s string) Peer {
	parts := strings.SplitN(s, "|", 4)
	p := Peer{ID: id, RaftAddr: parts[0]}
	if len(parts) >= 3 {
		p.RESPAddr, p.HTTPAddr = parts[1], parts[2]
	}
	if len(parts) == 4 {
		p.Zone = parts[3]
	}
	return p
}

// addressBook is the members' addresses as this member knows them.
type addressBook struct {
	mu    sync.RWMutex
	peers map[uint64]Peer
}

func (b *addressBook) get(id uint64) Peer {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.peers[id]
}

// learn records what p says of a member, keeping what it leaves out.
func (b *addressBook) learn(p Peer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := b.peers[p.ID]
	if p.RESPAddr == "" {
		p.RESPAddr, p.HTTPAddr, p.Zone = old.RESPAddr, old.HTTPAddr, old.Zone
	}
	b.peers[p.ID] = p
}

// peerTransport is a group's transport that reads the members' joined
// addresses: the raft address goes to the transport, the others to the
// address book.
type peerTransport struct {
	matrixraft.Transport
	book *addressBook
}

func (t peerTransport) AddPeer(id uint64, addr string) {
	p := splitAddr(id, addr)
	t.book.learn(p)
	t.Transport.AddPeer(id, p.RaftAddr)
}
