package shard

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/keyindex"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
)

// Item is a key's live state: absent (Exists false), a string (Value,
// Obj nil) or a collection (Obj). Expiry is zero for none. Value may be
// the record cache's own buffer: read it, never modify it.
type Item struct {
	Exists bool
	Value  []byte
	Obj    *object.Object
	Expiry time.Time
	// spilled is the index entry Obj was decoded from, for a spilled
	// collection (Addr 0 otherwise): Read makes it resident after.
	spilled keyindex.Entry
}

// lookupLocked returns key's state as of now (Unix ms): an expired key is
// absent.
func (s *Shard) lookupLocked(key []byte, now int64) (Item, error) {
	var it Item
	m := &keyMatch{s: s, key: key, fill: fillAlways}
	e, ok := s.index.Get(hashKey(key), m.match)
	str := m.cmd
	switch {
	case !ok:
		return it, m.err
	case isObject(e) || isSpilled(e):
		var o *object.Object
		if isSpilled(e) {
			var err error
			if o, err = decodeSpilled(&str); err != nil {
				return it, fmt.Errorf("shard: record %d: %w", e.Addr, err)
			}
			it.spilled = e
		} else {
			o = s.objs[e.Addr]
			if !o.Touched.Load() { // no store (and no shared-line write) when set
				o.Touched.Store(true)
			}
		}
		if o.Expired(now) {
			return Item{}, nil
		}
		it.Exists, it.Obj, it.Expiry = true, o, expiryTime(o.Expiry)
	default:
		if str.Expiry != 0 && str.Expiry <= now {
			return it, nil
		}
		it.Exists, it.Value, it.Expiry = true, str.Args[0], expiryTime(str.Expiry)
	}
	return it, nil
}

// expiryTime is an expiry in Unix ms as Item.Expiry holds it: zero for
// none.
func expiryTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// View is a Mutate function's read access to the shard: every write
// appended before the Mutate is applied, and none lands until it returns.
// Objects it returns must not be modified or kept.
type View struct {
	s   *Shard
	now int64
	// decoded are the spilled collections Get decoded, which Read makes
	// resident when the budget has room.
	decoded []Item
	// pending, in a combined batch, is the state of the string keys that
	// earlier mutations of the batch set or deleted, not yet applied.
	pending map[string]Item
}

// Get returns key's state.
func (v *View) Get(key []byte) (Item, error) {
	if it, ok := v.pending[string(key)]; ok {
		if !it.Expiry.IsZero() && it.Expiry.UnixMilli() <= v.now {
			return Item{}, nil
		}
		return it, nil
	}
	it, err := v.s.lookupLocked(key, v.now)
	if it.spilled.Addr != 0 {
		v.decoded = append(v.decoded, it)
	}
	return it, err
}

// Now is the time the Mutate judges expiry by, and stamps its commands with.
func (v *View) Now() time.Time { return time.UnixMilli(v.now) }

// MutateFunc reads the shard through v and returns the commands to log and
// apply, in order, as one crash-atomic record (none: nothing is written).
// An error aborts the Mutate and changes nothing. It must not keep v.
type MutateFunc func(v *View) ([]command.Command, error)

// Mutate is a read-modify-write over any keys of the shard: fn sees the
// state every write appended before it left, and no write lands between
// that read and Mutate's own. It holds the shard's append gate
// exclusively: new appends wait, those in flight are applied first. Each
// command's Time is set to View.Now, so replay judges expiry as fn did.
func (s *Shard) Mutate(ctx context.Context, fn MutateFunc) error {
	err := s.mutate(ctx, fn)
	if err == nil && !s.held {
		s.spillIfOver(ctx)
	}
	return err
}

func (s *Shard) mutate(ctx context.Context, fn MutateFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !s.held {
		return s.combine(ctx, nil, fn)
	}
	if s.closed || s.failed != nil {
		return cmp.Or(s.failed, ErrClosed)
	}
	v := &View{s: s, now: s.opts.Now().UnixMilli()}
	cmds, err := s.evalSafely(fn, v)
	if err != nil || len(cmds) == 0 {
		return err
	}
	if err := stamp(cmds, v.now); err != nil {
		return err
	}
	return s.appendApply(ctx, cmds, false)
}

