package policy

import "math"

// TinyLFU list identifiers.
const (
	qWindow uint8 = iota
	qProbation
	qProtected
	tinyLFULists
)

// Tuning constants, Caffeine's.
const (
	percentMain          = 0.99   // initial share of capacity outside the window
	percentMainProtected = 0.80   // share of the main space that is protected
	climberRestart       = 0.05   // hit-rate change that restarts the step size
	climberStepPercent   = 0.0625 // step size as a share of capacity
	climberStepDecay     = 0.98   // step decay per sample without restart
	admitHashDoSFreq     = 6      // candidates at least this frequent may win by chance
	queueTransferLimit   = 1000   // nodes moved per window resize
	initialSketchEntries = 4096   // sketch size before the cache shows its entry count
)

// climberTolerance is ours, not Caffeine's: in standard errors of the
// difference between two samples' hit rates, the gain a larger window must
// show to keep growing, and the loss a smaller one must show to stop
// shrinking. Caffeine and otter act on the sign of any change, but at 500
// entries a sample is 5,000 requests, whose hit rate varies by about 0.85
// points from one sample to the next on Zipf, twice what one step changes:
// the window took a random walk that the decaying step froze anywhere from
// 1% to half of the capacity, depending on how keys collide in the sketch
// (a 22.6% hit ratio with the window at 20% on Zipf at 500, 23.8% at 1%).
// With the tolerance, noise moves the window toward the small end, and it
// grows only on a clear gain. On the traces of the package documentation,
// OLTP (recency-biased) averages a window of 23% at 1000 entries, while
// Zipf, Glimpse and loop keep it near 1%.
const climberTolerance = 0.5

// TinyLFU is an adaptive Window-TinyLFU policy, the algorithm of Caffeine
// and of otter v2, and the default for the DRAM tier:
//
//   - A new entry enters the admission window, an LRU that starts at 1% of
//     the capacity. The rest, the main space, is a segmented LRU: entries
//     enter its probation segment and move to the protected segment (80% of
//     the main space) on a hit; protected overflow falls back to probation.
//   - When the window overflows, its least recently used entries become
//     candidates for the main space. Each candidate is compared with the
//     probation segment's least recently used entry, and the one the
//     frequency sketch estimates as seen more often stays. Ties and losses
//     go against the candidate, except that a candidate seen at least 6
//     times wins with probability 1/128: without that jitter an attacker
//     could keep a hot entry out by inflating a victim's colliding counters
//     (hash flooding).
//   - The frequency sketch is a count-min sketch of 4-bit counters, four
//     per key, all in one 64-byte block. After 10 increments per
//     sized-for entry, every counter is halved, so popularity ages. There
//     is no doorkeeper (a bloom filter that keeps first sightings out of
//     the sketch), as in Caffeine and otter: measured on the package
//     documentation's traces, one gained 1 point on OLTP at 250 entries and
//     0.5 on Zipf at 5000, but lost 0.5 on Zipf at 500 and 1.9 on loop at
//     500, and it costs another cache line per access.
//   - A hill climber sizes the window. Once per sample (as many requests as
//     the sketch's reset period) it compares the hit rate with the previous
//     sample's. It keeps growing the window only while the hit rate gains
//     more than climberTolerance, and keeps shrinking it unless the hit
//     rate loses more than that; otherwise it reverses. The step starts at
//     6.25% of the capacity, decays by 2% per sample, and restarts when the
//     hit rate moves by 5 points or more.
//   - Costs are weights: eviction continues until the total fits, and an
//     entry whose cost exceeds the capacity is refused.
//
// On a loop longer than the cache, the frequency filter keeps a fixed part
// of the loop resident, where LRU keeps none. On a hit, Access costs one
// map lookup, one sketch block and a list move, and allocates nothing;
// Admit allocates nothing in steady state either, given a victims slice
// with room.
//
// A TinyLFU is not safe for concurrent use.
type TinyLFU struct {
	t table

	capacity int64

	windowMax int64
	protMax   int64

	sketch sketch

	// Hill climber.
	hitsInSample   int64
	missesInSample int64
	prevHitRate    float64
	prevRequests   int64 // requests in the previous sample; 0 before the first
	stepSize       float64
	adjustment     int64

	rng uint64

	// expected is the entry count the sketch is sized for: the capacity
	// until the cache is half full, then an estimate of the entries it
	// holds when full (see sizeSketch). estimated says it was made.
	expected  int64
	estimated bool
}

