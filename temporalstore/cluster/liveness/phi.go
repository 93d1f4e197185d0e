package liveness

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Options configure a Detector; the zero value takes every default.
type Options struct {
	// Threshold is the φ at and above which a peer is suspected. Default 8.
	Threshold float64
	// Window is how many heartbeat inter-arrival times are kept per peer:
	// the distribution φ is judged by. Default 200.
	Window int
	// MinStdDev floors the learnt standard deviation, so that a peer whose
	// heartbeats came like clockwork is not suspected for being a little
	// late once. Default 50 ms.
	MinStdDev time.Duration
	// AcceptablePause is added to the learnt mean interval: a pause this
	// long (a GC, a stalled disk) is expected of a live peer. Default 0.
	AcceptablePause time.Duration
	// FirstInterval is the interval assumed for a peer heard from once:
	// the window starts with two samples a quarter of it either side.
	// Default 1 s.
	FirstInterval time.Duration
}

func (o Options) withDefaults() Options {
	if o.Threshold == 0 {
		o.Threshold = 8
	}
	if o.Window == 0 {
		o.Window = 200
	}
	if o.MinStdDev == 0 {
		o.MinStdDev = 50 * time.Millisecond
	}
	if o.FirstInterval == 0 {
		o.FirstInterval = time.Second
	}
	return o
}

// Validate reports whether the options, after defaults, are usable.
func (o Options) Validate() error {
	o = o.withDefaults()
	switch {
	case !(o.Threshold > 0) || math.IsInf(o.Threshold, 0):
		return fmt.Errorf("%w: Threshold %v: want a positive number", ErrInvalid, o.Threshold)
	case o.Window < 2:
		return fmt.Errorf("%w: Window %d: want at least 2", ErrInvalid, o.Window)
	case o.MinStdDev < 0, o.AcceptablePause < 0, o.FirstInterval < 0:
		return fmt.Errorf("%w: negative duration", ErrInvalid)
	}
	return nil
}

// Detector is one node's φ-accrual failure detector over its peers.
type Detector struct {
	o     Options
	mu    sync.Mutex
	peers map[string]*arrivals
}

// NewDetector returns a Detector with o's values and defaults.
func NewDetector(o Options) (*Detector, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &Detector{o: o.withDefaults(), peers: map[string]*arrivals{}}, nil
}

// Heartbeat records a heartbeat from peer received at at. A heartbeat
// older than the peer's last is ignored.
func (d *Detector) Heartbeat(peer string, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	a := d.peers[peer]
	if a == nil {
		a = &arrivals{ring: make([]float64, d.o.Window)}
		first := d.o.FirstInterval.Seconds()
		a.add(first - first/4)
		a.add(first + first/4)
		a.last = at
		d.peers[peer] = a
		return
	}
	if at.Before(a.last) {
		return
	}
	a.add(at.Sub(a.last).Seconds())
	a.last = at
}

// Phi is peer's φ at now, and false for a peer never heard from.
func (d *Detector) Phi(peer string, now time.Time) (float64, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	a := d.peers[peer]
	if a == nil {
		return 0, false
	}
	return d.phiLocked(a, now), true
}

func (d *Detector) phiLocked(a *arrivals, now time.Time) float64 {
	mean, std := a.stats()
	mean += d.o.AcceptablePause.Seconds()
	std = max(std, d.o.MinStdDev.Seconds())
	elapsed := max(now.Sub(a.last).Seconds(), 0)
	// The chance that a heartbeat from this distribution arrives even
	// later than now: the normal distribution's upper tail.
	later := 0.5 * math.Erfc((elapsed-mean)/(std*math.Sqrt2))
	if later <= 0 {
		return math.Inf(1)
	}
	return max(-math.Log10(later), 0)
}

// Suspected is the peers whose φ at now is at or above the threshold,
// sorted.
func (d *Detector) Suspected(now time.Time) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for p, a := range d.peers {
		if d.phiLocked(a, now) >= d.o.Threshold {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// Forget drops peer's history (it left the cluster).
func (d *Detector) Forget(peer string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.peers, peer)
}

// arrivals is a peer's last heartbeat and a ring of its inter-arrival
// times in seconds, with their running sums.
type arrivals struct {
	last       time.Time
	ring       []float64
	n, next    int
	sum, sumSq float64
}

func (a *arrivals) add(x float64) {
	if a.n == len(a.ring) {
		old := a.ring[a.next]
		a.sum -= old
		a.sumSq -= old * old
	} else {
		a.n++
	}
	a.ring[a.next] = x
	a.next = (a.next + 1) % len(a.ring)
	a.sum += x
	a.sumSq += x * x
	if a.next == 0 {
		// Once a lap, the sums afresh: subtracting drifts.
		a.sum, a.sumSq = 0, 0
		for _, v := range a.ring[:a.n] {
			a.sum += v
			a.sumSq += v * v
		}
	}
}

func (a *arrivals) stats() (mean, std float64) {
	n := float64(a.n)
	mean = a.sum / n
	// Running sums drift a little below zero variance; clamp.
	return mean, math.Sqrt(max(a.sumSq/n-mean*mean, 0))
}