// stamp checks cmds' keys and sets their time.
func stamp(cmds []command.Command, now int64) error {
	for i := range cmds {
		if len(cmds[i].Key) == 0 {
			return ErrEmptyKey
		}
		cmds[i].Time = now
	}
	return nil
}

// allocObject stores o in a free slot and returns the slot. A snapshot
// being encoded does not hold o, so o is writable in its epoch.
func (s *Shard) allocObject(o *object.Object) uint64 {
	o.Snap = s.snapEpoch.Load()
	o.Accounted = 0
	s.recount(o)
	o.Touched.Store(true)
	if n := len(s.free); n > 0 {
		i := s.free[n-1]
		s.free = s.free[:n-1]
		s.objs[i] = o
		return uint64(i)
	}
	s.objs = append(s.objs, o)
	return uint64(len(s.objs) - 1)
}

// writableLocked returns the object in slot i for a change: itself, or,
// while a checkpoint encodes a snapshot that may hold it, a copy that
// takes its slot (once per snapshot), so that the snapshot's object never
// changes under the encoder. Under the write lock.
func (s *Shard) writableLocked(i uint64) *object.Object {
	o := s.objs[i]
	if s.snapActive.Load() == 0 {
		return o
	}
	epoch := s.snapEpoch.Load()
	if o.Snap == epoch {
		return o
	}
	c, err := o.Clone()
	if err != nil { // no elements, so no image to copy through
		c = object.New(o.Kind, o.Key)
		c.Expiry, c.Ver = o.Expiry, o.Ver
	}
	c.Snap, c.Accounted = epoch, o.Accounted
	c.Touched.Store(o.Touched.Load())
	s.objs[i] = c
	s.recount(c)
	return c
}

func (s *Shard) freeObject(i uint64) {
	s.objDelta(-s.objs[i].Accounted)
	s.objs[i] = nil
	s.free = append(s.free, uint32(i))
}

// opKind is the collection type an op works on.
func opKind(op command.Op) object.Kind {
	switch op {
	case OpHSet, OpHDel:
		return object.KindHash
	case OpSAdd, OpSRem:
		return object.KindSet
	case OpZAdd, OpZRem:
		return object.KindZSet
	case OpLPush, OpRPush, OpLPop, OpRPop, OpLSet, OpLTrim, OpLRem, OpLInsert:
		return object.KindList
	case OpFUpsert, OpFReplace, OpFTrimBefore:
		return object.KindSeries
	case OpCAdd, OpCChange, OpCSelect, OpCPace, OpCTrimBefore:
		return object.KindControl
	}
	return 0
}

// creates reports whether op makes the collection when it is absent.
func creates(op command.Op) bool {
	switch op {
	case OpHSet, OpSAdd, OpZAdd, OpLPush, OpRPush, OpFUpsert, OpFReplace, OpCAdd, OpCChange, OpCSelect, OpCPace:
		return true
	}
	return false
}

// objectAt returns key's live collection as of time at, removing an
// expired one (the key is then absent), and creating one of kind k when
// absent and create is set. A live string under key, or a collection of
// another kind, yields nil: the engine checked types before logging, so
// that only happens for a damaged log, which must not crash replay.
func (s *Shard) objectAt(key []byte, k object.Kind, at int64, create bool) *object.Object {
	e, ok := s.residentLocked(key)
	if ok {
		if !isObject(e) {
			c, err := s.commandAt(e)
			if err != nil || c.Expiry == 0 || c.Expiry > at {
				return nil
			}
			s.deleteLocked(key) // an expired string gives way
		} else if o := s.objs[e.Addr]; o.Expired(at) {
			s.deleteLocked(key)
		} else if o.Kind != k {
			return nil
		} else {
			return s.writableLocked(e.Addr)
		}
	}
	if !create || k == 0 {
		return nil
	}
	o := object.New(k, key)
	s.putLocked(key, keyindex.Entry{Addr: s.allocObject(o), Meta: metaObject})
	return o
}

