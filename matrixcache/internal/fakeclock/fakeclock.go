// Package fakeclock is a manually advanced clock for the cache's tests: TTL
// and expiry behaviour is checked by moving time, not by sleeping.
package fakeclock

import (
	"sync"
	"time"
)

// Clock reports a time that only Advance changes. It is safe for
// concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock set to a fixed instant (2023-11-14 22:13:20 UTC).
func New() *Clock { return &Clock{now: time.Unix(1_700_000_000, 0)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
