package matrixcache

import (
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/policy"
)

// The DRAM tier's read path takes no lock. Each shard keeps its entries in a
// concurrent map that readers load from without writing shared memory, and
// readers tell the replacement policy about their hits through a lossy
// buffer that whoever next holds the shard's lock drains, as Caffeine and
// otter do. Every change of the map, the policy or an entry's mutable fields
// happens under the shard's mutex.

// A shard's read buffer is readStripes rings of stripeLen slots. A hit goes
// to its goroutine's ring (stackStripe), so two cores reading the same hot
// keys seldom write the same cache lines. A hit recorded while its ring is
// full and the shard's lock is busy is dropped (records are hints to the
// policy; the hit counters stay exact). Powers of two.
const (
	readStripesLog2 = 3
	readStripes     = 1 << readStripesLog2
	stripeLen       = 16
)

// readStripe is one ring of entries hit without the lock. head counts the
// hits ever recorded in it (so the stripes' heads sum to the shard's
// lock-free hits) and tail those drained: it is full when head-tail reaches
// stripeLen. Padded to its own cache lines.
type readStripe struct {
	head atomic.Uint64
	tail atomic.Uint64
	// hits counts the lock-free hits through the ring, recorded or not.
	hits atomic.Uint64
	// A record is a key's hash and its policy slot, written apart: a
	// torn pair fails the policy's slot check and falls back to the
	// hash, so it costs a lookup, never a wrong hit.
	hashes [stripeLen]atomic.Uint64
	slots  [stripeLen]atomic.Int32
	// shared is set when a hit's reservation found another one made
	// between its look at head and its own: two goroutines write this
	// ring, which a drain takes as concurrent reads (see shard.sampled).
	shared atomic.Bool
	// drainedHits is hits at the last hit-driven drain (under the shard's
	// lock; see drainShard).
	drainedHits uint64
	_           [24]byte
}

type readBuffer struct {
	stripes [readStripes]readStripe
}

// hits is the number of lock-free hits.
func (b *readBuffer) hits() int64 {
	var n uint64
	for i := range b.stripes {
		n += b.stripes[i].hits.Load()
	}
	return int64(n)
}

type shard struct {
	// Read by every lock-free hit, and written seldom, so they share a
	// line with nothing that writers or the lock touch: m (set once) and
	// sampled, which drains set when it changes. First, so that the nil
	// check of a shard pointer loads this line, which the hit reads
	// anyway, and not a ring another core writes.
	m *index
	// sampled is set while goroutines read the shard at once (see
	// drainShard). The policy is then told of a sample of the lock-free
	// hits, as Caffeine's and otter's lossy read buffers do: a full ring
	// is drained by one hit in sampledDrainHits of its goroutine and the
	// records of the others are dropped, so the hit path mostly skips the
	// policy's work, about 65 ns a record. A reader alone has every record
	// drained, so a single-goroutine replay stays exact.
	sampled atomic.Bool
	_       [48]byte
	// Written by lock-free readers.
	reads readBuffer
	// hits counts the DRAM hits of the locked read path.
	hits   atomic.Int64
	putSeq atomic.Uint64

	mu       sync.Mutex
	pol      policy.Policy
	capacity int64
	// recorded counts the lock-free hits drained to the policy.
	recorded int64
	// aloneDrains counts the drains in a row that found one ring, while
	// sampled (see drainShard).
	aloneDrains int
	victims     []uint64
	// names interns keys' namespaces and selectors (see keyNames).
	names map[keyNames]*keyNames
	// pins holds the pin counts of pinned keys, by hash.
	pins map[uint64]*pinRef
	// expiring holds the entries with a TTL by expiry (see expiry.go).
	expiring expiryHeap
}

func newShard(capacity int64, pol policy.Policy) *shard {
	return &shard{
		m: newIndex(), pol: pol, capacity: capacity,
		names: map[keyNames]*keyNames{}, pins: map[uint64]*pinRef{},
	}
}

// entry is a DRAM entry: 64 bytes, one cache line (the allocator aligns
// that size class to 64), holding everything a hit reads and writes, so a
// hit costs one cache miss for the entry. The namespace and selector live in
// a keyNames the shard interns, since most keys share a few of them; the
// value is kept as a pointer and a length (it is never resliced). Pins,
// which few entries have, are in the shard's pins map.
//
// record, shard, names, the value and expiresAt never change once the entry
// is in the map, so lock-free readers may read them; the other fields
// change under the shard's lock only.
type entry struct {
	record string
	shard  uint64
	names  *keyNames
	vptr   *byte
	vlen   uint32
	// state is the hotness, raised by hits, locked or not, and stopping
	// at hotnessMask (see recordHit).
	state     atomic.Uint32
	expiresAt int64
	// slot is where the policy keeps the key (policy.Policy Slot), so a
	// drained hit skips the policy's index.
	slot int32
	kind blockfmt.Kind
	// persisted and inResident say the SSD and resident tiers hold this
	// value, so evicting it writes it to neither again.
	persisted  bool
	inResident bool
}

