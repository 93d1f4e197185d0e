package matrixcache

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"golang.org/x/sync/singleflight"
	"math"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/policy"
	"github.com/temporalstore/temporalstore-go/matrixcache/residenttier"
	"github.com/temporalstore/temporalstore-go/matrixcache/ssdtier"
)

// Errors of the Cache. Match them with errors.Is.
var (
	// ErrClosed is returned by every call on a closed Cache.
	ErrClosed = errors.New("matrixcache: closed")
	// ErrNotFound is returned by Acquire when no tier holds the key.
	ErrNotFound = errors.New("matrixcache: not found")
	// ErrTooLarge is returned by Put for a value no tier accepts.
	ErrTooLarge = errors.New("matrixcache: value too large for every tier")
	// ErrReplaceMismatch is returned by CompareAndSwap when the key's
	// current value is not the expected one.
	ErrReplaceMismatch = errors.New("matrixcache: current value is not the expected one")
)

// persistentTier is what the cache needs of a tier below DRAM. The SSD tier
// (ssdtier.Store) implements it, and so will the resident tier.
type persistentTier interface {
	Put(ctx context.Context, b blockfmt.Block) error
	PutBatch(ctx context.Context, blocks []blockfmt.Block) error
	Get(key blockfmt.Key) (blockfmt.Block, bool, error)
	Delete(ctx context.Context, key blockfmt.Key) (bool, error)
	DeletePrefix(ctx context.Context, shard uint64, recordPrefix string) (int, error)
	DeleteShard(ctx context.Context, shard uint64) (int, error)
	Iterate(ctx context.Context, fn func(blockfmt.Block) bool) error
	Close() error
}

var (
	_ persistentTier = (*ssdtier.Store)(nil)
	_ persistentTier = (*residenttier.Store)(nil)
)

// PutOptions are per-write options of Put.
type PutOptions struct {
	// TTL is how long the value lives; 0 means Options.DefaultTTL (by
	// default forever). An expired value is never served by any tier.
	TTL time.Duration
}

// Cache is a multi-tier block cache: a sharded DRAM tier over an optional
// resident tier and an SSD tier. It is safe for concurrent use. The package
// documentation says where reads and writes go.
//
// Lower-tier writes of one DRAM shard are made under that shard's lock
// (unless Options.WriteBack queues the SSD ones), so a shard's writes are
// serialised on them; DRAM hits never wait for them.
//
// A DRAM hit takes no lock and tells the replacement policy through a
// per-shard read buffer. While one goroutine reads a shard, every hit
// reaches the policy. While several read it at once, the policy is told of a
// sample, as Caffeine's and otter's lossy read buffers do, so that reading
// cores do not spend most of a hit on the policy's bookkeeping; hit and
// miss counters stay exact either way (Stats.DRAMHitsToPolicy counts what
// the policy saw).
type Cache struct {
	// What every DRAM hit reads, and nothing writes after New (closed once,
	// the callbacks when set): kept off the lines that writers change.
	shards []*shard
	closed atomic.Bool
	// sampleMask selects the timed calls: sequence&sampleMask == 0.
	sampleMask uint64
	// sampledHotCeiling is the hotness from which a sampling shard's hits
	// no longer write the entry: minHotCeiling, or the highest tier
	// threshold if above, so that sampling never keeps a key below one.
	sampledHotCeiling uint32
	// onAccess and onEvict are the callbacks of SetAccessRecorder and
	// SetEvictionCallback (nil: none). Read-mostly.
	onAccess atomic.Pointer[func(AccessRecord)]
	onEvict  atomic.Pointer[func(EvictionEvent)]
	_        [16]byte

	opts Options
	// tiering is the admission policy New built; tiers is the one in
	// force, which SetDRAMCapacity replaces.
	tiering Tiering
	tiers   atomic.Pointer[Tiering]
	ssd     persistentTier
	ssdSt   *ssdtier.Store
	res     *residenttier.Store
	wb      *writeback

	// life orders Close after the calls that use the lower tiers; DRAM
	// hits check closed only, since DRAM needs no closing.
	life sync.RWMutex
	// lower says a tier below DRAM exists, so writes need life.
	lower bool

	st counters
	// loads is GetOrLoad's single flight: one load per key at a time.
	loads singleflight.Group

	// ev queues eviction events; it is written only while an eviction
	// callback is set, and kept apart from what hits read.
	_  [64]byte
	ev evictions
}

type counters struct {
	dramMisses, dramPuts, dramEvictions, dramDemotions, dramPromotions, dramExpired, dramStale   atomic.Int64
	ssdHits, ssdMisses, ssdPuts, ssdStale                                                        atomic.Int64
	resHits, resMisses, resPuts, resStale, resDemotions, resRefills, resWriteFailures            atomic.Int64
	misses, rejected, hotnessPromotions, refillFailures, dramAdmissionRejected, ssdBudgetRefused atomic.Int64
	demotionFailures, pins, unpins, recovered                                                    atomic.Int64
	expiredReads, refillRejected, dramNoRoom, dramOversize, batchReads, batchWrites              atomic.Int64
	expiredReclaimed                                                                             atomic.Int64
	loads, loadFailures                                                                          atomic.Int64

	getLatency, putLatency, readThroughLatency latencyHist
}

