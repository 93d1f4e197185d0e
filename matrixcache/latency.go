package matrixcache

import (
	"math"
	"sync/atomic"
	"time"
)

// latencyBuckets are the upper bounds of the latency histogram buckets, the
// original's: 10µs, 100µs, 1ms, 10ms, and everything above. Unexported so
// that no caller can change them under a running cache.
var latencyBuckets = [...]time.Duration{10 * time.Microsecond, 100 * time.Microsecond, time.Millisecond, 10 * time.Millisecond}

// Latency is a snapshot of one operation's latency histogram.
type Latency struct {
	// Buckets counts samples per bucket (not cumulative): at most 10µs,
	// 100µs, 1ms and 10ms, and above 10ms in Buckets[4].
	Buckets [len(latencyBuckets) + 1]int64
	Samples int64
	Total   time.Duration
	Max     time.Duration
}

// Mean is the average latency, or 0 without samples.
func (l Latency) Mean() time.Duration {
	if l.Samples == 0 {
		return 0
	}
	return l.Total / time.Duration(l.Samples)
}

// Percentile is the upper bound of the bucket holding the sample of rank
// ceil(Samples·p/100), as the original reports it: for the last bucket, the
// maximum (at least 10ms and 1µs). It is 0 without samples.
func (l Latency) Percentile(p float64) time.Duration {
	if l.Samples == 0 {
		return 0
	}
	rank := max(int64(math.Ceil(float64(l.Samples)*p/100)), 1)
	var seen int64
	for i, n := range l.Buckets {
		seen += n
		if seen >= rank {
			if i < len(latencyBuckets) {
				return latencyBuckets[i]
			}
			break
		}
	}
	return max(l.Max, latencyBuckets[len(latencyBuckets)-1]+time.Microsecond)
}

type latencyHist struct {
	buckets [len(latencyBuckets) + 1]atomic.Int64
	samples atomic.Int64
	total   atomic.Int64
	max     atomic.Int64
}

func (h *latencyHist) since(start time.Time) { h.record(time.Since(start)) }

func (h *latencyHist) record(d time.Duration) {
	i := len(latencyBuckets)
	for j, b := range latencyBuckets {
		if d <= b {
			i = j
			break
		}
	}
	h.buckets[i].Add(1)
	h.samples.Add(1)
	h.total.Add(int64(d))
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

func (h *latencyHist) snapshot() Latency {
	var l Latency
	for i := range h.buckets {
		l.Buckets[i] = h.buckets[i].Load()
	}
	l.Samples = h.samples.Load()
	l.Total = time.Duration(h.total.Load())
	l.Max = time.Duration(h.max.Load())
	return l
}