// keyNames is the namespace and selector of a key.
type keyNames struct{ namespace, selector string }

// maxInternedNames bounds the keyNames a shard interns; keys beyond it get a
// keyNames of their own, which costs them an allocation and a cache miss
// per hit, but never a wrong answer.
const maxInternedNames = 1024

// newEntryLocked returns an entry for key in s, interning its names.
func (s *shard) newEntryLocked(key blockfmt.Key, value []byte, kind blockfmt.Kind, hotness uint8, expiresAt int64, slot int32) *entry {
	e := &entry{
		record: key.Record, shard: key.Shard, names: s.internLocked(key.Namespace, key.Selector),
		vptr: unsafe.SliceData(value), vlen: uint32(len(value)),
		kind: kind, expiresAt: expiresAt, slot: slot,
	}
	e.state.Store(uint32(hotness))
	return e
}

func (s *shard) internLocked(namespace, selector string) *keyNames {
	if n := s.names[keyNames{namespace, selector}]; n != nil {
		return n
	}
	if len(s.names) >= maxInternedNames {
		return &keyNames{namespace, selector}
	}
	n := &keyNames{staticName(namespace), staticName(selector)}
	s.names[*n] = n
	return n
}

// staticName returns s as the string constant of the same bytes when it is
// a name the key constructors use, so that an interned name shares its bytes
// with callers using the constant and comparing them finds equal pointers
// at once; any other name is copied, so that an interned name never keeps a
// caller's larger buffer alive.
func staticName(s string) string {
	for _, c := range [...]string{
		blockfmt.NamespaceString, blockfmt.NamespaceHash, blockfmt.NamespaceSet,
		blockfmt.NamespaceFeature, blockfmt.NamespacePage, blockfmt.NamespaceIndex,
		blockfmt.NamespaceOplog, "value", "members",
	} {
		if s == c {
			return c
		}
	}
	return strings.Clone(s)
}

// key is the entry's key.
func (e *entry) key() blockfmt.Key {
	return blockfmt.Key{Shard: e.shard, Record: e.record, Namespace: e.names.namespace, Selector: e.names.selector}
}

// matches reports whether the entry's key is k.
func (e *entry) matches(k blockfmt.Key) bool {
	return e.record == k.Record && e.shard == k.Shard && e.names.namespace == k.Namespace && e.names.selector == k.Selector
}

// value is the entry's value buffer, shared with readers.
func (e *entry) value() []byte { return unsafe.Slice(e.vptr, e.vlen) }

// hot is the entry's hotness as the admission decision takes it.
func (e *entry) hot() uint8 { return uint8(e.state.Load()) }

// pinRef counts the pins of one resident key, across overwrites of it. live
// is false once the key has left the policy (so its pins have).
type pinRef struct {
	n    int
	live bool
}

// pinnedLocked reports whether the DRAM entry under h is pinned.
func (s *shard) pinnedLocked(h uint64) bool {
	p := s.pins[h]
	return p != nil && p.n > 0
}

// forgetPinsLocked ends the pins of the key under h, which left DRAM.
func (s *shard) forgetPinsLocked(h uint64) {
	if p := s.pins[h]; p != nil {
		p.live = false
		delete(s.pins, h)
	}
}

func (e *entry) expired(now int64) bool { return e.expiresAt != 0 && e.expiresAt <= now }

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
	if e == nil || !e.matches(key) {
		return nil
	}
	if e.expiresAt != 0 && e.expiresAt <= c.now() {
		return nil
	}
	return e
}