// applyObjectLocked applies a collection op (see the Op constants).
func (s *Shard) applyObjectLocked(c *command.Command) {
	switch c.Op {
	case OpExpireAt:
		s.applyExpireAt(c)
		return
	case OpRename:
		s.applyRename(c)
		return
	}
	o := s.objectAt(c.Key, opKind(c.Op), c.Time, creates(c.Op))
	if o == nil {
		return
	}
	o.Ver = s.applying
	o.Touched.Store(true)
	applyOp(o, c)
	s.recount(o)
	if o.Len() == 0 {
		// An emptied collection is no key at all, as in Redis.
		s.deleteLocked(c.Key)
	}
}

// applyOp applies collection op c to o, of c's kind. It is the whole
// effect on the object: the shard's apply and a combined batch's pending
// view (fold) both use it, so the view cannot drift from the apply.
func applyOp(o *object.Object, c *command.Command) {
	a := c.Args
	switch c.Op {
	case OpHSet:
		for i := 0; i+1 < len(a); i += 2 {
			o.HSet(string(a[i]), clone(a[i+1]))
		}
	case OpHDel:
		for _, f := range a {
			o.HDel(string(f))
		}
	case OpSAdd:
		for _, m := range a {
			o.SAdd(string(m))
		}
	case OpSRem:
		for _, m := range a {
			o.SRem(string(m))
		}
	case OpZAdd:
		for i := 0; i+1 < len(a); i += 2 {
			if sc, ok := DecodeScore(a[i+1]); ok {
				o.ZSet.Add(string(a[i]), sc)
			}
		}
	case OpZRem:
		for _, m := range a {
			o.ZSet.Remove(string(m))
		}
	case OpLPush:
		for _, v := range a {
			o.List.PushFront(clone(v))
		}
	case OpRPush:
		for _, v := range a {
			o.List.PushBack(clone(v))
		}
	case OpLPop, OpRPop:
		n := uvarintArg(a, 0)
		for ; n > 0 && o.List.Len() > 0; n-- {
			if c.Op == OpLPop {
				o.List.PopFront()
			} else {
				o.List.PopBack()
			}
		}
	case OpLSet:
		if i := varintArg(a, 0); len(a) == 2 && i >= 0 && i < int64(o.List.Len()) {
			o.List.Set(int(i), clone(a[1]))
		}
	case OpLTrim:
		o.List.Trim(int(varintArg(a, 0)), int(min(varintArg(a, 1), int64(o.List.Len()-1))))
	case OpLRem:
		if len(a) == 2 {
			o.List.Remove(int(varintArg(a, 0)), a[1])
		}
	case OpLInsert:
		if len(a) == 3 {
			o.List.Insert(string(a[0]) == "b", a[1], clone(a[2]))
		}
	case OpFUpsert, OpFReplace:
		pairs := 1
		if c.Op == OpFReplace {
			if len(a) < 3 {
				break
			}
			o.Series.DeleteRange(varintArg(a, 1), varintArg(a, 2))
			pairs = 3
		}
		for i := pairs; i+1 < len(a); i += 2 {
			o.Series.Upsert(varintArg(a, i), a[i+1])
		}
		if keep := uvarintArg(a, 0); keep > 0 {
			o.Series.TrimOldest(int(min(keep, math.MaxInt32)))
		}
	case OpFTrimBefore:
		if cut := varintArg(a, 0); cut > math.MinInt64 {
			o.Series.DeleteRange(math.MinInt64, cut-1)
		}
	case OpCAdd:
		if len(a) >= 2 {
			o.Control.Add(varintArg(a, 0), varintArg(a, 1))
		}
		if len(a) == 4 {
			o.Control.Record(string(a[2]), varintArg(a, 3), c.Time)
		}
	case OpCTrimBefore:
		if len(a) == 1 {
			o.Control.TrimBefore(varintArg(a, 0))
		}
	case OpCChange:
		if len(a) == 2 {
			o.Control.AddChange(varintArg(a, 0), clone(a[1]))
		}
	case OpCPace:
		if tat := varintArg(a, 0); tat != 0 {
			o.Control.Pace = tat
		}
	case OpCSelect:
		if len(a) == 3 {
			o.Control.Select(clone(a[0]), varintArg(a, 1), string(a[2]) == "l")
		}
	}
}