// NewTinyLFU returns an empty TinyLFU holding at most capacity cost units.
// It panics if capacity is negative.
func NewTinyLFU(capacity int64) *TinyLFU {
	if capacity < 0 {
		panic("policy: negative capacity")
	}
	p := &TinyLFU{t: newTable(int(tinyLFULists)), rng: 0x9e3779b97f4a7c15}
	p.setMaximum(capacity)
	p.sketch.ensureCapacity(min(capacity, initialSketchEntries))
	return p
}

func (p *TinyLFU) setMaximum(capacity int64) {
	p.capacity = capacity
	p.windowMax = capacity - int64(percentMain*float64(capacity))
	p.protMax = int64(percentMainProtected * float64(capacity-p.windowMax))
	p.stepSize = -climberStepPercent * float64(capacity)
	p.adjustment = 0
	p.expected, p.estimated = capacity, false
	p.hitsInSample, p.missesInSample, p.prevHitRate, p.prevRequests = 0, 0, 0, 0
}

// Len returns the number of resident entries.
func (p *TinyLFU) Len() int { return p.t.len() }

// Cost returns the total cost of the resident entries.
func (p *TinyLFU) Cost() int64 { return p.t.total }

// Capacity returns the maximum total cost.
func (p *TinyLFU) Capacity() int64 { return p.capacity }

// Contains reports whether key is resident, without recording an access.
func (p *TinyLFU) Contains(key uint64) bool { return p.t.lookup(key) != none }

// WindowCapacity returns the current size of the admission window in cost
// units, as tuned by the hill climber.
func (p *TinyLFU) WindowCapacity() int64 { return p.windowMax }

// Access records a lookup of key. On a hit it counts the key in the
// frequency sketch and refreshes its position; it never allocates. A miss
// records nothing: Admit counts a new key, as Caffeine counts an entry when
// it is added.
func (p *TinyLFU) Access(key uint64) bool {
	i := p.t.lookup(key)
	if i == none {
		return false
	}
	p.sketch.increment(key)
	p.hitsInSample++
	p.touch(i)
	return true
}

// touch moves a resident node as a hit does.
func (p *TinyLFU) touch(i int32) {
	switch p.t.nodes[i].queue {
	case qWindow, qProtected:
		p.t.moveToBack(i)
	case qProbation:
		c := p.t.nodes[i].cost
		if c > p.protMax {
			p.t.moveToBack(i)
			return
		}
		p.t.move(i, qProtected)
		p.demoteFromProtected()
	}
}

// demoteFromProtected moves protected overflow to probation.
func (p *TinyLFU) demoteFromProtected() {
	for n := 0; p.t.listCost[qProtected] > p.protMax && n < queueTransferLimit; n++ {
		i := p.t.front(qProtected)
		if i == none {
			return
		}
		p.t.move(i, qProbation)
	}
}

// Admit inserts key with cost, or updates a resident key's cost, and evicts
// until the total fits. See [Policy] for the contract.
func (p *TinyLFU) Admit(key uint64, cost int64, victims []uint64) ([]uint64, error) {
	victims, _, err := p.AdmitSlot(key, NoSlot, cost, victims)
	return victims, err
}

// AdmitSlot is Admit given key's slot; see [Policy]. An update of a resident
// key whose slot the caller kept never reaches the key index.
func (p *TinyLFU) AdmitSlot(key uint64, slot int32, cost int64, victims []uint64) ([]uint64, int32, error) {
	i := slot
	if !p.t.holds(i, key) {
		i = p.t.lookup(key)
	}
	if err := p.t.roomFor(i, cost, p.capacity); err != nil {
		return victims, i, err
	}
	if i == none {
		p.sizeSketch()
		p.sketch.increment(key)
		p.missesInSample++
		i = p.t.alloc(key, cost)
		p.t.pushBack(qWindow, i)
	} else {
		p.t.setCost(i, cost)
		p.sketch.increment(key)
		p.touch(i)
	}
	victims = p.evict(key, true, victims)
	p.climb()
	// Eviction frees nodes and allocates none, so i holds key unless key
	// was evicted.
	if !p.t.holds(i, key) {
		return victims, NoSlot, ErrRejected
	}
	return victims, i, nil
}

// Remove drops key and reports whether it was resident.
func (p *TinyLFU) Remove(key uint64) bool {
	i := p.t.lookup(key)
	if i == none {
		return false
	}
	p.drop(i)
	return true
}