// recordHit counts a lock-free hit of e (under hash h), raises its
// hotness, and records the hit for the policy. A reader alone has every
// hit recorded, so the policy sees what a single-goroutine replay of the
// policy sees (the hit ratios of the benchmark). While the shard samples,
// an entry at sampledHotCeiling is not written at all, so the cores reading
// it keep sharing its line, and its hits go to the ring, which is full but
// for a few records a drain: the policy then sees hot entries in
// proportion to their hits. The hit that fills its ring drains the buffer;
// the drain then needs the policy's node only.
func (c *Cache) recordHit(s *shard, st *readStripe, h uint64, e *entry) {
	n := st.hits.Add(1)
	sampled := s.sampled.Load()
	// Sampling, one hit in sampledDrainHits of the ring drains, recorded
	// or not.
	drainDue := sampled && n&(sampledDrainHits-1) == 0
	ceiling := uint32(hotnessMask)
	if sampled {
		ceiling = c.sampledHotCeiling
	}
	c.raiseHotness(e, ceiling)
	// A full ring is not written again before a drain: under sampling it
	// stays full between drains, and its hits then cost two loads.
	if head := st.head.Load(); head-st.tail.Load() < stripeLen {
		w := st.head.Add(1) - 1
		if w != head && !st.shared.Load() {
			st.shared.Store(true)
		}
		if used := w - st.tail.Load(); used < stripeLen {
			st.hashes[w%stripeLen].Store(h)
			st.slots[w%stripeLen].Store(e.slot)
			if used != stripeLen-1 && !sampled {
				return
			}
		}
	}
	// Alone, the hit that fills the ring drains (or the next, if the lock
	// was busy).
	if !sampled || drainDue {
		c.drainShard(s)
	}
}

// drainShard drains s's read buffer unless its lock is busy, and decides
// whether s samples: two rings or more hit since the last such drain
// (recorded or not: deduplicated hits leave no record), or a ring two
// goroutines wrote, mean goroutines reading at once; one ring, a reader
// alone. Only hits' drains look: one by Stats says nothing of who reads.
func (c *Cache) drainShard(s *shard) {
	if !s.mu.TryLock() {
		return
	}
	active, shared := 0, false
	for k := range s.reads.stripes {
		st := &s.reads.stripes[k]
		if st.shared.Load() {
			shared = true
			st.shared.Store(false)
		}
		if n := st.hits.Load(); n != st.drainedHits {
			st.drainedHits = n
			active++
		}
	}
	c.drainLocked(s)
	switch {
	case active > 1 || shared:
		s.aloneDrains = 0
		if !s.sampled.Load() {
			s.sampled.Store(true)
		}
	case s.sampled.Load():
		// Sampling ends after aloneDrainsToExact drains in a row find one
		// ring: two goroutines sharing a ring look alone while it is full
		// and unwritten, and are caught again (a raced reservation) only
		// once it is written.
		if s.aloneDrains++; s.aloneDrains >= aloneDrainsToExact {
			s.aloneDrains = 0
			s.sampled.Store(false)
		}
	}
	s.mu.Unlock()
}

// aloneDrainsToExact is how many drains in a row must find one ring alone
// before a sampling shard records every hit again.
const aloneDrainsToExact = 4

// sampledDrainHits is how many hits of a ring, in a sampling shard, come
// to one drain: at most readStripes*stripeLen records reach the policy per
// that many hits of each ring (a power of two).
const sampledDrainHits = 1024

// stackStripe picks the read ring of the calling goroutine from the address
// of its stack: the same ring on every hit while the goroutine runs, and
// mostly different rings for goroutines running at once, so each core
// keeps writing cache lines it already owns. A stack that grows moves, and
// its goroutine with it to another ring, which is harmless.
func stackStripe() uint64 {
	var x byte
	a := uint64(uintptr(unsafe.Pointer(&x))) >> 11 // below 2 KiB: call depth, not goroutine
	return (a * 0x9e3779b97f4a7c15) >> (64 - readStripesLog2)
}

// An entry's state word is its hotness, 0 to hotnessMask; minHotCeiling
// is one more than the policy's frequency counters hold, the least
// sampledHotCeiling.
const (
	hotnessMask   = 0xff
	minHotCeiling = 16
)

// drainLocked tells the policy about the hits recorded in s's read buffer.
// Writes and misses do not drain: a drain is up to 128 policy updates,
// each a few cache misses, and a write holding the shard's lock that long
// makes the other writers of the shard queue. A full ring is drained by the
// next hit that finds the lock free (one hit in sampledDrainHits while
// sampling), and Stats drains.
func (c *Cache) drainLocked(s *shard) {
	for k := range s.reads.stripes {
		st := &s.reads.stripes[k]
		tail, head := st.tail.Load(), st.head.Load()
		if head == tail {
			continue
		}
		// Records reserved past tail+stripeLen found the ring full and were
		// dropped; a record reserved but not yet written is lost (hints).
		// Such a slot still holds an older record, which the policy takes as
		// one more hit of a key hit recently: a hint either way.
		for i := tail; i < min(head, tail+stripeLen); i++ {
			h := st.hashes[i%stripeLen].Load()
			if h == 0 {
				continue
			}
			// A key that left DRAM is no longer in the policy.
			s.pol.AccessSlot(h, st.slots[i%stripeLen].Load())
			s.recorded++
		}
		st.tail.Store(head)
	}
}