func (s *Shard) applyExpireAt(c *command.Command) {
	h, match := hashKey(c.Key), s.matcher(c.Key)
	e, ok := s.residentLocked(c.Key)
	if !ok || !isObject(e) {
		return
	}
	if s.objs[e.Addr].Expired(c.Time) {
		// Gone when the command was made, whether or not swept since:
		// an expiry does not bring it back.
		s.deleteLocked(c.Key)
		return
	}
	o := s.writableLocked(e.Addr)
	o.Expiry = c.Expiry
	o.Ver = s.applying
	e.Meta &^= metaTTL
	if c.Expiry != 0 {
		e.Meta |= metaTTL
	}
	s.indexPut(h, e, match)
}

func (s *Shard) applyRename(c *command.Command) {
	if len(c.Args) != 1 || len(c.Args[0]) == 0 {
		return
	}
	h, match := hashKey(c.Key), s.matcher(c.Key)
	e, ok := s.residentLocked(c.Key)
	if !ok || !isObject(e) {
		return
	}
	if s.objs[e.Addr].Expired(c.Time) {
		s.deleteLocked(c.Key)
		return
	}
	dst := c.Args[0]
	if bytes.Equal(dst, c.Key) {
		return
	}
	s.indexDelete(h, match)
	s.deleteLocked(dst)
	o := s.writableLocked(e.Addr)
	o.Key = clone(dst)
	s.recount(o)
	o.Ver = s.applying
	s.indexPut(hashKey(dst), e, s.matcher(dst))
}

func clone(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }

// EncodeScore is a sorted-set score as OpZAdd carries it.
func EncodeScore(f float64) []byte {
	if f == 0 {
		// A stored score of -0 is 0, as Redis stores it (a sorted set of
		// its usual size keeps scores as listpack entries, where -0 is 0).
		f = 0
	}
	return binary.LittleEndian.AppendUint64(nil, math.Float64bits(f))
}

// DecodeScore reads EncodeScore's bytes; a NaN is refused.
func DecodeScore(b []byte) (float64, bool) {
	if len(b) != 8 {
		return 0, false
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(b))
	return f, !math.IsNaN(f)
}

// Uvarint and Varint encode the integer arguments of list ops.
func Uvarint(n uint64) []byte { return binary.AppendUvarint(nil, n) }

// Varint encodes a signed integer argument.
func Varint(n int64) []byte { return binary.AppendVarint(nil, n) }

func uvarintArg(a [][]byte, i int) uint64 {
	if i >= len(a) {
		return 0
	}
	n, k := binary.Uvarint(a[i])
	if k <= 0 {
		return 0
	}
	return n
}

func varintArg(a [][]byte, i int) int64 {
	if i >= len(a) {
		return 0
	}
	n, k := binary.Varint(a[i])
	if k <= 0 {
		return 0
	}
	return n
}