// New builds a cache from opts. It refuses options with a Critical finding
// (see Options.Validate) with an error wrapping ErrInvalidOptions that names
// the field. ctx bounds opening the SSD tier and AutoRecoverOnStart.
func New(ctx context.Context, opts Options) (*Cache, error) {
	if err := critical(opts.Validate()); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	c := &Cache{opts: o, tiering: o.Tiering()}
	t := c.tiering
	c.tiers.Store(&t)
	c.SetEvictionCallback(o.OnEvict)
	c.sampleMask = uint64(1)<<bits.Len(uint(o.LatencySampleEvery-1)) - 1
	c.sampledHotCeiling = uint32(max(minHotCeiling, o.DRAMHotnessThreshold, o.ResidentHotnessThreshold, o.SSDHotnessThreshold))
	n := int64(o.Shards)
	dram := capOf(o.DRAMCapacityBytes)
	for i := range n {
		cp := dram / n
		if i < dram%n {
			cp++
		}
		var pol policy.Policy
		switch o.Policy {
		case "slru":
			pol = policy.NewSLRU(cp, policy.SLRUOptions{})
		case "fifo":
			pol = policy.NewFIFO(cp)
		case "arc":
			pol = policy.NewARC(cp)
		default:
			pol = policy.NewTinyLFU(cp)
		}
		c.shards = append(c.shards, newShard(cp, pol))
	}
	if c.tiering.ssdEnabled() {
		st, err := ssdtier.Open(ctx, ssdtier.Options{
			Path:             o.SSDPath,
			CapacityBytes:    o.SSDCapacityBytes,
			NoSync:           o.SSDNoSync,
			WriteBytesPerSec: o.SSDWriteBytesPerSec,
			Logger:           o.Logger,
			Clock:            o.Clock,
		})
		if err != nil {
			return nil, fmt.Errorf("matrixcache: open SSD tier: %w", err)
		}
		c.ssd, c.ssdSt = st, st
		c.lower = true
		if o.WriteBack {
			c.wb = newWriteback(ctx, st, o.WriteBackQueueLen, o.WriteBackMaxBatch)
		}
	}
	if c.tiering.ResidentCapacityBytes > 0 {
		if err := c.openResident(ctx); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	if o.AutoRecoverOnStart && (c.ssd != nil || c.res != nil) {
		if err := c.recover(ctx); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	return c, nil
}

// openResident opens the resident tier, emptying it unless it is durable
// (see Options.ResidentDurable).
func (c *Cache) openResident(ctx context.Context) error {
	o := c.opts
	st, err := residenttier.Open(ctx, residenttier.Options{
		Dir:           o.ResidentPath,
		CapacityBytes: o.ResidentCapacityBytes,
		Sync:          o.ResidentDurable,
		Mmap:          o.ResidentMmap,
		OnEvict:       c.residentEvicted,
		Logger:        o.Logger,
		Clock:         o.Clock,
	})
	if err != nil {
		return fmt.Errorf("matrixcache: open resident tier: %w", err)
	}
	c.res, c.lower = st, true
	if !o.ResidentDurable {
		n, err := st.Clear(ctx)
		if err != nil {
			return fmt.Errorf("matrixcache: empty the unflushed resident tier: %w", err)
		}
		if n > 0 {
			o.Logger.Info("matrixcache: emptied the resident tier, whose writes are not flushed", "dir", o.ResidentPath, "blocks", n)
		}
	}
	return nil
}

// Close closes the tiers. Later calls on the cache return ErrClosed; Close
// itself is idempotent.
func (c *Cache) Close() error {
	c.life.Lock()
	defer c.life.Unlock()
	if c.closed.Load() {
		return nil
	}
	c.closed.Store(true)
	var err error
	if c.wb != nil {
		c.wb.close()
	}
	if c.res != nil {
		err = c.res.Close()
	}
	if c.ssd != nil {
		err = errors.Join(err, c.ssd.Close())
	}
	return err
}

// Flush waits until every SSD write queued by Options.WriteBack before the
// call has committed. Without WriteBack it returns at once.
func (c *Cache) Flush(ctx context.Context) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	if c.wb == nil {
		return nil
	}
	return c.wb.flush(ctx)
}

// writeSSD writes b to the SSD tier: queued with WriteBack, unless the
// queue is full, in which case the caller writes it directly.
func (c *Cache) writeSSD(ctx context.Context, b blockfmt.Block) error {
	if c.wb != nil && c.wb.enqueue(b, false) {
		return nil
	}
	return c.ssd.Put(ctx, b)
}

func (c *Cache) enter() error {
	c.life.RLock()
	if c.closed.Load() {
		c.life.RUnlock()
		return ErrClosed
	}
	return nil
}

func (c *Cache) exit() { c.life.RUnlock() }

// accessNote is an access record a locked read leaves for exitDeliver.
type accessNote struct {
	key  blockfmt.Key
	tier Tier
	set  bool
}

// exitDeliver is exit, then the access record of note (if set), then
// deliverEvictions: what a locked read must do once it holds no lock. As
// one deferred call it keeps read's defers few enough for the compiler to
// open-code them (a third defer would make every lock-free hit pay the
// runtime's defer bookkeeping on return).
func (c *Cache) exitDeliver(note *accessNote) {
	c.life.RUnlock()
	if note != nil && note.set {
		c.recordAccess(AccessGet, note.key, note.tier != TierNone, note.tier)
	}
	c.deliverEvictions()
}

func (c *Cache) now() int64 { return c.opts.Clock.Now().UnixNano() }

// shardFor maps the hash's high half onto the shards by multiplying
// rather than dividing (Lemire's fast range), since a division costs as
// much as the rest of the lookup.
func (c *Cache) shardFor(h uint64) *shard {
	return c.shards[(h>>32)*uint64(len(c.shards))>>32]
}

// fitsDRAM reports whether a value of n bytes under key k can live in s.
func (c *Cache) fitsDRAM(s *shard, k blockfmt.Key, n int) bool {
	// An entry keeps its value's length in 32 bits.
	return int64(n) <= c.tiering.MaxDRAMBlockBytes && n <= math.MaxUint32 && entryCost(k, n) <= s.capacity
}

func saturatingInc(h uint8) uint8 {
	if h == 255 {
		return h
	}
	return h + 1
}

func (c *Cache) decide(k blockfmt.Key, n int, hotness uint8) AdmissionDecision {
	slot, ok := k.RoutingSlot()
	return c.tiers.Load().Decide(AdmissionRequest{
		Kind: k.Kind(), Shard: k.Shard, RoutingSlot: slot, HasRoutingSlot: ok,
		Bytes: int64(n), Hotness: hotness,
	})
}

// Put writes value under key. See Cache for where it goes. value is copied.
// It fails with ErrTooLarge when no tier can ever hold the value, and the
// key's older value is then dropped from every tier. A value the
// DRAM policy refuses (TinyLFU admission, or pinned entries leaving no room)
// and no lower tier takes is simply not cached: Put returns nil and Stats
// counts it in DRAMAdmissionRejected.
//
// If ctx ends during the SSD write, Put returns its error and the SSD may or
// may not hold the new value; it never keeps an older one.
func (c *Cache) Put(ctx context.Context, key blockfmt.Key, value []byte, o PutOptions) error {
	err := c.put(ctx, key, value, o)
	c.deliverEvictions()
	if err == nil {
		c.recordAccess(AccessPut, key, true, TierNone)
	}
	return err
}

func (c *Cache) put(ctx context.Context, key blockfmt.Key, value []byte, o PutOptions) error {
	if c.lower {
		if err := c.enter(); err != nil {
			return err
		}
		defer c.exit()
	} else if c.closed.Load() {
		return ErrClosed
	}
	h := hashKey(key)
	s := c.shardFor(h)
	var start time.Time
	timed := s.putSeq.Add(1)&c.sampleMask == 0
	if timed {
		start = time.Now()
	}
	clk := clockReading{c: c}
	v, exp := c.ownValue(value, o, &clk)
	s.mu.Lock()
	err := c.putLocked(ctx, s, h, key, v, exp, &clk)
	s.mu.Unlock()
	if timed {
		c.st.putLatency.since(start)
	}
	return err
}

// ownValue returns the value a write stores (never nil) and its expiry
// from o or Options.DefaultTTL (0: none). The value is the cache's own
// copy, except when only the resident tier could take it (over
// MaxDRAMBlockBytes, which New fixes, and no SSD tier, whose write-behind
// queue would keep it): the resident tier encodes what it writes, so a
// large value offered to a cache that cannot keep it costs no copy.
func (c *Cache) ownValue(value []byte, o PutOptions, clk *clockReading) ([]byte, int64) {
	var exp int64
	if ttl := cmp.Or(o.TTL, c.opts.DefaultTTL); ttl > 0 {
		exp = clk.now() + int64(ttl)
	}
	if value == nil {
		return []byte{}, exp
	}
	if c.ssd == nil && int64(len(value)) > c.tiering.MaxDRAMBlockBytes {
		return value, exp
	}
	return bytes.Clone(value), exp
}

// CompareAndSwap writes value under key, as Put does, only if the key's
// current value (the newest, in whichever tier holds it) equals old byte
// for byte; otherwise it fails with ErrReplaceMismatch. It fails with
// ErrNotFound when no tier holds a live value of the key, and with
// ErrTooLarge when no tier could hold value. None of these failures
// changes anything. The comparison and the write are one step to every
// other write of the key (they hold its DRAM shard's lock), and the read
// for the comparison counts no hit and refills nothing. value is copied.
// It is the original's update_cached_value_if_current.
func (c *Cache) CompareAndSwap(ctx context.Context, key blockfmt.Key, old, value []byte, o PutOptions) error {
	err := c.compareAndSwap(ctx, key, old, value, o)
	c.deliverEvictions()
	if err == nil {
		c.recordAccess(AccessPut, key, true, TierNone)
	}
	return err
}

func (c *Cache) compareAndSwap(ctx context.Context, key blockfmt.Key, old, value []byte, o PutOptions) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	if err := ctx.Err(); err != nil {
		return err
	}
	h := hashKey(key)
	s := c.shardFor(h)
	clk := clockReading{c: c}
	v, exp := c.ownValue(value, o, &clk)
	s.mu.Lock()
	defer s.mu.Unlock()
	_, cur, tier, err := c.readLocked(ctx, s, h, key, c.now(), false, false)
	switch {
	case err != nil:
		return err
	case tier == TierNone:
		return ErrNotFound
	case !bytes.Equal(cur, old):
		return ErrReplaceMismatch
	case c.fitsNowhere(s, key, len(v)):
		return fmt.Errorf("%w: %d bytes", ErrTooLarge, len(v))
	}
	return c.putLocked(ctx, s, h, key, v, exp, &clk)
}

