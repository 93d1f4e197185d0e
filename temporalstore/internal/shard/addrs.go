package shard

import "math"

// stringAddrs counts the index's string entries (every entry that is not a
// resident collection, whose Addr is a log index) by the log index they
// point at, in buckets of addrBucket records. The lowest non-empty bucket
// bounds from below the lowest record a string needs, which ReclaimLog and
// each checkpoint ask for: without the counts, every ask was a scan of the
// whole index under the shard's lock (a few milliseconds a million keys).
//
// The bound is conservative by less than a bucket, so the log may keep a
// segment longer than it must, never drop one too early. Writes only add
// entries at the log's head and move old ones there, so the buckets in use
// are a window that slides forward; counts holds it from base.
type stringAddrs struct {
	base   uint64  // the bucket counts[0] counts
	counts []int32 // entries per bucket, from base; counts[0] > 0 unless empty
	// broken is set when a removal finds no entry to remove, which the
	// accounting never allows: lowest then declines to answer, and the
	// shard scans its index as it did without the counts.
	broken bool
}

// addrBucket is the bucket's width in log records: narrow enough that the
// bound falls in the right segment even of small logs (a 16 KiB segment
// holds about 50 records of 300 bytes), wide enough that the window stays
// small (4 bytes a bucket: 1.25 MB for 10 million records between the
// oldest string and the head).
const addrBucket = 1 << 5

// add counts an entry pointing at log index addr.
func (a *stringAddrs) add(addr uint64) {
	b := addr / addrBucket
	switch {
	case len(a.counts) == 0:
		a.base, a.counts = b, append(a.counts[:0], 0)
	case b < a.base:
		// Only while counts are rebuilt from an index in hash order.
		grown := make([]int32, a.base-b+uint64(len(a.counts)))
		copy(grown[a.base-b:], a.counts)
		a.base, a.counts = b, grown
	}
	for b-a.base >= uint64(len(a.counts)) {
		a.counts = append(a.counts, 0)
	}
	a.counts[b-a.base]++
}

// remove uncounts an entry pointing at log index addr.
func (a *stringAddrs) remove(addr uint64) {
	b := addr / addrBucket
	if b < a.base || b-a.base >= uint64(len(a.counts)) || a.counts[b-a.base] == 0 {
		a.broken = true
		return
	}
	a.counts[b-a.base]--
	if b != a.base {
		return
	}
	i := 0
	for i < len(a.counts) && a.counts[i] == 0 {
		i++
	}
	a.base += uint64(i)
	a.counts = a.counts[i:]
	// Slicing from the front strands the capacity behind it: copy the
	// window down once it is under a quarter of what is held.
	if c := cap(a.counts); c > 64 && len(a.counts) < c/4 {
		a.counts = append(make([]int32, 0, 2*len(a.counts)), a.counts...)
	}
}

// lowest is the first log index of the lowest bucket an entry points into
// (at most the lowest entry's), math.MaxUint64 when no entry is counted; ok
// is false when the counts are broken.
func (a *stringAddrs) lowest() (low uint64, ok bool) {
	switch {
	case a.broken:
		return 0, false
	case len(a.counts) == 0:
		return math.MaxUint64, true
	}
	return a.base * addrBucket, true
}
