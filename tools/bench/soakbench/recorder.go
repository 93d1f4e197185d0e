package soakbench

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds, from 1 µs to a minute, to three
// significant digits.
const (
	histMin, histMax = 1, int64(time.Minute / time.Microsecond)
	histDigits       = 3
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histDigits) }

// recorder gathers one class's requests: the current sample interval's,
// and every window's since the end of warm-up. Safe for concurrent use.
type recorder struct {
	mu       sync.Mutex
	interval *hdrhistogram.Histogram
	windows  []*hdrhistogram.Histogram
	ops      int64
	errs     int64
	late     int64
	lastErr  string
}

func newRecorder(windows int) *recorder {
	r := &recorder{interval: newHist(), windows: make([]*hdrhistogram.Histogram, windows)}
	for i := range r.windows {
		r.windows[i] = newHist()
	}
	return r
}

// observe records one request that took d and failed with err (nil:
// succeeded). Failed requests count as errors, not as latencies: a fast
// refusal would otherwise improve the p99.
func (r *recorder) observe(d time.Duration, err error) {
	us := min(max(d.Microseconds(), histMin), histMax)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops++
	if err != nil {
		r.errs++
		r.lastErr = err.Error()
		return
	}
	_ = r.interval.RecordValue(us) // clamped into range: cannot fail
}

// behind records that a worker fell behind its schedule and skipped
// ahead.
func (r *recorder) behind() {
	r.mu.Lock()
	r.late++
	r.mu.Unlock()
}

// take ends the sample interval that lasted d: it returns the interval's
// figures, adds its latencies to window (none when below 0, in warm-up)
// and starts the next interval.
func (r *recorder) take(d time.Duration, window int) ClassSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := ClassSample{
		Ops: r.ops, Errors: r.errs, Late: r.late, Error: r.lastErr,
		P50Ms: ms(r.interval.ValueAtQuantile(50)),
		P99Ms: ms(r.interval.ValueAtQuantile(99)),
		MaxMs: ms(r.interval.Max()),
	}
	if d > 0 {
		s.OpsPerSec = float64(r.ops) / d.Seconds()
	}
	if window >= 0 && window < len(r.windows) {
		r.windows[window].Merge(r.interval)
	}
	r.interval.Reset()
	r.ops, r.errs, r.late, r.lastErr = 0, 0, 0, ""
	return s
}

// window is window i's requests and p99 (successful requests only).
func (r *recorder) window(i int) WindowClass {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.windows[i]
	return WindowClass{Ops: h.TotalCount(), P99Ms: ms(h.ValueAtQuantile(99))}
}

// ms converts a recorded value (µs) to milliseconds.
func ms(us int64) float64 { return float64(us) / 1e3 }
