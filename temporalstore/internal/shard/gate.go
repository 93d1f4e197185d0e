package shard

import (
	"context"
	"sync"
)

// appendGate is the shard's append gate: held shared by appends and
// exclusively (Lock) by read-modify-writes, Exclusive and Freeze, with
// sync.RWMutex's rules: once an exclusive holder waits, new shared holders
// wait behind it, so appends cannot starve it.
//
// A shared hold is waited for with a context (lockShared), so that a write
// with a deadline gives up when the gate is held long. Appends that find
// the gate taken wait as a group: one goroutine waits in RLock for all of
// them, keeping RWMutex's order, and the group shares the hold it gets,
// released by the last member to leave. However many writes give up and
// retry while the gate is held, one goroutine waits.
type appendGate struct {
	sync.RWMutex
	mu sync.Mutex
	// next is the group waiting for a shared hold; nil when none is.
	next *gateGroup
}

// gateGroup is appends waiting for the gate together.
type gateGroup struct {
	// admitted is closed once the group's hold is taken.
	admitted chan struct{}
	// members counts the appends waiting in the group or holding its
	// hold; in says the hold is taken. Both are under appendGate.mu.
	members int
	in      bool
}

// lockShared takes a shared hold of the gate, to be released with
// unlockShared(g); or returns ctx's error, holding nothing, if ctx ends
// first. A free gate costs a TryRLock: no allocation, no goroutine.
func (a *appendGate) lockShared(ctx context.Context) (g *gateGroup, err error) {
	if a.TryRLock() {
		return nil, nil
	}
	return a.lockSharedSlow(ctx)
}

func (a *appendGate) lockSharedSlow(ctx context.Context) (*gateGroup, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	g := a.next
	if g == nil {
		g = &gateGroup{admitted: make(chan struct{})}
		a.next = g
		go a.admit(g)
	}
	g.members++
	a.mu.Unlock()
	select {
	case <-g.admitted:
		return g, nil
	case <-ctx.Done():
	}
	a.mu.Lock()
	in := g.in
	if !in {
		g.members--
	}
	a.mu.Unlock()
	if in {
		// Admitted as ctx ended: the share is handed back.
		a.unlockShared(g)
	}
	return nil, ctx.Err()
}

// admit takes g's hold, queued in RLock as a single append would be, and
// lets g's members in; none may join g after that.
func (a *appendGate) admit(g *gateGroup) {
	a.RLock()
	a.mu.Lock()
	g.in = true
	a.next = nil
	empty := g.members == 0
	a.mu.Unlock()
	close(g.admitted)
	if empty {
		// Every member gave up meanwhile.
		a.RUnlock()
	}
}

// unlockShared releases a hold lockShared returned with g.
func (a *appendGate) unlockShared(g *gateGroup) {
	if g == nil {
		a.RUnlock()
		return
	}
	a.mu.Lock()
	g.members--
	last := g.members == 0
	a.mu.Unlock()
	if last {
		a.RUnlock()
	}
}