// fitsNowhere reports whether putLocked would refuse a value of n bytes
// under key with ErrTooLarge, dropping the key's older value.
func (c *Cache) fitsNowhere(s *shard, key blockfmt.Key, n int) bool {
	if c.decide(key, n, 0).Tier == TierNone {
		return true
	}
	return c.ssd == nil && !c.fitsDRAM(s, key, n) && (c.res == nil || !c.tiering.fitsResident(int64(n)))
}

func (c *Cache) putLocked(ctx context.Context, s *shard, h uint64, key blockfmt.Key, v []byte, exp int64, clk *clockReading) error {
	c.reclaimExpiredLocked(s, clk)
	kind := key.Kind()
	hot := blockfmt.InitialHotness(kind, len(v))
	old := s.m.load(h)
	if old != nil && !old.matches(key) {
		// A different key with the same hash: it is one key to the policy.
		s.dropLocked(h, old)
		old = nil
	}
	if old != nil && !old.expiredAt(clk) && old.hot() >= hot {
		hot = saturatingInc(old.hot())
	}
	d := c.decide(key, len(v), hot)
	if d.Tier == TierNone {
		// Refused everywhere; the older value must not outlive the write.
		c.st.rejected.Add(1)
		if old != nil {
			s.dropLocked(h, old)
			c.st.dramStale.Add(1)
		}
		if err := c.dropResidentCopy(ctx, key); err != nil {
			return err
		}
		if c.ssd != nil {
			if err := c.dropSSDCopy(ctx, key); err != nil {
				return err
			}
		}
		return fmt.Errorf("%w: %d bytes", ErrTooLarge, len(v))
	}

	inDRAM := false
	var victims []uint64
	if c.fitsDRAM(s, key, len(v)) {
		var err error
		// The entry replaced keeps the policy's slot: an overwrite then
		// skips the policy's key index.
		hint := policy.NoSlot
		if old != nil {
			hint = old.slot
		}
		var slot int32
		victims, slot, err = s.pol.AdmitSlot(h, hint, entryCost(key, len(v)), s.victims[:0])
		switch {
		case err == nil:
			inDRAM = true
			e := s.newEntryLocked(key, v, kind, hot, exp, slot)
			s.installLocked(h, e)
			c.st.dramPuts.Add(1)
		case errors.Is(err, policy.ErrRejected):
			c.st.dramAdmissionRejected.Add(1)
			if old != nil {
				s.m.delete(h)
				s.forgetPinsLocked(h)
			}
		default: // ErrNoRoom: pinned entries leave no room.
			c.st.dramAdmissionRejected.Add(1)
			c.st.dramNoRoom.Add(1)
			if old != nil {
				s.dropLocked(h, old)
			}
		}
	} else {
		if s.capacity > 0 {
			c.st.dramOversize.Add(1)
		}
		if old != nil {
			s.dropLocked(h, old)
		}
	}
	if old != nil && !inDRAM {
		c.st.dramStale.Add(1)
	}

	blk := blockfmt.Block{Key: key, Kind: kind, Hotness: hot, ExpiresAt: exp, Value: v}
	var err error
	inRes := false
	if c.res != nil {
		if d.Tier == TierResident || (!inDRAM && d.AdmitResident) {
			if err = c.res.Put(ctx, blk); err == nil {
				inRes = true
				c.st.resPuts.Add(1)
				if e := s.m.load(h); e != nil && inDRAM {
					e.inResident = true
				}
			} else {
				c.st.resWriteFailures.Add(1)
				err = errors.Join(err, c.dropResidentCopy(ctx, key))
			}
		} else {
			err = c.dropResidentCopy(ctx, key)
		}
		if err != nil {
			c.evictLocked(ctx, s, victims, clk)
			s.victims = victims[:0]
			return err
		}
	}
	if c.ssd != nil {
		if d.AdmitSSD || d.Tier == TierSSD || !inDRAM {
			err = c.writeSSD(ctx, blk)
			switch {
			case err == nil:
				c.st.ssdPuts.Add(1)
				if inDRAM {
					if e := s.m.load(h); e != nil {
						e.persisted = true
					}
				}
			case errors.Is(err, ssdtier.ErrBudgetExceeded):
				c.st.ssdBudgetRefused.Add(1)
				err = c.dropSSDCopy(ctx, key)
			default:
				_ = c.dropSSDCopy(ctx, key)
			}
		} else {
			err = c.dropSSDCopy(ctx, key)
		}
	}
	if !inDRAM && !inRes && c.ssd == nil && !c.fitsDRAM(s, key, len(v)) && (c.res == nil || !c.tiering.fitsResident(int64(len(v)))) {
		err = fmt.Errorf("%w: %d bytes", ErrTooLarge, len(v))
	}
	c.evictLocked(ctx, s, victims, clk)
	s.victims = victims[:0]
	return err
}