// lookupLocked returns key's DRAM entry in s, or nil.
func (s *shard) lookupLocked(h uint64, k blockfmt.Key) *entry {
	if e := s.m.load(h); e != nil && e.matches(k) {
		return e
	}
	return nil
}

// dropLocked removes e (resident under h) from DRAM: its pins go with it.
func (s *shard) dropLocked(h uint64, e *entry) {
	s.pol.Remove(h)
	s.m.delete(h)
	s.forgetPinsLocked(h)
}

// hashKey is the in-process hash of a key: it picks the DRAM shard and is
// the policy's key. Entries compare whole keys, so a collision costs a
// shared slot, never a wrong value. It is not persisted anywhere. The
// record, namespace and selector each go through mixName, inline, where a
// call to xxhash's assembly costs more for the short records most keys
// have.
func hashKey(k blockfmt.Key) uint64 {
	h := mixName(k.Shard*0x9e3779b97f4a7c15, k.Record) ^ namesHash(k.Namespace, k.Selector)
	if h = fmix64(h); h == 0 {
		return 1 // the index keeps 0 for unused slots
	}
	return h
}

// namesHash is the hash of a key's namespace and selector, folded into the
// record's by hashKey. cachekey.String's names, the constants themselves (the
// same bytes, so a pointer comparison tells), take a precomputed value:
// most keys are strings', and hashing their names cost a third of a hash.
func namesHash(namespace, selector string) uint64 {
	if unsafe.StringData(namespace) == unsafe.StringData(blockfmt.NamespaceString) && len(namespace) == len(blockfmt.NamespaceString) &&
		unsafe.StringData(selector) == unsafe.StringData(stringSelector) && len(selector) == len(stringSelector) {
		return stringNamesHash
	}
	return computeNamesHash(namespace, selector)
}

// stringSelector is cachekey.String's selector.
const stringSelector = "value"

// stringNamesHash is computeNamesHash of cachekey.String's names
// (TestStringNamesHash).
const stringNamesHash = 0xe0067b5721836463

func computeNamesHash(namespace, selector string) uint64 {
	return fmix64(mixName(mixName(0x27d4eb2f165667c5, namespace)*0x165667b19e3779f9, selector))
}

// mixName folds s into h: eight bytes at a time, the last one to eight
// bytes in one or two overlapping loads (as wyhash does), with the length,
// so that ("ab","c") and ("a","bc") differ. fmix64 finishes the mix.
func mixName(h uint64, s string) uint64 {
	n := len(s)
	b := unsafe.Slice(unsafe.StringData(s), n)
	var t uint64
	switch {
	case n > 8:
		for len(b) > 8 {
			h = (h ^ binary.LittleEndian.Uint64(b)) * 0xc2b2ae3d27d4eb4f
			h ^= h >> 31
			b = b[8:]
		}
		t = binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[n-8:]), 8))
	case n >= 4:
		t = uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32
	case n > 0:
		t = uint64(b[0])<<16 | uint64(b[n>>1])<<8 | uint64(b[n-1])
	}
	h = (h ^ t ^ uint64(n)<<56) * 0x9e3779b97f4a7c15
	return h ^ h>>29
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

// prefetchBatch is how many keys Prefetch walks together.
const prefetchBatch = 64

// Prefetch loads into the processor's caches what lookups of keys in DRAM
// will read (each key's index slot, the entry found there and its record
// key's bytes) in passes whose loads do not depend on one another, so that
// their cache misses overlap; the GetShared calls that follow then find
// them there. It takes no lock and changes and counts nothing: a key that
// is absent, or replaced meanwhile, only makes a lookup miss in the
// processor's cache as it would have.
func (c *Cache) Prefetch(keys []blockfmt.Key) {
	var es [prefetchBatch]*entry
	var sink uint32
	for lo := 0; lo < len(keys); lo += prefetchBatch {
		ks := keys[lo:min(len(keys), lo+prefetchBatch)]
		for i := range ks {
			h := hashKey(ks[i])
			es[i] = c.shardFor(h).m.load(h)
		}
		for _, e := range es[:len(ks)] {
			if e != nil {
				sink += e.vlen
			}
		}
		for _, e := range es[:len(ks)] {
			if e != nil && len(e.record) > 0 {
				sink += uint32(e.record[0])
			}
		}
	}
	keepLoads(sink)
}

// keepLoads is where Prefetch's loads end up, so that the compiler keeps
// them.
//
//go:noinline
func keepLoads(uint32) {}
