package shard

import (
	"context"
	"sync"
)

// probeRun is one probe in flight; done closes when it has finished, err
// is its result.
type probeRun struct {
	done chan struct{}
	err  error
}

// probes coalesces a shard's concurrent probes into one run, so that a
// wedged shard holds at most one waiting probe, however often it is asked.
type probes struct {
	mu  sync.Mutex
	cur *probeRun
}

// Probe checks that the shard can serve: it passes the append gate, as
// every write does, then takes the shard's lock, as every read does, and
// reports ErrClosed or the log's permanent failure. It returns ctx's error
// when that takes longer than ctx allows: a shard whose gate or lock is
// held (a long read-modify-write, a stuck fsync, a frozen shard) fails its
// probe. Probes asked for while one is in flight share it.
func (s *Shard) Probe(ctx context.Context) error {
	s.probe.mu.Lock()
	p := s.probe.cur
	if p == nil {
		p = &probeRun{done: make(chan struct{})}
		s.probe.cur = p
		go func() {
			p.err = s.probeOnce()
			s.probe.mu.Lock()
			s.probe.cur = nil
			s.probe.mu.Unlock()
			close(p.done)
		}()
	}
	s.probe.mu.Unlock()
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Shard) probeOnce() error {
	s.gate.RLock()
	//lint:ignore SA2001 passing the gate, as a write would, is the probe
	s.gate.RUnlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch {
	case s.closed:
		return ErrClosed
	case s.failed != nil:
		return s.failed
	}
	return nil
}

// Freeze holds the shard's append gate until the returned function is
// called: writes and read-modify-writes wait, reads go on, and Probe fails.
// It waits for the writes in flight to finish first, or for ctx. The
// returned function may be called more than once.
func (s *Shard) Freeze(ctx context.Context) (func(), error) {
	got := make(chan struct{})
	go func() {
		s.gate.Lock()
		close(got)
	}()
	select {
	case <-got:
	case <-ctx.Done():
		go func() {
			<-got
			s.gate.Unlock()
		}()
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() { once.Do(s.gate.Unlock) }, nil
}