// dropResidentCopy deletes a resident copy older than the value just
// written. The resident tier keeps its index in memory, so this costs no
// I/O when it holds no copy.
func (c *Cache) dropResidentCopy(ctx context.Context, key blockfmt.Key) error {
	if c.res == nil {
		return nil
	}
	// Not cancellable, as in dropSSDCopy.
	ok, err := c.res.Delete(context.WithoutCancel(ctx), key)
	if ok {
		c.st.resStale.Add(1)
	}
	return err
}

// dropSSDCopy deletes an SSD copy older than the value just written.
func (c *Cache) dropSSDCopy(ctx context.Context, key blockfmt.Key) error {
	if c.wb != nil {
		if _, _, ok := c.wb.lookup(key); ok {
			// A queued write of the key: replace it with a delete.
			c.st.ssdStale.Add(1)
			c.wb.enqueue(blockfmt.Block{Key: key}, true)
			return nil
		}
	}
	// No job of the key is queued or in flight, so the SSD copy only
	// changes under this shard's lock, which the caller holds.
	if _, ok, _ := c.ssd.Get(key); !ok {
		return nil
	}
	c.st.ssdStale.Add(1)
	// Not cancellable: an older copy left behind would be served once the
	// new value leaves DRAM.
	_, err := c.ssd.Delete(context.WithoutCancel(ctx), key)
	return err
}

// evictLocked handles DRAM victims: a live victim is demoted to each lower
// tier that does not hold it yet and that the admission decision, at the
// victim's hotness, admits it to. The resident tier's own victims are not
// demoted further: everything it holds was written to the SSD tier too
// (when there is one and it took the block), so they are there already.
func (c *Cache) evictLocked(ctx context.Context, s *shard, victims []uint64, clk *clockReading) {
	report := c.wantEvictions()
	for _, vh := range victims {
		e := s.m.delete(vh)
		if e == nil {
			continue
		}
		c.st.dramEvictions.Add(1)
		if e.expiredAt(clk) {
			c.st.dramExpired.Add(1)
			if report {
				c.evicted(EvictionEvent{Key: e.key(), Value: e.value(), Tier: TierDRAM, Cause: EvictionExpired})
			}
			continue
		}
		toRes := c.res != nil && !e.inResident
		toSSD := c.ssd != nil && !e.persisted
		if !toRes && !toSSD {
			if report {
				// Its lower tiers hold it already, or there are none.
				c.evicted(EvictionEvent{Key: e.key(), Value: e.value(), Tier: TierDRAM, Cause: EvictionEvicted, Demoted: c.lower})
			}
			continue
		}
		d := c.decide(e.key(), int(e.vlen), e.hot())
		toRes = toRes && d.AdmitResident
		toSSD = toSSD && (d.AdmitSSD || d.Tier == TierSSD)
		b := blockfmt.Block{Key: e.key(), Kind: e.kind, Hotness: e.hot(), ExpiresAt: e.expiresAt, Value: e.value()}
		demoted := false
		if toRes {
			if err := c.res.Put(ctx, b); err != nil {
				c.st.demotionFailures.Add(1)
				c.st.resWriteFailures.Add(1)
			} else {
				c.st.resPuts.Add(1)
				c.st.resDemotions.Add(1)
				demoted = true
			}
		}
		if toSSD {
			if err := c.writeSSD(ctx, b); err != nil {
				c.st.demotionFailures.Add(1)
				if errors.Is(err, ssdtier.ErrBudgetExceeded) {
					c.st.ssdBudgetRefused.Add(1)
				}
			} else {
				c.st.ssdPuts.Add(1)
				demoted = true
			}
		}
		if demoted {
			c.st.dramDemotions.Add(1)
		}
		if report {
			// A value whose lower copy the admission declined is gone
			// from the cache unless a lower tier held it already.
			held := demoted || (c.res != nil && e.inResident) || (c.ssd != nil && e.persisted)
			c.evicted(EvictionEvent{Key: b.Key, Value: b.Value, Tier: TierDRAM, Cause: EvictionEvicted, Demoted: held})
		}
	}
}

// readLocked finds key in DRAM, the resident tier or the SSD tier, in that
// order. With promote, a DRAM hit is recorded and a lower tier's hit is
// refilled into DRAM (and an SSD hit DRAM refuses into the resident tier,
// when the admission decision places it there); with pin, the DRAM entry
// that answers is pinned. It returns the entry (when DRAM holds the value
// after the call), the value (shared with the entry), and the tier that
// answered.
func (c *Cache) readLocked(ctx context.Context, s *shard, h uint64, key blockfmt.Key, now int64, promote, pin bool) (*entry, []byte, Tier, error) {
	return c.readLockedVia(ctx, s, h, key, now, promote, pin, nil)
}

// lowerRead is what a GetBatch position read from the tiers below DRAM:
// the value and the tier that answered (TierNone: none did).
type lowerRead struct {
	value []byte
	tier  Tier
}