// Read runs fn over the shard's applied state under its read lock. fn must
// not keep v or the objects it returns.
func (s *Shard) Read(ctx context.Context, fn func(v *View) error) error {
	if s.held {
		if s.closed {
			return ErrClosed
		}
		return s.readSafely(fn, &View{s: s, now: s.opts.Now().UnixMilli()})
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	// fn keeps no v, so views are reused rather than allocated per read.
	v := viewPool.Get().(*View)
	v.s, v.now = s, s.opts.Now().UnixMilli()
	err := s.readSafely(fn, v)
	s.mu.RUnlock()
	if len(v.decoded) > 0 {
		s.promote(v.decoded)
		clear(v.decoded)
		v.decoded = v.decoded[:0]
	}
	v.s = nil
	viewPool.Put(v)
	return err
}

var viewPool = sync.Pool{New: func() any { return new(View) }}

// AppendString appends key's string value to dst, as a Read's View.Get
// finds it, and reports whether the key holds a string (found) or a
// collection (coll, dst unchanged). An absent or expired key is neither.
// It is the path of a plain GET: it decodes the value alone, in place, and
// reads the clock only for a key with an expiry.
func (s *Shard) AppendString(ctx context.Context, dst, key []byte) (out []byte, found, coll bool, err error) {
	if s.held {
		return s.appendStringView(ctx, dst, key)
	}
	var ok bool
	dst, found, ok, coll, err = s.appendStringLocked(dst, key)
	switch {
	case !ok:
		return dst, false, false, err
	case coll:
		return s.appendStringView(ctx, dst, key)
	}
	return dst, found, false, nil
}

// appendStringLocked is AppendString's look-up under the read lock, which
// a panic in it (a record that does not decode as it should) lets go of
// and returns as its error.
func (s *Shard) appendStringLocked(dst, key []byte) (out []byte, found, ok, coll bool, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	defer func() {
		if r := recover(); r != nil {
			out, found, ok, coll, err = dst, false, false, false, s.contained(r)
		}
	}()
	if s.closed {
		return dst, false, false, false, ErrClosed
	}
	if s.getFault != nil {
		s.getFault(key)
	}
	v, ok, coll, err := s.findStringLocked(key, hashKey(key), heldRecord{})
	found = ok && !coll && (v.Expiry == 0 || v.Expiry > s.opts.Now().UnixMilli())
	if found {
		dst = append(dst, v.Arg...)
	}
	return dst, found, ok, coll, err
}

// appendStringView is AppendString through Read and View.Get.
func (s *Shard) appendStringView(ctx context.Context, dst, key []byte) (out []byte, found, coll bool, err error) {
	err = s.Read(ctx, func(v *View) error {
		it, err := v.Get(key)
		switch {
		case err != nil || !it.Exists:
			return err
		case it.Obj != nil:
			coll = true
		default:
			dst, found = append(dst, it.Value...), true
		}
		return nil
	})
	return dst, found, coll, err
}

// settleLocked waits, holding the gate exclusively, until every record
// appended is applied, and returns with s.mu unlocked. It fails when the
// shard is closed or its log failed.
func (s *Shard) settleLocked() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.closed && s.failed == nil && s.applied != s.log.LastIndex() {
		if s.applyReadyLocked(); s.applied == s.log.LastIndex() {
			break // a replicated log's foreign records, applied here
		}
		s.waiting++
		s.turn.Wait()
		s.waiting--
	}
	if s.closed {
		return ErrClosed
	}
	return s.failed
}

// Exclusive runs fn with the shard to itself: no other write appends and
// no other read sees the shard until fn returns, so the writes fn makes
// (through Mutate, Read ... on the handle it is given) are seen by
// others all at once, as a Redis transaction's. Each write is its own log
// record, and they reach the log together when fn returns, in one group
// that a crash keeps whole or drops whole (txgroup.go); Exclusive returns
// once they are there. fn must not touch the shard through another
// handle; other shards it may use normally. Through a handle that holds
// the shard already, Exclusive just calls fn with it.
func (s *Shard) Exclusive(ctx context.Context, fn func(held *Shard) error) error {
	if s.held {
		return fn(s)
	}
	err := s.exclusive(ctx, fn)
	s.spillIfOver(ctx)
	return err
}

func (s *Shard) exclusive(ctx context.Context, fn func(held *Shard) error) (err error) {
	s.gate.Lock()
	defer s.gate.Unlock()
	if err := s.settleLocked(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beginTxLocked()
	// Deferred, so that the writes applied before a panic reach the log
	// as well.
	defer func() {
		if cerr := s.commitTxLocked(false); err == nil {
			err = cerr
		}
	}()
	return fn(&Shard{shardState: s.shardState, held: true, also: s.also})
}

// Version is a token that changes whenever key is written: the log index
// of its string's record, or of the last record that changed its
// collection; 0 when the key is absent (an expired one included).
func (s *Shard) Version(ctx context.Context, key []byte) (uint64, error) {
	var ver uint64
	err := s.Read(ctx, func(v *View) error {
		e, ok := v.entry(key)
		if !ok {
			return nil
		}
		it, err := v.Get(key)
		if err != nil || !it.Exists {
			return err
		}
		if it.Obj != nil {
			ver = it.Obj.Ver
		} else {
			ver = e.Addr
		}
		return nil
	})
	return ver, err
}

// Same reports whether s and o are handles of the same shard.
func (s *Shard) Same(o *Shard) bool { return o != nil && s.shardState == o.shardState }
