package ssdtier

import (
	"math/rand/v2"
	"sync"
	"time"
)

// budget is the write budget: a token bucket of one second of bytes with
// random admission in proportion to how full it is.
type budget struct {
	mu     sync.Mutex
	rate   float64 // bytes per second
	tokens float64
	last   time.Time
	rnd    *rand.Rand
}

func newBudget(bytesPerSec int64, src rand.Source, now time.Time) *budget {
	if bytesPerSec == 0 {
		return nil
	}
	return &budget{rate: float64(bytesPerSec), tokens: float64(bytesPerSec), last: now, rnd: rand.New(src)}
}

// admit reports whether a write of n bytes fits, and takes its cost if so.
// A nil budget admits everything.
func (b *budget) admit(now time.Time, n int) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if el := now.Sub(b.last); el > 0 {
		b.tokens = min(b.rate, b.tokens+el.Seconds()*b.rate)
		b.last = now
	}
	cost := float64(n)
	if b.tokens < cost {
		return false
	}
	if fill := b.tokens / b.rate; fill < 1 && b.rnd.Float64() >= fill {
		return false
	}
	b.tokens -= cost
	return true
}