// readLockedVia is readLocked that, given memo, answers a key memo holds
// without reading the lower tiers again (counting what reading them would
// count, and refilling nothing), and adds what it reads from them to memo.
func (c *Cache) readLockedVia(ctx context.Context, s *shard, h uint64, key blockfmt.Key, now int64, promote, pin bool, memo map[blockfmt.Key]lowerRead) (*entry, []byte, Tier, error) {
	if e := s.lookupLocked(h, key); e != nil {
		if e.expired(now) {
			if promote {
				c.st.dramExpired.Add(1)
				c.st.expiredReads.Add(1)
				c.st.misses.Add(1)
				if !s.pinnedLocked(h) {
					s.dropLocked(h, e)
					if c.wantEvictions() {
						c.evicted(EvictionEvent{Key: e.key(), Value: e.value(), Tier: TierDRAM, Cause: EvictionExpired})
					}
				}
			}
			return nil, nil, TierNone, nil
		}
		if promote {
			s.pol.Access(h)
			s.hits.Add(1)
			c.raiseHotness(e, hotnessMask)
		}
		if pin {
			c.pinLocked(s, h)
		}
		return e, e.value(), TierDRAM, nil
	}
	if promote {
		c.st.dramMisses.Add(1)
	}
	if !c.lower {
		if promote {
			c.st.misses.Add(1)
		}
		return nil, nil, TierNone, nil
	}
	if r, ok := memo[key]; ok {
		c.st.batchReads.Add(1)
		if promote {
			c.countLowerRead(r.tier)
			if r.tier == TierNone {
				c.st.misses.Add(1)
			}
		}
		return nil, r.value, r.tier, nil
	}
	start := time.Now()
	b, tier, err := c.readLower(key, now, promote)
	if promote {
		c.st.readThroughLatency.since(start)
	}
	if memo != nil && err == nil {
		memo[key] = lowerRead{value: b.Value, tier: tier}
	}
	if err != nil || tier == TierNone {
		if promote {
			c.st.misses.Add(1)
		}
		return nil, nil, TierNone, err
	}
	if !promote {
		return nil, b.Value, tier, nil
	}
	e := c.promoteLocked(ctx, s, h, b, tier, now)
	if e != nil && pin {
		c.pinLocked(s, h)
	}
	return e, b.Value, tier, nil
}

// readLower reads key from the resident tier, then the SSD tier, counting
// each tier's hit or miss when count is set.
func (c *Cache) readLower(key blockfmt.Key, now int64, count bool) (blockfmt.Block, Tier, error) {
	if c.res != nil {
		b, ok, err := c.res.Get(key)
		if err != nil && !errors.Is(err, blockfmt.ErrCorrupt) && !errors.Is(err, blockfmt.ErrUnsupportedVersion) {
			return b, TierNone, err
		}
		// A damaged block was removed by the tier; the SSD copy may serve.
		if err == nil && ok {
			if count {
				c.st.resHits.Add(1)
			}
			return b, TierResident, nil
		}
		if count {
			c.st.resMisses.Add(1)
		}
	}
	if c.ssd == nil {
		return blockfmt.Block{}, TierNone, nil
	}
	b, ok, err := c.readSSD(key, now)
	if err != nil || !ok {
		if count {
			c.st.ssdMisses.Add(1)
		}
		return b, TierNone, err
	}
	if count {
		c.st.ssdHits.Add(1)
	}
	return b, TierSSD, nil
}

// countLowerRead counts the tier hits and misses readLower counts for a
// read that tier answered (TierNone: none did).
func (c *Cache) countLowerRead(tier Tier) {
	if c.res != nil {
		if tier == TierResident {
			c.st.resHits.Add(1)
			return
		}
		c.st.resMisses.Add(1)
	}
	if c.ssd == nil {
		return
	}
	if tier == TierSSD {
		c.st.ssdHits.Add(1)
	} else {
		c.st.ssdMisses.Add(1)
	}
}

// readSSD reads key from the SSD tier, or from the writeback queue when a
// write or delete of the key is still queued there.
func (c *Cache) readSSD(key blockfmt.Key, now int64) (blockfmt.Block, bool, error) {
	if c.wb != nil {
		if b, del, ok := c.wb.lookup(key); ok {
			if del || b.Expired(now) {
				return blockfmt.Block{}, false, nil
			}
			return b, true, nil
		}
	}
	return c.ssd.Get(key)
}

// raiseHotness adds one to e's hotness unless it has reached ceiling (at
// most hotnessMask). Lock-free hits raise it too, so it is atomic, and a
// hot key stops writing it at the ceiling.
func (c *Cache) raiseHotness(e *entry, ceiling uint32) {
	for {
		old := e.state.Load()
		if old >= ceiling {
			return
		}
		if e.state.CompareAndSwap(old, old+1) {
			if old+1 == uint32(c.tiering.DRAMHotnessThreshold) {
				c.st.hotnessPromotions.Add(1)
			}
			return
		}
	}
}

// promoteLocked refills DRAM with a block read from the lower tier from; it
// returns the new entry, or nil when DRAM did not take it. An SSD block DRAM
// does not take goes to the resident tier when the admission decision
// places it there.
func (c *Cache) promoteLocked(ctx context.Context, s *shard, h uint64, b blockfmt.Block, from Tier, now int64) *entry {
	if !c.fitsDRAM(s, b.Key, len(b.Value)) {
		c.st.refillFailures.Add(1)
		if s.capacity > 0 {
			c.st.dramOversize.Add(1)
		}
		c.refillResident(ctx, b, from)
		return nil
	}
	if old := s.m.load(h); old != nil { // a colliding key
		s.dropLocked(h, old)
	}
	c.reclaimExpiredLocked(s, &clockReading{c: c, ns: now})
	victims, slot, err := s.pol.AdmitSlot(h, policy.NoSlot, entryCost(b.Key, len(b.Value)), s.victims[:0])
	if err != nil {
		c.st.refillFailures.Add(1)
		if errors.Is(err, policy.ErrRejected) {
			c.st.dramAdmissionRejected.Add(1)
			c.st.refillRejected.Add(1)
		} else if errors.Is(err, policy.ErrNoRoom) {
			c.st.dramNoRoom.Add(1)
		}
		c.refillResident(ctx, b, from)
		return nil
	}
	// A resident block has an SSD copy unless the SSD tier refused it; if
	// so, evicting this entry loses the value, which costs a later miss.
	e := s.newEntryLocked(b.Key, b.Value, b.Kind, b.Hotness, b.ExpiresAt, slot)
	e.persisted, e.inResident = c.ssd != nil, from == TierResident
	c.raiseHotness(e, hotnessMask)
	s.installLocked(h, e)
	c.st.dramPromotions.Add(1)
	c.evictLocked(ctx, s, victims, &clockReading{c: c, ns: now})
	s.victims = victims[:0]
	return e
}

// refillResident writes an SSD block DRAM did not take to the resident tier
// when the admission decision places it there.
func (c *Cache) refillResident(ctx context.Context, b blockfmt.Block, from Tier) {
	if c.res == nil || from != TierSSD {
		return
	}
	if d := c.decide(b.Key, len(b.Value), b.Hotness); d.Tier != TierResident {
		return
	}
	if err := c.res.Put(ctx, b); err != nil {
		c.st.resWriteFailures.Add(1)
		return
	}
	c.st.resPuts.Add(1)
	c.st.resRefills.Add(1)
}

