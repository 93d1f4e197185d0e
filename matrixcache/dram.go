package matrixcache

import (
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/policy"
)

// The DRAM tier's read path takes no lock. Each shard keeps its entries in a
// concurrent map that readers load from without writing shared memory, and
// readers tell the replacement policy about their hits through a lossy
// buffer that whoever next holds the shard's lock drains, as Caffeine and
// otter do. Every change of the map, the policy or an entry's mutable fields
// happens under the shard's mutex.

// A shard's read buffer is readStripes rings of stripeLen slots. A hit
// picks a ring at random, so two cores reading the same hot keys seldom
// write the same cache lines. A hit recorded while its ring is full and the
// shard's lock is busy is dropped (records are hints to the policy; the hit
// counters stay exact). Powers of two.
const (
	readStripes = 4
	stripeLen   = 16
)

// readStripe is one ring of entries hit without the lock. head counts the
// hits ever recorded in it (so the stripes' heads sum to the shard's
// lock-free hits) and tail those drained: it is full when head-tail reaches
// stripeLen. Padded to its own cache lines.
type readStripe struct {
	head atomic.Uint64
	tail atomic.Uint64
	// A record is a key's hash and its policy slot, written apart: a
	// torn pair fails the policy's slot check and falls back to the
	// hash, so it costs a lookup, never a wrong hit.
	hashes [stripeLen]atomic.Uint64
	slots  [stripeLen]atomic.Int32
	_      [48]byte
}

type readBuffer struct {
	stripes [readStripes]readStripe
}

// hits is the number of lock-free hits recorded.
func (b *readBuffer) hits() int64 {
	var n uint64
	for i := range b.stripes {
		n += b.stripes[i].head.Load()
	}
	return int64(n)
}

type shard struct {
	// Written by lock-free readers.
	reads readBuffer
	// hits counts the DRAM hits of the locked read path.
	hits   atomic.Int64
	putSeq atomic.Uint64

	mu       sync.Mutex
	m        *index
	pol      policy.Policy
	capacity int64
	victims  []uint64
}

func newShard(capacity int64, pol policy.Policy) *shard {
	return &shard{m: newIndex(), pol: pol, capacity: capacity}
}

// entry is a DRAM entry. key, value, kind and expiresAt never change once
// the entry is in the map, so lock-free readers may read them; the other
// fields change under the shard's lock only.
type entry struct {
	key       blockfmt.Key
	value     []byte
	expiresAt int64
	pin       *pinRef
	// hotness is raised by hits, locked or not (see bumpHotness).
	hotness atomic.Uint32
	// slot is where the policy keeps the key (policy.Policy Slot), so a
	// drained hit skips the policy's index.
	slot int32
	kind blockfmt.Kind
	// persisted and inResident say the SSD and resident tiers hold this
	// value, so evicting it writes it to neither again.
	persisted  bool
	inResident bool
	// The fields are ordered so that an entry takes 112 bytes, not 128.
}

func newEntry(key blockfmt.Key, value []byte, kind blockfmt.Kind, hotness uint8, expiresAt int64, slot int32) *entry {
	e := &entry{key: key, value: value, kind: kind, expiresAt: expiresAt, slot: slot}
	e.hotness.Store(uint32(hotness))
	return e
}

// hot is the entry's hotness as the admission decision takes it.
func (e *entry) hot() uint8 { return uint8(min(e.hotness.Load(), 255)) }

// pinRef counts the pins of one resident entry, across overwrites of its
// key. live is false once the entry has left the policy (so its pins have).
type pinRef struct {
	n    int
	live bool
}

func (e *entry) expired(now int64) bool { return e.expiresAt != 0 && e.expiresAt <= now }
func (e *entry) pinned() bool           { return e.pin != nil && e.pin.n > 0 }

func entryCost(k blockfmt.Key, n int) int64 { return int64(k.Size() + n) }

// clockReading reads the clock at most once, and only when asked: most
// entries have no TTL, and a clock read costs as much as a DRAM hit.
type clockReading struct {
	c  *Cache
	ns int64
}

