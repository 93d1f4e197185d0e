package cachebench

import "container/heap"

// optimalHits is the hit count of Belady's offline optimum (MIN, with
// bypass) replaying keys through a cache of capacity entries: on a miss into
// a full cache, of the resident keys and the requested one, the one whose
// next request is farthest away (or never comes) stays out. No online
// policy, admission filters included, hits more often, so the figure bounds
// what any system in a cell can reach, and says how far each is from it.
func optimalHits(keys []uint64, capacity int) int {
	if capacity <= 0 {
		return 0
	}
	const never = int(^uint(0) >> 1)
	next := make([]int, len(keys))
	seen := make(map[uint64]int, capacity)
	for i := len(keys) - 1; i >= 0; i-- {
		if j, ok := seen[keys[i]]; ok {
			next[i] = j
		} else {
			next[i] = never
		}
		seen[keys[i]] = i
	}
	clear(seen)
	// resident maps a cached key to its next request; the heap may hold
	// stale (key, next) pairs, skipped when they no longer match.
	resident := seen
	var far farthestHeap
	hits := 0
	for i, k := range keys {
		if _, ok := resident[k]; ok {
			hits++
		} else if len(resident) >= capacity {
			top := far.farthest(resident)
			if top.next <= next[i] {
				continue // k comes back no sooner than any resident key: bypass
			}
			heap.Pop(&far)
			delete(resident, top.key)
		}
		resident[k] = next[i]
		heap.Push(&far, useAt{key: k, next: next[i]})
	}
	return hits
}

// useAt is a resident key and the position of its next request.
type useAt struct {
	key  uint64
	next int
}

// farthestHeap pops the key whose next request comes last.
type farthestHeap []useAt

func (h farthestHeap) Len() int           { return len(h) }
func (h farthestHeap) Less(i, j int) bool { return h[i].next > h[j].next }
func (h farthestHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *farthestHeap) Push(x any)        { *h = append(*h, x.(useAt)) }
func (h *farthestHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// farthest drops stale pairs from the top and returns the resident key
// requested last, leaving it on the heap. The heap is not empty while a key
// is resident.
func (h *farthestHeap) farthest(resident map[uint64]int) useAt {
	for {
		top := (*h)[0]
		if n, ok := resident[top.key]; ok && n == top.next {
			return top
		}
		heap.Pop(h)
	}
}
