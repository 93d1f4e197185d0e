package resp

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// latencyHistoryLen is how many samples an event keeps, as Redis's
// LATENCY_TS_LEN: one a second at most, so the last 160 seconds with
// spikes.
const latencyHistoryLen = 160

// latencyEventCommand is the one event this server records: a call that
// took at least latency-monitor-threshold milliseconds, timed as INFO
// commandstats times it. Redis also splits out "fast-command" and its
// persistence events; here every command is one event.
const latencyEventCommand = "command"

// latencySample is one second's worst call of an event.
type latencySample struct {
	at time.Time
	ms int64
}

// latencyEvent is an event's history: the newest latencyHistoryLen
// samples, oldest first, and the worst ever.
type latencyEvent struct {
	samples []latencySample
	max     int64
}

// latencyMonitor is Redis's latency monitor (LATENCY LATEST, HISTORY,
// RESET) over command calls. Off while the threshold is 0, Redis's
// default; then a call costs one atomic load.
type latencyMonitor struct {
	thresholdMs atomic.Int64
	now         func() time.Time // the wall clock samples are stamped with

	mu     sync.Mutex
	events map[string]*latencyEvent
}

// newLatencyMonitor returns a monitor of calls taking threshold or more
// (whole milliseconds; 0: off).
func newLatencyMonitor(threshold time.Duration) *latencyMonitor {
	m := &latencyMonitor{events: map[string]*latencyEvent{}, now: time.Now}
	m.thresholdMs.Store(threshold.Milliseconds())
	return m
}

// record notes a call of event that took d, if the monitor is on and d is
// at or past its threshold. Samples in one second keep the worst.
func (m *latencyMonitor) record(event string, d time.Duration) {
	t := m.thresholdMs.Load()
	if t <= 0 || d < time.Duration(t)*time.Millisecond {
		return
	}
	ms, now := d.Milliseconds(), m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.events[event]
	if e == nil {
		e = &latencyEvent{}
		m.events[event] = e
	}
	e.max = max(e.max, ms)
	if n := len(e.samples); n > 0 && e.samples[n-1].at.Unix() == now.Unix() {
		e.samples[n-1].ms = max(e.samples[n-1].ms, ms)
		return
	}
	if len(e.samples) == latencyHistoryLen {
		e.samples = append(e.samples[:0], e.samples[1:]...)
	}
	e.samples = append(e.samples, latencySample{at: now, ms: ms})
}

// latestEntry is one line of LATENCY LATEST.
type latestEntry struct {
	event string
	at    time.Time
	ms    int64
	max   int64
}

// latest returns every event's newest sample and worst, by event name.
func (m *latencyMonitor) latest() []latestEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]latestEntry, 0, len(m.events))
	for name, e := range m.events {
		last := e.samples[len(e.samples)-1]
		out = append(out, latestEntry{event: name, at: last.at, ms: last.ms, max: e.max})
	}
	slices.SortFunc(out, func(a, b latestEntry) int { return strings.Compare(a.event, b.event) })
	return out
}

// history returns event's samples, oldest first.
func (m *latencyMonitor) history(event string) []latencySample {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.events[strings.ToLower(event)]; e != nil {
		return slices.Clone(e.samples)
	}
	return nil
}

// reset forgets the named events, or every one when none is named, and
// returns how many it forgot.
func (m *latencyMonitor) reset(events []string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(events) == 0 {
		n := len(m.events)
		clear(m.events)
		return n
	}
	n := 0
	for _, name := range events {
		name = strings.ToLower(name)
		if _, ok := m.events[name]; ok {
			delete(m.events, name)
			n++
		}
	}
	return n
}