// drop frees node i.
func (p *TinyLFU) drop(i int32) { p.t.remove(i) }

// Pin protects key from eviction; pins are counted.
func (p *TinyLFU) Pin(key uint64) bool { return p.t.pinNode(p.t.lookup(key)) }

// Unpin releases one pin of key. When the last pin goes, the entry becomes
// evictable again as the most recently used entry of the window.
func (p *TinyLFU) Unpin(key uint64) bool { return p.t.unpinNode(p.t.lookup(key), qWindow) }

// SetCapacity changes the capacity, resets the window to its initial share
// and evicts down to the new capacity.
func (p *TinyLFU) SetCapacity(capacity int64, victims []uint64) ([]uint64, error) {
	if capacity < 0 {
		capacity = 0
	}
	p.setMaximum(capacity)
	p.demoteFromProtected()
	victims = p.evict(0, false, victims)
	if p.t.total > p.capacity {
		return victims, ErrNoRoom
	}
	return victims, nil
}

// evict moves window overflow to probation and then evicts from the main
// space until the cost fits, as Caffeine's evictEntries does. If hasSelf,
// self is the key being admitted and is left out of victims.
func (p *TinyLFU) evict(self uint64, hasSelf bool, victims []uint64) []uint64 {
	candidate := p.evictFromWindow()
	if p.t.total <= p.capacity {
		return victims
	}
	remove := func(i int32) {
		if k := p.t.nodes[i].key; !hasSelf || k != self {
			victims = append(victims, k)
		}
		p.drop(i)
	}
	victimQ, candidateQ := qProbation, qProbation
	victim := p.t.front(qProbation)
	for p.t.total > p.capacity {
		if candidate == none && candidateQ == qProbation {
			candidate = p.t.front(qWindow)
			candidateQ = qWindow
		}
		if candidate == none && victim == none {
			switch victimQ {
			case qProbation:
				victim = p.t.front(qProtected)
				victimQ = qProtected
				continue
			case qProtected:
				victim = p.t.front(qWindow)
				victimQ = qWindow
				continue
			}
			return victims // only pinned entries remain
		}
		switch {
		case victim == none:
			e := candidate
			candidate = p.t.after(candidate)
			remove(e)
		case candidate == none:
			e := victim
			victim = p.t.after(victim)
			remove(e)
		case candidate == victim:
			victim = p.t.after(victim)
			remove(candidate)
			candidate = none
		case p.t.nodes[candidate].cost > p.capacity:
			e := candidate
			candidate = p.t.after(candidate)
			remove(e)
		case p.admit(p.t.nodes[candidate].key, p.t.nodes[victim].key):
			e := victim
			victim = p.t.after(victim)
			remove(e)
			candidate = p.t.after(candidate)
		default:
			e := candidate
			candidate = p.t.after(candidate)
			remove(e)
		}
	}
	return victims
}

// evictFromWindow moves the window's least recently used entries to the
// most recently used end of probation until the window fits, and returns
// the first one moved (the first admission candidate), or none.
func (p *TinyLFU) evictFromWindow() int32 {
	first := none
	for p.t.listCost[qWindow] > p.windowMax {
		i := p.t.front(qWindow)
		if i == none {
			break
		}
		p.t.move(i, qProbation)
		if first == none {
			first = i
		}
	}
	return first
}

// admit reports whether the candidate should replace the victim: when it is
// estimated to be more frequent, or, with probability 1/128, when it is at
// least moderately frequent (so an attacker flooding the victim's counters
// cannot lock a hot candidate out).
func (p *TinyLFU) admit(candidate, victim uint64) bool {
	vf := p.sketch.frequency(victim)
	cf := p.sketch.frequency(candidate)
	if cf > vf {
		return true
	}
	if cf < admitHashDoSFreq {
		return false
	}
	return p.random()&127 == 0
}

// random is xorshift64*.
func (p *TinyLFU) random() uint64 {
	p.rng ^= p.rng >> 12
	p.rng ^= p.rng << 25
	p.rng ^= p.rng >> 27
	return p.rng * 0x2545f4914f6cdd1d
}

