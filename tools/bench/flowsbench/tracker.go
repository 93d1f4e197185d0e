package flowsbench

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// maxViolations bounds the violation messages a run keeps: past it only
// the count grows, so a system that doubles every flow cannot flood the
// report.
const maxViolations = 20

// tracker is one run's bookkeeping: for every flow when it was created and
// first claimed, and how often it was claimed and completed. Every method
// is safe for concurrent use.
type tracker struct {
	n int
	// payloadBytes is every flow's payload size, which a claim must hand
	// over.
	payloadBytes int
	t0           time.Time
	// createdAt and claimedAt are nanoseconds since t0, plus one so that
	// zero means "not yet".
	createdAt, claimedAt []atomic.Int64
	claims, completes    []atomic.Int32
	// created counts acknowledged creates, done distinct completions.
	created, done atomic.Int64
	// createdNs and doneNs are when created and done reached n, since t0.
	createdNs, doneNs atomic.Int64
	// finished is closed when done reaches n.
	finished chan struct{}

	mu         sync.Mutex
	violations []string
	nViolation int
}

func newTracker(n int) *tracker {
	return &tracker{
		n:         n,
		createdAt: make([]atomic.Int64, n),
		claimedAt: make([]atomic.Int64, n),
		claims:    make([]atomic.Int32, n),
		completes: make([]atomic.Int32, n),
		finished:  make(chan struct{}),
	}
}

// flowID is flow i's id. Zero-padded so that ids sort as created.
func flowID(i int) string { return fmt.Sprintf("f%08d", i) }

// index parses a flow id back, or reports a violation.
func (t *tracker) index(id string) (int, bool) {
	if len(id) > 1 && id[0] == 'f' {
		if i, err := strconv.Atoi(id[1:]); err == nil && i >= 0 && i < t.n {
			return i, true
		}
	}
	t.violate("unknown flow id %q", id)
	return 0, false
}

func (t *tracker) since() int64 { return int64(time.Since(t.t0)) + 1 }

// creating stamps flows [lo, hi) as created now: just before their
// create call is sent.
func (t *tracker) creating(lo, hi int) {
	now := t.since()
	for i := lo; i < hi; i++ {
		t.createdAt[i].Store(now)
	}
}

// createdBatch counts k acknowledged creates.
func (t *tracker) createdBatch(k int) {
	if t.created.Add(int64(k)) == int64(t.n) {
		t.createdNs.Store(t.since())
	}
}

// claimed records a claim of id; a second is a violation.
func (t *tracker) claimed(id string) {
	i, ok := t.index(id)
	if !ok {
		return
	}
	if t.claims[i].Add(1) == 1 {
		t.claimedAt[i].Store(t.since())
		return
	}
	t.violate("flow %s claimed again while its first claim held", id)
}

// completed records a durable completion of id; a second is a
// violation.
func (t *tracker) completed(id string) {
	i, ok := t.index(id)
	if !ok {
		return
	}
	if t.completes[i].Add(1) != 1 {
		t.violate("flow %s completed twice", id)
		return
	}
	if t.claims[i].Load() == 0 {
		t.violate("flow %s completed but never claimed", id)
	}
	if t.done.Add(1) == int64(t.n) {
		t.doneNs.Store(t.since())
		close(t.finished)
	}
}

func (t *tracker) violate(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.nViolation++
	if len(t.violations) < maxViolations {
		t.violations = append(t.violations, fmt.Sprintf(format, args...))
	}
}

// problems returns the violations seen, with a count of those left out.
func (t *tracker) problems() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string(nil), t.violations...)
	if t.nViolation > len(out) {
		out = append(out, fmt.Sprintf("... and %d more", t.nViolation-len(out)))
	}
	return out
}

// dueToClaim returns the p50, p95 and p99 of claim time minus creation
// time over the flows claimed, in milliseconds.
func (t *tracker) dueToClaim() (p50, p95, p99 float64) {
	ds := make([]time.Duration, 0, t.n)
	for i := range t.n {
		c, d := t.createdAt[i].Load(), t.claimedAt[i].Load()
		if c > 0 && d > 0 {
			ds = append(ds, time.Duration(max(d-c, 0)))
		}
	}
	ps := benchkit.DurationPercentiles(ds, 50, 95, 99)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return ms(ps[0]), ms(ps[1]), ms(ps[2])
}
