package wal

import (
	"sync/atomic"
	"time"
)

// histogramBuckets is the number of fsync latency buckets: bucket i counts
// latencies up to 2^i microseconds, the last one everything longer.
const histogramBuckets = 22

// Histogram is a latency histogram with power-of-two microsecond buckets.
type Histogram struct {
	// Counts[i] is the number of observations in (2^(i-1) µs, 2^i µs]; the
	// last bucket also holds everything longer.
	Counts [histogramBuckets]uint64
	// Sum is the total of every observation.
	Sum time.Duration
}

// HistogramBuckets is the number of buckets of a Histogram.
const HistogramBuckets = histogramBuckets

// BucketBound returns the inclusive upper bound of bucket i.
func BucketBound(i int) time.Duration { return time.Duration(1<<i) * time.Microsecond }

// Total returns the number of observations.
func (h Histogram) Total() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Merge adds o's observations to h's, as when summing several logs'.
func (h *Histogram) Merge(o Histogram) {
	for i, c := range o.Counts {
		h.Counts[i] += c
	}
	h.Sum += o.Sum
}

// Quantile returns the upper bound of the bucket holding the q-th quantile
// (0 < q <= 1), or 0 when the histogram is empty.
func (h Histogram) Quantile(q float64) time.Duration {
	total := h.Total()
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen >= rank {
			return BucketBound(i)
		}
	}
	return BucketBound(histogramBuckets - 1)
}

// atomicHistogram is the concurrently updated form of Histogram.
type atomicHistogram struct {
	counts [histogramBuckets]atomic.Uint64
	sum    atomic.Int64 // nanoseconds
}

func (h *atomicHistogram) observe(d time.Duration) {
	us := d.Microseconds()
	i := 0
	for i < histogramBuckets-1 && int64(1)<<i < us {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(int64(d))
}

func (h *atomicHistogram) snapshot() Histogram {
	var out Histogram
	for i := range h.counts {
		out.Counts[i] = h.counts[i].Load()
	}
	out.Sum = time.Duration(h.sum.Load())
	return out
}

// Stats is a snapshot of a Log's counters. Counters start at zero on Open.
type Stats struct {
	Records         uint64    // records appended
	Bytes           uint64    // bytes written to segment files: frames and segment headers
	PayloadBytes    uint64    // record bytes as given by callers
	Fsyncs          uint64    // fdatasync calls on segments
	RecordsPerFsync float64   // Records / Fsyncs; 0 before the first fsync
	FsyncLatency    Histogram // fdatasync latency
	Segments        int       // segment files held
	FirstIndex      uint64    // index of the first retained record
	LastIndex       uint64    // index of the last readable record; FirstIndex-1 when empty
}

type counters struct {
	records      atomic.Uint64
	bytes        atomic.Uint64
	payloadBytes atomic.Uint64
	fsyncs       atomic.Uint64
	fsyncLatency atomicHistogram
}