// climb adapts the window size: once per sample (as many requests as the
// sketch's reset period) it compares the hit rate with the previous
// sample's. It keeps growing the window while the hit rate gains more than
// climberTolerance standard errors, and keeps shrinking it unless the hit
// rate loses more than that; otherwise it reverses. The step decays, and
// restarts at full size when the hit rate moves by more than climberRestart.
func (p *TinyLFU) climb() {
	p.determineAdjustment()
	p.demoteFromProtected()
	switch a := p.adjustment; {
	case a > 0:
		p.increaseWindow()
	case a < 0:
		p.decreaseWindow()
	}
}

func (p *TinyLFU) determineAdjustment() {
	requests := p.hitsInSample + p.missesInSample
	if requests < p.sketch.sampleSize {
		return
	}
	hitRate := float64(p.hitsInSample) / float64(requests)
	change := hitRate - p.prevHitRate
	tolerance := 0.0
	if p.prevRequests > 0 {
		tolerance = climberTolerance * rateDiffError(hitRate, requests, p.prevHitRate, p.prevRequests)
	}
	amount := p.stepSize
	if growing := p.stepSize > 0; growing && change <= tolerance || !growing && change < -tolerance {
		amount = -amount
	}
	next := climberStepDecay * amount
	if math.Abs(change) >= climberRestart {
		next = climberStepPercent * float64(p.capacity)
		if amount < 0 {
			next = -next
		}
	}
	p.prevHitRate, p.prevRequests = hitRate, requests
	p.adjustment = int64(amount)
	p.stepSize = next
	p.hitsInSample, p.missesInSample = 0, 0
}

// rateDiffError is the standard error of the difference between two hit
// rates measured over n1 and n2 requests (binomial, pooled).
func rateDiffError(r1 float64, n1 int64, r2 float64, n2 int64) float64 {
	m := (r1 + r2) / 2
	return math.Sqrt(m * (1 - m) * (1/float64(n1) + 1/float64(n2)))
}

// increaseWindow grows the window by up to adjustment, taking the space from
// the protected segment and moving main entries into the window.
func (p *TinyLFU) increaseWindow() {
	if p.protMax == 0 {
		return
	}
	quota := min(p.adjustment, p.protMax)
	p.protMax -= quota
	p.windowMax += quota
	p.demoteFromProtected()
	for range queueTransferLimit {
		i := p.t.front(qProbation)
		if i == none || quota < p.t.nodes[i].cost {
			i = p.t.front(qProtected)
		}
		if i == none {
			break
		}
		c := p.t.nodes[i].cost
		if quota < c {
			break
		}
		quota -= c
		p.t.move(i, qWindow)
	}
	p.protMax += quota
	p.windowMax -= quota
	p.adjustment = quota
}

// decreaseWindow shrinks the window by up to -adjustment, moving window
// entries to probation and the space to the protected segment.
func (p *TinyLFU) decreaseWindow() {
	if p.windowMax <= 1 {
		return
	}
	quota := min(-p.adjustment, max(0, p.windowMax-1))
	p.protMax += quota
	p.windowMax -= quota
	for range queueTransferLimit {
		i := p.t.front(qWindow)
		if i == none {
			break
		}
		c := p.t.nodes[i].cost
		if quota < c {
			break
		}
		quota -= c
		p.t.move(i, qProbation)
	}
	p.protMax -= quota
	p.windowMax += quota
	p.adjustment = -quota
}

// sizeSketch keeps the sketch sized for the entries the cache holds when
// full, as Caffeine sizes it for its maximum entry count. Where costs are
// bytes, a cache holds far fewer entries than its capacity, and a sketch
// sized for the capacity ages its counts over ten times that many
// requests: long after they stopped saying what is popular (a 250-entry
// cache of 40-byte entries lost 1.6 points of hit ratio on the oltp trace
// to it). So once the cache is half full, its entry count at full is
// estimated from the mean cost so far and a larger sketch is folded down
// to it; it grows only toward that estimate, which is made again if the
// entries come to twice as many. Where every cost is 1 the estimate is the
// capacity, and nothing changes.
func (p *TinyLFU) sizeSketch() {
	n := int64(p.t.len())
	if (!p.estimated && p.t.total >= p.capacity/2 && n > 0) || (p.estimated && n >= 2*p.expected) {
		p.estimated = true
		p.expected = max(1, min(p.capacity, int64(float64(n)*float64(p.capacity)/float64(max(p.t.total, 1)))))
		if p.sketch.capacity > p.expected {
			p.sketch.fold(p.expected)
		}
	}
	if n >= p.sketch.capacity && p.sketch.capacity < p.expected {
		p.sketch.ensureCapacity(min(p.expected, 2*n))
	}
}
