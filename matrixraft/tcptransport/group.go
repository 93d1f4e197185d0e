package tcptransport

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

// group is one raft group's use of a Transport: its handler, the peers it
// lists and the snapshots it sent that are not yet reported. The
// Transport's own handler (Start) is group 0, t.base; Group returns the
// others. Lock order: t.mu before g.mu.
type group struct {
	t  *Transport
	id uint64

	mu sync.Mutex
	// ctx ends at the group's Close or the Transport's: it aborts the
	// group's Step calls and snapshot streams in flight. It is made by
	// Start, so that a view never started holds nothing of the Transport's
	// (until then it is the Transport's own).
	ctx     context.Context
	cancel  context.CancelFunc
	h       matrixraft.Handler
	started bool
	// closing is set when Close begins: from then on the group takes no
	// new peers, messages or snapshots. closed is set once Close has
	// reported the group's snapshots: from then on its handler is not
	// called.
	closing bool
	closed  bool
	snaps   map[*outSnap]struct{}
	// calls counts handler calls in progress, so that Close can wait for
	// them.
	calls sync.WaitGroup
}

var _ matrixraft.Transport = (*group)(nil)

func newGroup(t *Transport, id uint64) *group {
	return &group{t: t, id: id, ctx: t.ctx, cancel: func() {}, snaps: map[*outSnap]struct{}{}}
}

// Group returns the transport of raft group id (non-zero) over this one:
// every group of a process shares the Transport's listener and its one
// connection (and queue) per peer, and its messages travel tagged with
// the group ID. Start the returned Transport with the group's handler (a
// matrixraft.Node does: pass it as Options.Transport); the first Start,
// of any group or of the Transport itself, makes the Transport accept
// connections. Its Close forgets the group (its peers, its handler) and
// leaves the shared Transport running; the Transport's Close ends every
// group. Each call returns a new, unstarted view: a group restarted after
// its Close takes a new one. Close a view given peers that then failed to
// start, or they stay listed. Group(0) returns a Transport whose Start
// fails with ErrInvalidGroup: group 0 is the Transport's own (Start).
func (t *Transport) Group(id uint64) matrixraft.Transport {
	if id == 0 {
		return invalidGroup{}
	}
	return newGroup(t, id)
}

// Start implements matrixraft.Transport: h becomes the group's handler,
// and the Transport starts serving if it was not already.
func (g *group) Start(h matrixraft.Handler) error {
	t := g.t
	t.mu.Lock()
	defer t.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case t.closed || g.closing:
		return ErrClosed
	case g.started:
		return ErrStarted
	case t.groups[g.id] != nil:
		return fmt.Errorf("%w: group %d", ErrStarted, g.id)
	}
	g.h, g.started = h, true
	g.ctx, g.cancel = context.WithCancel(t.ctx)
	t.groups[g.id] = g
	t.serveLocked()
	return nil
}

// Send implements matrixraft.Transport, as Transport.Send does, for the
// group. A group may send to any peer known to the Transport.
func (g *group) Send(msgs []*pb.Message) { g.t.send(g, msgs) }

// AddPeer implements matrixraft.Transport: the group lists the peer. The
// address is the node's, shared by every group: a new one redials the
// connection all of them use.
func (g *group) AddPeer(id uint64, addr string) { g.t.addPeer(g, id, addr) }

// RemovePeer implements matrixraft.Transport for the group: the group's
// snapshots to the peer fail, and the peer itself (queue, connections) is
// dropped once no group, nor the Transport itself, lists it.
func (g *group) RemovePeer(id uint64) { g.t.removePeer(g, id) }

// Close implements matrixraft.Transport for the group: it unregisters the
// handler, removes the group from every peer's list, reports the group's
// pending snapshots failed and waits for handler calls in progress; the
// handler is not called after Close returns. The shared Transport keeps
// running. Close must not be called from the handler. It is idempotent.
func (g *group) Close() error {
	t := g.t
	t.mu.Lock()
	g.mu.Lock()
	if g.closing {
		g.mu.Unlock()
		t.mu.Unlock()
		return nil
	}
	g.closing = true
	cancel := g.cancel
	g.mu.Unlock()
	if t.groups[g.id] == g {
		delete(t.groups, g.id)
	}
	orphans := t.leaveAllLocked(g)
	t.mu.Unlock()

	cancel()
	for _, p := range orphans {
		p.stop()
	}
	// Reported here rather than by the report goroutine: it may not run
	// (the Transport closed), and the handler must hear of them before
	// Close returns.
	for _, s := range g.pendingSnaps(0) {
		t.finishSnap(s, false)
	}
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.calls.Wait()
	return nil
}

// call runs f with the group's handler and context, unless the group is
// not started or is closed. It reports whether f ran.
func (g *group) call(f func(ctx context.Context, h matrixraft.Handler)) bool {
	g.mu.Lock()
	if g.closed || g.h == nil {
		g.mu.Unlock()
		return false
	}
	ctx, h := g.ctx, g.h
	g.calls.Add(1)
	g.mu.Unlock()
	defer g.calls.Done()
	f(ctx, h)
	return true
}

// context returns the group's context.
func (g *group) context() context.Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ctx
}

func (g *group) isClosing() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closing
}

// track records a snapshot the group is sending. It returns false once
// the group is closing: there is no one left to report it to.
func (g *group) track(s *outSnap) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return false
	}
	g.snaps[s] = struct{}{}
	return true
}

func (g *group) untrack(s *outSnap) {
	g.mu.Lock()
	delete(g.snaps, s)
	g.mu.Unlock()
}

// pendingSnaps returns the group's snapshots not yet reported, to peer
// to, or to anyone for 0.
func (g *group) pendingSnaps(to uint64) []*outSnap {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*outSnap
	for s := range g.snaps {
		if to == 0 || s.m.GetTo() == to {
			out = append(out, s)
		}
	}
	return out
}

// outSnap is a MsgSnap given to Send, until it is reported. Several
// goroutines may end it (the peer's snapshot goroutine, the report
// goroutine, the group's Close), so the first to report it wins and the
// others do nothing: raft hears of every MsgSnap exactly once.
type outSnap struct {
	g        *group
	m        *pb.Message
	reported atomic.Bool
}

// invalidGroup is what Group(0) returns: a Transport that refuses to
// start, so the mistake surfaces where the node starts.
type invalidGroup struct{}

func (invalidGroup) Start(matrixraft.Handler) error {
	return fmt.Errorf("%w: 0 is the Transport's own (use Start)", ErrInvalidGroup)
}
func (invalidGroup) Send([]*pb.Message)     {}
func (invalidGroup) AddPeer(uint64, string) {}
func (invalidGroup) RemovePeer(uint64)      {}
func (invalidGroup) Close() error           { return nil }
