package matrixraft

import (
	"context"
	"math/rand/v2"
	"sync"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// MemNetwork is an in-process network of MemTransports with fault hooks:
// drop, delay, partition and pause. Its randomness is seeded, and delays
// are counted in network ticks (Tick), not wall time, so a test drives it.
// It is safe for concurrent use.
type MemNetwork struct {
	mu      sync.Mutex
	rng     *rand.Rand
	eps     map[uint64]*MemTransport
	cut     map[[2]uint64]bool
	drop    map[[2]uint64]float64
	delay   map[[2]uint64]int
	paused  map[uint64]bool
	held    []heldMsg
	now     int
	dropped uint64
}

type heldMsg struct {
	from uint64
	m    *pb.Message
	at   int
}

// NewMemNetwork returns a network whose random choices follow seed.
func NewMemNetwork(seed uint64) *MemNetwork {
	return &MemNetwork{
		rng:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		eps:    map[uint64]*MemTransport{},
		cut:    map[[2]uint64]bool{},
		drop:   map[[2]uint64]float64{},
		delay:  map[[2]uint64]int{},
		paused: map[uint64]bool{},
	}
}

// Transport returns a new endpoint for id, replacing any earlier one (as a
// restarted process would).
func (nw *MemNetwork) Transport(id uint64) *MemTransport {
	t := &MemTransport{nw: nw, id: id, inbox: make(chan *pb.Message, 4096), stopc: make(chan struct{}), donec: make(chan struct{})}
	nw.mu.Lock()
	nw.eps[id] = t
	nw.mu.Unlock()
	return t
}

// Partition splits the nodes into groups that cannot reach each other.
// Nodes not listed keep their links.
func (nw *MemNetwork) Partition(groups ...[]uint64) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	for i, a := range groups {
		for j, b := range groups {
			if i == j {
				continue
			}
			for _, x := range a {
				for _, y := range b {
					nw.cut[[2]uint64{x, y}] = true
				}
			}
		}
	}
}

// Isolate cuts id off from every other node.
func (nw *MemNetwork) Isolate(id uint64) {
	nw.mu.Lock()
	var others []uint64
	for o := range nw.eps {
		if o != id {
			others = append(others, o)
		}
	}
	nw.mu.Unlock()
	nw.Partition([]uint64{id}, others)
}

// Heal removes every partition, drop rate and delay, and releases held
// messages of nodes that are not paused.
func (nw *MemNetwork) Heal() {
	nw.mu.Lock()
	clear(nw.cut)
	clear(nw.drop)
	clear(nw.delay)
	nw.mu.Unlock()
	nw.Tick()
}

// Drop makes the link from → to lose messages with probability rate.
func (nw *MemNetwork) Drop(from, to uint64, rate float64) {
	nw.mu.Lock()
	nw.drop[[2]uint64{from, to}] = rate
	nw.mu.Unlock()
}

// Delay holds messages on the link from → to for ticks network ticks.
func (nw *MemNetwork) Delay(from, to uint64, ticks int) {
	nw.mu.Lock()
	nw.delay[[2]uint64{from, to}] = ticks
	nw.mu.Unlock()
}

// Pause freezes id's links: messages to and from it are held until Resume,
// as when its process is stopped.
func (nw *MemNetwork) Pause(id uint64) {
	nw.mu.Lock()
	nw.paused[id] = true
	nw.mu.Unlock()
}

// Resume releases a paused node.
func (nw *MemNetwork) Resume(id uint64) {
	nw.mu.Lock()
	delete(nw.paused, id)
	nw.mu.Unlock()
	nw.Tick()
}

// Dropped returns how many messages the network lost.
func (nw *MemNetwork) Dropped() uint64 {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	return nw.dropped
}

// Tick advances the network clock and delivers held messages that are due.
func (nw *MemNetwork) Tick() {
	nw.mu.Lock()
	nw.now++
	var due []heldMsg
	k := 0
	for _, h := range nw.held {
		if h.at <= nw.now && !nw.paused[h.from] && !nw.paused[h.m.GetTo()] {
			due = append(due, h)
			continue
		}
		nw.held[k] = h
		k++
	}
	clear(nw.held[k:])
	nw.held = nw.held[:k]
	nw.mu.Unlock()
	for _, h := range due {
		nw.route(h.from, h.m, true)
	}
}

// route delivers m, or holds or drops it according to the faults.
func (nw *MemNetwork) route(from uint64, m *pb.Message, released bool) {
	link := [2]uint64{from, m.GetTo()}
	nw.mu.Lock()
	src, dst := nw.eps[from], nw.eps[m.GetTo()]
	lost := nw.cut[link] || dst == nil || (nw.drop[link] > 0 && nw.rng.Float64() < nw.drop[link])
	if !lost && !released && (nw.paused[from] || nw.paused[m.GetTo()] || nw.delay[link] > 0) {
		nw.held = append(nw.held, heldMsg{from: from, m: m, at: nw.now + nw.delay[link]})
		nw.mu.Unlock()
		return
	}
	if lost {
		nw.dropped++
	}
	nw.mu.Unlock()
	if lost || !dst.enqueue(m) {
		if src != nil && m.GetType() == pb.MsgSnap {
			src.report(func(h Handler) { h.ReportSnapshot(m.GetTo(), raft.SnapshotFailure) })
		}
		return
	}
	if src != nil && m.GetType() == pb.MsgSnap {
		src.report(func(h Handler) { h.ReportSnapshot(m.GetTo(), raft.SnapshotFinish) })
	}
}

// MemTransport is one node's endpoint on a MemNetwork. Messages are deep
// copies, delivered in order per link through a bounded inbox (4096; a
// full inbox drops).
type MemTransport struct {
	nw    *MemNetwork
	id    uint64
	inbox chan *pb.Message
	mu    sync.Mutex
	h     Handler
	once  sync.Once
	stopc chan struct{}
	donec chan struct{}
}

// Start implements Transport.
func (t *MemTransport) Start(h Handler) error {
	t.mu.Lock()
	t.h = h
	t.mu.Unlock()
	go func() {
		defer close(t.donec)
		for {
			select {
			case m := <-t.inbox:
				_ = h.Step(context.Background(), m)
			case <-t.stopc:
				return
			}
		}
	}()
	return nil
}

func (t *MemTransport) enqueue(m *pb.Message) bool {
	select {
	case <-t.stopc:
		return false
	default:
	}
	select {
	case t.inbox <- m:
		return true
	default:
		return false
	}
}

func (t *MemTransport) report(f func(Handler)) {
	t.mu.Lock()
	h := t.h
	t.mu.Unlock()
	select {
	case <-t.stopc:
		return
	default:
	}
	if h != nil {
		go f(h) // never call back into the sender's loop from its own Send
	}
}

// Send implements Transport.
func (t *MemTransport) Send(msgs []*pb.Message) {
	for _, m := range msgs {
		t.nw.route(t.id, proto.Clone(m).(*pb.Message), false)
	}
}

// AddPeer implements Transport; a MemNetwork routes by ID.
func (t *MemTransport) AddPeer(uint64, string) {}

// RemovePeer implements Transport.
func (t *MemTransport) RemovePeer(uint64) {}

// Close implements Transport.
func (t *MemTransport) Close() error {
	t.once.Do(func() {
		close(t.stopc)
		t.mu.Lock()
		started := t.h != nil
		t.mu.Unlock()
		if started {
			<-t.donec
		}
		t.nw.mu.Lock()
		if t.nw.eps[t.id] == t {
			delete(t.nw.eps, t.id)
		}
		t.nw.mu.Unlock()
	})
	return nil
}