func (c *Cache) pinLocked(s *shard, h uint64) {
	p := s.pins[h]
	if p == nil {
		p = &pinRef{live: true}
		s.pins[h] = p
	}
	s.pol.Pin(h)
	p.n++
	c.st.pins.Add(1)
}

// Get returns a copy of key's value and the tier that served it. A DRAM hit
// raises the entry's hotness; an SSD hit is refilled into DRAM when the value
// fits a DRAM block and the replacement policy admits it. An expired value is
// a miss.
func (c *Cache) Get(ctx context.Context, key blockfmt.Key) ([]byte, Tier, bool, error) {
	v, tier, ok, err := c.read(ctx, key, true)
	return bytes.Clone(v), tier, ok, err
}

// GetShared is Get without the copy: it returns the cache's own buffer, and
// allocates nothing on a DRAM hit. The buffer is never written again (an
// overwrite installs a new one), so it stays valid and unchanged for as long
// as the caller keeps it; the caller must not modify it.
func (c *Cache) GetShared(ctx context.Context, key blockfmt.Key) ([]byte, Tier, bool, error) {
	return c.read(ctx, key, true)
}

// Peek returns a copy of key's value without recording a hit, raising
// hotness or refilling DRAM: for scans that must not disturb the cache.
func (c *Cache) Peek(ctx context.Context, key blockfmt.Key) ([]byte, Tier, bool, error) {
	v, tier, ok, err := c.read(ctx, key, false)
	return bytes.Clone(v), tier, ok, err
}

// read serves Get, GetShared (promote) and Peek. A live DRAM hit takes no
// lock: the hit is counted at once and handed to the policy through the
// shard's read buffer. Anything else takes the shard's lock.
func (c *Cache) read(ctx context.Context, key blockfmt.Key, promote bool) ([]byte, Tier, bool, error) {
	if c.closed.Load() {
		return nil, TierNone, false, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, TierNone, false, err
	}
	h := hashKey(key)
	s := c.shardFor(h)
	var start time.Time
	var st *readStripe
	timed := false
	if promote {
		// The goroutine's read ring counts its hits; a call finding the
		// count at a multiple of sampleMask+1 is timed, which samples one
		// hit in that many from a line this core writes anyway.
		st = &s.reads.stripes[stackStripe()]
		if timed = st.hits.Load()&c.sampleMask == 0; timed {
			start = time.Now()
		}
	}
	if e := c.loadLive(s, h, key); e != nil {
		if promote {
			c.recordHit(s, st, h, e)
			if timed {
				c.st.getLatency.since(start)
			}
			if c.onAccess.Load() != nil { // the hit path's only cost of SetAccessRecorder
				c.recordAccess(AccessGet, key, true, TierDRAM)
			}
		}
		return e.value(), TierDRAM, true, nil
	}
	return c.readSlow(ctx, s, h, key, promote, timed, start)
}

// readSlow is read past a lock-free DRAM hit: apart, so that the hit path
// has a small frame and no deferred calls.
func (c *Cache) readSlow(ctx context.Context, s *shard, h uint64, key blockfmt.Key, promote, timed bool, start time.Time) ([]byte, Tier, bool, error) {
	if err := c.enter(); err != nil {
		return nil, TierNone, false, err
	}
	var note accessNote
	defer c.exitDeliver(&note) // after the unlock: the access record, and a refill's evictions
	s.mu.Lock()
	defer s.mu.Unlock()
	_, v, tier, err := c.readLocked(ctx, s, h, key, c.now(), promote, false)
	if timed {
		c.st.getLatency.since(start)
	}
	if promote && err == nil && c.onAccess.Load() != nil {
		note = accessNote{key: key, tier: tier, set: true}
	}
	if err != nil || tier == TierNone {
		return nil, TierNone, false, err
	}
	return v, tier, true, nil
}

// Delete removes key from every tier and reports whether any tier held it.
// A pinned entry leaves DRAM too; its handles keep their bytes.
func (c *Cache) Delete(ctx context.Context, key blockfmt.Key) (bool, error) {
	found, err := c.delete(ctx, key)
	if err == nil {
		c.recordAccess(AccessDelete, key, found, TierNone)
	}
	return found, err
}