func (r *clockReading) now() int64 {
	if r.ns == 0 {
		r.ns = r.c.now()
	}
	return r.ns
}

// expiredAt reports whether e has expired at the reading's time.
func (e *entry) expiredAt(r *clockReading) bool {
	return e.expiresAt != 0 && e.expiresAt <= r.now()
}

// loadLive returns key's live DRAM entry in s without locking, or nil when
// the key is absent, shares its hash with another key, or has expired (the
// caller's locked path then counts and drops it).
func (c *Cache) loadLive(s *shard, h uint64, key blockfmt.Key) *entry {
	e := s.m.load(h)
	if e == nil || e.key != key {
		return nil
	}
	if e.expiresAt != 0 && e.expiresAt <= c.now() {
		return nil
	}
	return e
}

// recordHit counts a lock-free hit of e (under hash h), raises its
// hotness, and records the hit for the policy; the hit that fills its ring
// drains the buffer. The drain then needs the policy's node only, not the
// entry, which has likely left the processor's cache by then.
func (c *Cache) recordHit(s *shard, h uint64, e *entry, r uint32) {
	c.bumpHotness(e)
	st := &s.reads.stripes[r%readStripes]
	w := st.head.Add(1) - 1
	if used := w - st.tail.Load(); used < stripeLen {
		st.hashes[w%stripeLen].Store(h)
		st.slots[w%stripeLen].Store(e.slot)
		if used != stripeLen-1 {
			return
		}
	}
	if s.mu.TryLock() {
		c.drainLocked(s)
		s.mu.Unlock()
	}
}

// drainLocked tells the policy about the hits recorded in s's read buffer.
// Writes and misses do not drain: a drain is up to 64 policy updates, each
// a few cache misses, and a write holding the shard's lock that long makes
// the other writers of the shard queue. A full ring is drained by the next
// hit that finds the lock free, and Stats drains.
func (c *Cache) drainLocked(s *shard) {
	for k := range s.reads.stripes {
		st := &s.reads.stripes[k]
		tail, head := st.tail.Load(), st.head.Load()
		if head == tail {
			continue
		}
		// Records reserved past tail+stripeLen found the ring full and were
		// dropped; a record reserved but not yet written is lost (hints).
		for i := tail; i < min(head, tail+stripeLen); i++ {
			h := st.hashes[i%stripeLen].Swap(0)
			if h == 0 {
				continue
			}
			// A key that left DRAM is no longer in the policy.
			s.pol.AccessSlot(h, st.slots[i%stripeLen].Load())
		}
		st.tail.Store(head)
	}
}

// lookupLocked returns key's DRAM entry in s, or nil.
func (s *shard) lookupLocked(h uint64, k blockfmt.Key) *entry {
	if e := s.m.load(h); e != nil && e.key == k {
		return e
	}
	return nil
}

// dropLocked removes e (resident under h) from DRAM: its pins go with it.
func (s *shard) dropLocked(h uint64, e *entry) {
	s.pol.Remove(h)
	s.m.delete(h)
	if e.pin != nil {
		e.pin.live = false
	}
}

// hashKey is the in-process hash of a key: it picks the DRAM shard and is
// the policy's key. Entries compare whole keys, so a collision costs a
// shared slot, never a wrong value. It is not persisted anywhere. The record
// gets xxhash; the namespace and selector, short and drawn from few values,
// get FNV-1a, which costs less than a second xxhash call.
func hashKey(k blockfmt.Key) uint64 {
	h := xxhash.Sum64String(k.Record) ^ k.Shard*0x9e3779b97f4a7c15
	h = fnv1a(h, k.Namespace)
	h = fnv1a(h^0xff, k.Selector) // 0xff separates ("ab","c") from ("a","bc")
	if h = fmix64(h); h == 0 {
		return 1 // the index keeps 0 for unused slots
	}
	return h
}

func fnv1a(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 0x100000001b3
	}
	return h
}

// fmix64 is MurmurHash3's 64-bit finaliser.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
