package matrixcache

import (
	"sync"
	"sync/atomic"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// EvictionCause says why an entry left a tier.
type EvictionCause uint8

// Eviction causes, with the original's names.
const (
	// EvictionEvicted: the tier gave the entry up to make room (a write, a
	// refill or a capacity change).
	EvictionEvicted EvictionCause = iota + 1
	// EvictionExpired: the entry's TTL had passed when the cache found it,
	// as a victim, on a read or in PurgeExpired.
	EvictionExpired
)

// String returns the cause's name.
func (c EvictionCause) String() string {
	switch c {
	case EvictionEvicted:
		return "evicted"
	case EvictionExpired:
		return "expired"
	default:
		return "unknown"
	}
}

// EvictionEvent is one entry that left a tier, as Options.OnEvict receives
// it.
type EvictionEvent struct {
	Key blockfmt.Key
	// Value is the entry's value. It is the cache's own buffer, which is
	// never written again: read it, keep it, never modify it.
	Value []byte
	// Tier is the tier the entry left: TierDRAM or TierResident.
	Tier  Tier
	Cause EvictionCause
	// Demoted says the value was written to a lower tier as it left (a
	// DRAM victim demoted to the resident or SSD tier), so the cache
	// still holds it.
	Demoted bool
}

// AccessOp is the operation of an AccessRecord. The numeric values are
// the original's (Put 1, Get 2, Delete 3).
type AccessOp uint8

// Access operations.
const (
	AccessPut    AccessOp = 1
	AccessGet    AccessOp = 2
	AccessDelete AccessOp = 3
)

// String returns the operation's name.
func (o AccessOp) String() string {
	switch o {
	case AccessPut:
		return "put"
	case AccessGet:
		return "get"
	case AccessDelete:
		return "delete"
	default:
		return "unknown"
	}
}

// AccessRecord is one access the cache reports to the function given to
// SetAccessRecorder.
type AccessRecord struct {
	Op  AccessOp
	Key blockfmt.Key
	// Found: for a Get, some tier answered; for a Delete, some tier held
	// the key; for a Put, always true.
	Found bool
	// Tier answered a Get (TierNone on a miss); TierNone otherwise.
	Tier Tier
}

// SetAccessRecorder makes the cache call fn after every Put (and
// CompareAndSwap that replaced the value), Get,
// GetShared, Acquire (ErrNotFound is a Get that found nothing) and Delete,
// and so for each position of GetBatch and PutBatch and each distinct key
// of DeleteBatch. Peek, DeletePrefix, DeleteShard and PurgeExpired are not
// recorded, nor is a call that fails with an error.
//
// fn runs on the caller's goroutine after the operation, with no lock of
// the cache held, so it may call the cache; it must be safe for concurrent
// use. nil stops the records. It may be called at any time, also while
// other goroutines use the cache; a call in flight may still use the
// previous fn. Without a recorder an access costs one atomic load.
func (c *Cache) SetAccessRecorder(fn func(AccessRecord)) {
	if fn == nil {
		c.onAccess.Store(nil)
		return
	}
	c.onAccess.Store(&fn)
}

// recordAccess reports an access to the recorder, if there is one.
func (c *Cache) recordAccess(op AccessOp, key blockfmt.Key, found bool, tier Tier) {
	if f := c.onAccess.Load(); f != nil {
		(*f)(AccessRecord{Op: op, Key: key, Found: found, Tier: tier})
	}
}

// SetEvictionCallback replaces the function that receives eviction events
// (initially Options.OnEvict); nil stops them. See Options.OnEvict for
// what it receives and when.
func (c *Cache) SetEvictionCallback(fn func(EvictionEvent)) {
	if fn == nil {
		c.onEvict.Store(nil)
		return
	}
	c.onEvict.Store(&fn)
}

// evictions queues eviction events, found under a shard's lock, until the
// operation that found them has released it, and delivers them one at a
// time: the callback never runs under a lock of the cache, nor on two
// goroutines at once, and sees each shard's events in the order they
// happened.
type evictions struct {
	mu    sync.Mutex
	queue []EvictionEvent
	// pending is len(queue), read without mu: with no callback it is
	// never written, so checking it costs an uncontended load.
	pending atomic.Int64
	deliver sync.Mutex // held by the goroutine delivering
	n       atomic.Int64
}

// wantEvictions reports whether an eviction callback is registered, so
// that the caller builds events only then.
func (c *Cache) wantEvictions() bool { return c.onEvict.Load() != nil }

// evicted queues an event for delivery by deliverEvictions.
func (c *Cache) evicted(ev EvictionEvent) {
	c.ev.mu.Lock()
	c.ev.queue = append(c.ev.queue, ev)
	c.ev.pending.Add(1)
	c.ev.mu.Unlock()
}

// residentEvicted is the resident tier's OnEvict: its victims are dropped
// (see evictLocked), and reported.
func (c *Cache) residentEvicted(b blockfmt.Block) {
	if c.wantEvictions() {
		c.evicted(EvictionEvent{Key: b.Key, Value: b.Value, Tier: TierResident, Cause: EvictionEvicted})
	}
}

// deliverEvictions calls the eviction callback with the queued events. It
// must be called with no lock of the cache held: no shard lock, and not
// between enter and exit (a callback calling the cache while Close waits
// would deadlock on life). If another goroutine is
// delivering (or the callback itself called the cache), that goroutine
// delivers these events too.
func (c *Cache) deliverEvictions() {
	for {
		if c.ev.pending.Load() == 0 || !c.ev.deliver.TryLock() {
			return
		}
		for {
			c.ev.mu.Lock()
			batch := c.ev.queue
			c.ev.queue = nil
			c.ev.pending.Store(0)
			c.ev.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			for _, ev := range batch {
				// Events queued before the callback was cleared are
				// dropped with it.
				if f := c.onEvict.Load(); f != nil {
					(*f)(ev)
					c.ev.n.Add(1)
				}
			}
		}
		c.ev.deliver.Unlock()
		// An event queued while this goroutine held deliver, by a caller
		// whose TryLock failed, is seen by the check at the loop's top.
	}
}