func (c *Cache) delete(ctx context.Context, key blockfmt.Key) (bool, error) {
	if err := c.enter(); err != nil {
		return false, err
	}
	defer c.exit()
	h := hashKey(key)
	s := c.shardFor(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	found := false
	if e := s.lookupLocked(h, key); e != nil {
		s.dropLocked(h, e)
		found = true
	}
	if c.res != nil {
		ok, err := c.res.Delete(ctx, key)
		if err != nil {
			return found, err
		}
		found = found || ok
	}
	if c.ssd != nil {
		if c.wb != nil {
			found = c.wb.forget(func(k blockfmt.Key) bool { return k == key }) > 0 || found
			defer c.wb.commitMu.Unlock()
		}
		ok, err := c.ssd.Delete(ctx, key)
		if err != nil {
			return found, err
		}
		found = found || ok
	}
	return found, nil
}

// InvalidateReport says how many entries an invalidation removed from each
// tier; a key held by several tiers counts in each.
type InvalidateReport struct {
	DRAM     int
	Resident int
	SSD      int
}

// DeletePrefix removes, from every tier, every key of shard whose record key
// starts with recordPrefix ("" for the whole shard).
func (c *Cache) DeletePrefix(ctx context.Context, shard uint64, recordPrefix string) (InvalidateReport, error) {
	return c.invalidate(ctx, shard, recordPrefix)
}

// DeleteShard removes every key of shard from every tier.
func (c *Cache) DeleteShard(ctx context.Context, shard uint64) (InvalidateReport, error) {
	return c.invalidate(ctx, shard, "")
}

// invalidate holds every DRAM shard's lock while it deletes from the lower
// tiers, so no read refills, and no eviction demotes, a value of the range
// between the tiers' deletes: the cache pauses for the range deletes.
func (c *Cache) invalidate(ctx context.Context, shardID uint64, prefix string) (InvalidateReport, error) {
	var r InvalidateReport
	if err := c.enter(); err != nil {
		return r, err
	}
	defer c.exit()
	for _, s := range c.shards {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	for _, s := range c.shards {
		for h, e := range s.m.all() {
			if e.shard == shardID && strings.HasPrefix(e.record, prefix) {
				s.dropLocked(h, e)
				r.DRAM++
			}
		}
	}
	var err error
	if c.res != nil {
		if r.Resident, err = c.res.DeletePrefix(ctx, shardID, prefix); err != nil {
			return r, err
		}
	}
	if c.ssd != nil {
		if c.wb != nil {
			c.wb.forget(matchPrefix(shardID, prefix))
			defer c.wb.commitMu.Unlock()
		}
		r.SSD, err = c.ssd.DeletePrefix(ctx, shardID, prefix)
	}
	return r, err
}

// PurgeExpired removes every expired value from every tier, except DRAM
// entries a Handle pins, and reports how many each tier removed (a key held
// by both counts in both).
func (c *Cache) PurgeExpired(ctx context.Context) (InvalidateReport, error) {
	var r InvalidateReport
	defer c.deliverEvictions()
	if err := c.enter(); err != nil {
		return r, err
	}
	defer c.exit()
	now := c.now()
	for _, s := range c.shards {
		s.mu.Lock()
		for h, e := range s.m.all() {
			if e.expired(now) && !s.pinnedLocked(h) {
				s.dropLocked(h, e)
				c.st.dramExpired.Add(1)
				r.DRAM++
				if c.wantEvictions() {
					c.evicted(EvictionEvent{Key: e.key(), Value: e.value(), Tier: TierDRAM, Cause: EvictionExpired})
				}
			}
		}
		s.mu.Unlock()
	}
	if c.res != nil {
		n, err := c.res.PurgeExpired(ctx)
		r.Resident = n
		if err != nil {
			return r, err
		}
	}
	if c.ssdSt != nil {
		n, err := c.ssdSt.PurgeExpired(ctx)
		r.SSD = n
		if err != nil {
			return r, err
		}
	}
	return r, nil
}

// Handle is a pinned reference to a cached value, from Acquire. While a
// handle is held its DRAM entry is never evicted, and no expiry or capacity
// reclaim drops it (Delete does, but the handle keeps its bytes).
//
// Value is the cache's own buffer, shared and not copied: it stays valid and
// unchanged until Release (an overwrite of the key installs a new buffer; it
// never writes into this one), and the caller must not modify it or use it
// after Release.
type Handle struct {
	c        *Cache
	s        *shard
	h        uint64
	key      blockfmt.Key
	value    []byte
	tier     Tier
	pin      *pinRef
	released atomic.Bool
}

// Key is the handle's key.
func (h *Handle) Key() blockfmt.Key { return h.key }

// Value is the shared value buffer; see Handle for how long it is valid.
func (h *Handle) Value() []byte { return h.value }

// Tier is the tier that answered the Acquire.
func (h *Handle) Tier() Tier { return h.tier }

// Release drops the handle's pin. Later calls do nothing.
func (h *Handle) Release() {
	if h.released.Swap(true) {
		return
	}
	if h.pin == nil {
		return
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if h.pin.n > 0 {
		h.pin.n--
		h.c.st.unpins.Add(1)
		if h.pin.live {
			h.s.pol.Unpin(h.h)
			if h.pin.n == 0 {
				delete(h.s.pins, h.h)
			}
		}
	}
}

// Acquire returns a pinned handle on key's value, reading through from the
// SSD tier and pinning the refilled DRAM copy. When DRAM cannot take the
// value, the handle holds the SSD copy unpinned. It fails with ErrNotFound
// when no tier holds a live value.
func (c *Cache) Acquire(ctx context.Context, key blockfmt.Key) (*Handle, error) {
	hd, err := c.acquire(ctx, key)
	c.deliverEvictions()
	if err == nil {
		c.recordAccess(AccessGet, key, true, hd.tier)
	} else if errors.Is(err, ErrNotFound) {
		c.recordAccess(AccessGet, key, false, TierNone)
	}
	return hd, err
}

// AcquireBatch is Acquire of each key in order: handles[i] answers keys[i],
// nil when no tier holds a live value. A key repeated in the batch is read
// from the lower tiers once (a repeat of a key DRAM took is a DRAM hit), and
// every position holds its own pin, so each handle's Release balances one.
// Counters are those of a loop of Acquire. On an error other than a miss it
// releases the handles it made and returns the error.
func (c *Cache) AcquireBatch(ctx context.Context, keys []blockfmt.Key) ([]*Handle, error) {
	out := make([]*Handle, len(keys))
	var memo map[blockfmt.Key]lowerRead
	if len(keys) > 1 {
		memo = make(map[blockfmt.Key]lowerRead)
	}
	for i, k := range keys {
		hd, err := c.acquireVia(ctx, k, memo)
		c.deliverEvictions()
		switch {
		case err == nil:
			out[i] = hd
			c.recordAccess(AccessGet, k, true, hd.tier)
		case errors.Is(err, ErrNotFound):
			c.recordAccess(AccessGet, k, false, TierNone)
		default:
			for _, h := range out[:i] {
				if h != nil {
					h.Release()
				}
			}
			return nil, err
		}
	}
	return out, nil
}

func (c *Cache) acquire(ctx context.Context, key blockfmt.Key) (*Handle, error) {
	return c.acquireVia(ctx, key, nil)
}

// acquireVia is acquire reading the lower tiers through memo (see
// readLockedVia); nil memo reads them every time.
func (c *Cache) acquireVia(ctx context.Context, key blockfmt.Key, memo map[blockfmt.Key]lowerRead) (*Handle, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h := hashKey(key)
	s := c.shardFor(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, v, tier, err := c.readLockedVia(ctx, s, h, key, c.now(), true, true, memo)
	if err != nil {
		return nil, err
	}
	if tier == TierNone {
		return nil, ErrNotFound
	}
	hd := &Handle{c: c, s: s, h: h, key: key, value: v, tier: tier}
	if e != nil {
		hd.pin = s.pins[h]
	}
	return hd, nil
}

// Result is one answer of GetBatch.
type Result struct {
	Value []byte
	Tier  Tier
	Found bool
}

// GetBatch answers keys in order, duplicates at every position, with the
// same results as a loop of Get, and the same hit and miss counters of
// every tier. A duplicate of a key a lower tier answered (or that no tier
// held) is answered from DRAM when the refill put it there; otherwise from
// that first read, without reading the lower tiers again or retrying the
// refill: each distinct key reads the SSD and resident tiers at most once
// per batch, and is refilled at most once (so DRAM.Promotions and
// RefillFailures count once per distinct key, where a loop of Get counts
// each retry). Such positions are counted in Stats.BatchReadsCoalesced. A
// duplicate thus answers the value its key had at its first read, even if
// another goroutine wrote the key to a lower tier since. It stops at the
// first error.
func (c *Cache) GetBatch(ctx context.Context, keys []blockfmt.Key) ([]Result, error) {
	out := make([]Result, len(keys))
	var memo map[blockfmt.Key]lowerRead
	if len(keys) > 1 {
		memo = make(map[blockfmt.Key]lowerRead)
	}
	for i, k := range keys {
		v, t, ok, err := c.getBatched(ctx, k, memo)
		if err != nil {
			return out[:i], err
		}
		out[i] = Result{Value: bytes.Clone(v), Tier: t, Found: ok}
		c.recordAccess(AccessGet, k, ok, t)
	}
	return out, nil
}

// getBatched is Get's read for GetBatch: a live DRAM hit takes no lock, as
// in read; anything else reads through memo.
func (c *Cache) getBatched(ctx context.Context, key blockfmt.Key, memo map[blockfmt.Key]lowerRead) ([]byte, Tier, bool, error) {
	if c.closed.Load() {
		return nil, TierNone, false, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, TierNone, false, err
	}
	h := hashKey(key)
	s := c.shardFor(h)
	if e := c.loadLive(s, h, key); e != nil {
		c.recordHit(s, &s.reads.stripes[stackStripe()], h, e)
		return e.value(), TierDRAM, true, nil
	}
	if err := c.enter(); err != nil {
		return nil, TierNone, false, err
	}
	defer c.exitDeliver(nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	_, v, tier, err := c.readLockedVia(ctx, s, h, key, c.now(), true, false, memo)
	if err != nil || tier == TierNone {
		return nil, TierNone, false, err
	}
	return v, tier, true, nil
}

// Item is one write of PutBatch.
type Item struct {
	Key     blockfmt.Key
	Value   []byte
	Options PutOptions
}

// PutBatch writes items in order, and a later item of a key wins: an item
// whose key a later item of the batch writes is skipped (not even checked
// for size), so each key is written once, to every tier, with its last
// item's value and options. The items written have the results and
// counters of a loop of Put over them, in their order; the skipped ones
// count only in Stats.BatchWritesCoalesced. It stops at the first error.
func (c *Cache) PutBatch(ctx context.Context, items []Item) error {
	last := make(map[blockfmt.Key]int, len(items))
	for i, it := range items {
		last[it.Key] = i
	}
	for i, it := range items {
		if last[it.Key] != i {
			c.st.batchWrites.Add(1)
			continue
		}
		if err := c.Put(ctx, it.Key, it.Value, it.Options); err != nil {
			return err
		}
	}
	return nil
}

// DeleteBatch deletes keys from every tier and returns how many positions
// of keys named a key some tier held before the batch: a duplicate counts
// at each of its positions, as the original's remove_batch does, and is
// deleted once. It stops at the first error.
func (c *Cache) DeleteBatch(ctx context.Context, keys []blockfmt.Key) (int, error) {
	held := make(map[blockfmt.Key]bool, len(keys))
	n := 0
	for _, k := range keys {
		was, seen := held[k]
		if !seen {
			ok, err := c.Delete(ctx, k)
			if err != nil {
				return n, err
			}
			was, held[k] = ok, ok
		}
		if was {
			n++
		}
	}
	return n, nil
}

// recover refills DRAM from the resident tier, then the SSD tier, up to
// each shard's capacity, without evicting anything: AutoRecoverOnStart.
// Both tiers hold the same value of a key, when both hold it.
func (c *Cache) recover(ctx context.Context) error {
	now := c.now()
	full := 0
	fill := func(from Tier) func(blockfmt.Block) bool {
		return func(b blockfmt.Block) bool {
			if b.Expired(now) {
				return true
			}
			h := hashKey(b.Key)
			s := c.shardFor(h)
			s.mu.Lock()
			defer s.mu.Unlock()
			cost := entryCost(b.Key, len(b.Value))
			if s.m.load(h) != nil || !c.fitsDRAM(s, b.Key, len(b.Value)) {
				return true
			}
			if s.pol.Cost()+cost > s.capacity {
				full++
				return full < 4*len(c.shards)
			}
			_, slot, err := s.pol.AdmitSlot(h, policy.NoSlot, cost, s.victims[:0])
			if err != nil {
				return true
			}
			e := s.newEntryLocked(b.Key, b.Value, b.Kind, b.Hotness, b.ExpiresAt, slot)
			e.persisted, e.inResident = c.ssd != nil, from == TierResident
			s.installLocked(h, e)
			c.st.recovered.Add(1)
			return true
		}
	}
	if c.res != nil {
		if err := c.res.Iterate(ctx, fill(TierResident)); err != nil {
			return fmt.Errorf("matrixcache: recover from the resident tier: %w", err)
		}
	}
	if c.ssd != nil && full < 4*len(c.shards) {
		if err := c.ssd.Iterate(ctx, fill(TierSSD)); err != nil {
			return fmt.Errorf("matrixcache: recover from the SSD tier: %w", err)
		}
	}
	return nil
}

// ErrInvalidCapacity is returned by SetDRAMCapacity for a negative capacity.
var ErrInvalidCapacity = errors.New("matrixcache: invalid capacity")

// SetDRAMCapacity changes the DRAM tier's capacity, split over the shards as
// New splits it, and evicts each shard down to its new share at once,
// demoting live victims as eviction always does (expired ones are dropped,
// never demoted). Pinned entries stay, even above the new capacity; the
// shard shrinks further as they are released and later writes evict. 0
// leaves DRAM holding only pinned entries.
func (c *Cache) SetDRAMCapacity(ctx context.Context, bytes int64) error {
	if bytes < 0 {
		return fmt.Errorf("%w: %d bytes", ErrInvalidCapacity, bytes)
	}
	defer c.deliverEvictions()
	if c.lower {
		if err := c.enter(); err != nil {
			return err
		}
		defer c.exit()
	} else if c.closed.Load() {
		return ErrClosed
	}
	n := int64(len(c.shards))
	for i, s := range c.shards {
		cp := bytes / n
		if int64(i) < bytes%n {
			cp++
		}
		s.mu.Lock()
		c.drainLocked(s)
		s.capacity = cp
		// ErrNoRoom only says pinned entries hold more than cp.
		victims, err := s.pol.SetCapacity(cp, s.victims[:0])
		if errors.Is(err, policy.ErrNoRoom) {
			c.st.dramNoRoom.Add(1)
		}
		c.evictLocked(ctx, s, victims, &clockReading{c: c})
		s.victims = victims[:0]
		s.mu.Unlock()
	}
	t := *c.tiers.Load()
	t.DRAMCapacityBytes = bytes
	c.tiers.Store(&t)
	return nil
}

// Key names a cache entry (see blockfmt.Key).
type Key = blockfmt.Key

// KeyOf is the key of one string, for a cache whose user names entries
// that way: matrixcache.KeyOf("user:42").
func KeyOf(record string) Key { return blockfmt.KeyOf(record) }
