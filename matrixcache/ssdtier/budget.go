package ssdtier

import (
	"math/bits"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
)

// MaxBudgetShare is the full admission share of the write budget: a share
// of MaxBudgetShare admits every block. [Stats].BudgetShare is out of it.
const MaxBudgetShare = 10_000

// budgetWindow is the length of a measuring window: the share is adjusted
// once per window, from the bytes written in it. It is one second, so bytes
// per window are bytes per second.
const budgetWindow = time.Second

// budget is the write budget: CacheLib's dynamic random admission, with
// the random draw replaced by a hash of the key so a key's fate does not
// flicker from one write to the next (see [Options.WriteBytesPerSec]).
//
// It is consulted on every Put, so it is one short critical section and
// allocates nothing. It also measures the write rate when there is no
// target, so an operator can see what a target would have to allow.
type budget struct {
	target int64 // bytes per window (= per second); 0 is unlimited. Never changes.

	mu    sync.Mutex
	share int64     // 1..MaxBudgetShare
	start time.Time // start of the open window
	cur   int64     // bytes recorded in the open window
	last  int64     // bytes of the last closed window
}

func newBudget(bytesPerSec int64, now time.Time) *budget {
	return &budget{
		target: bytesPerSec,
		share:  MaxBudgetShare,
		start:  now,
	}
}

// shareAt closes the windows that ended by now and returns the admission
// share.
func (b *budget) shareAt(now time.Time) int64 {
	if b.target == 0 {
		return MaxBudgetShare // nothing to adjust: skip the lock
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(now)
	return b.share
}

// record counts n bytes physically written at now.
func (b *budget) record(now time.Time, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(now)
	b.cur += n
}

// stats returns the share and the observed rate as of now.
func (b *budget) stats(now time.Time) (share, observedPerSec int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(now)
	return b.share, b.last // the window is one second
}

// roll closes every window that ended by now. A now before the open
// window's start (a clock read before another caller rolled) counts in
// the open window.
func (b *budget) roll(now time.Time) {
	el := now.Sub(b.start)
	if el < budgetWindow {
		return
	}
	n := el / budgetWindow
	b.start = b.start.Add(n * budgetWindow)
	b.adjust(b.cur)
	b.last, b.cur = b.cur, 0
	if n == 1 {
		return
	}
	// The windows after it were quiet. Each doubles the share, so the loop
	// ends within 14 rounds however long the store was idle.
	b.last = 0
	for i := time.Duration(1); i < n && b.share < MaxBudgetShare; i++ {
		b.adjust(0)
	}
}

// adjust sets the share from the bytes written in a closed window: at or
// under the target it doubles, over it shrinks by target/written, but
// never to 0, so the budget keeps a trickle of writes to measure and a
// share to double from.
func (b *budget) adjust(written int64) {
	switch {
	case b.target == 0:
	case written <= b.target:
		b.share = min(2*b.share, MaxBudgetShare)
	default:
		// share*target/written in 128 bits: share*target overflows int64
		// for targets above about 900 TB/s, and float rounding could
		// round a floor up. hi < written because target < written, so
		// Div64 cannot panic.
		hi, lo := bits.Mul64(uint64(b.share), uint64(b.target))
		q, _ := bits.Div64(hi, lo, uint64(written))
		b.share = max(int64(q), 1)
	}
}

// admitsHash reports whether a block whose key hashes to h is admitted at
// share. The high half of the hash picks one of MaxBudgetShare buckets,
// and the first share buckets are admitted: the decision depends on the
// key alone, and a key admitted at one share is admitted at any larger
// one.
func admitsHash(h uint64, share int64) bool {
	return (h>>32)%MaxBudgetShare < uint64(share)
}

// admitsKey is admitsHash of the xxhash of an ordered key. It skips the
// hash when everything is admitted.
func admitsKey(orderedKey []byte, share int64) bool {
	return share >= MaxBudgetShare || admitsHash(xxhash.Sum64(orderedKey), share)
}
