package object

import (
	"fmt"
	"sync/atomic"
)

// Kind is an object's type.
type Kind uint8

// Kinds. Numbers are stable: checkpoints store them.
const (
	KindHash Kind = 1
	KindSet  Kind = 2
	KindZSet Kind = 3
	KindList Kind = 4
	// KindSeries is a feature series (not a Redis type).
	KindSeries Kind = 5
	// KindControl is control state: counters, distinct values, a
	// selection (not a Redis type).
	KindControl Kind = 6
)

// String is the kind's name as Redis's TYPE gives it.
func (k Kind) String() string {
	switch k {
	case KindHash:
		return "hash"
	case KindSet:
		return "set"
	case KindZSet:
		return "zset"
	case KindList:
		return "list"
	case KindSeries:
		return "series"
	case KindControl:
		return "controlstate"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Object is one collection under Key. Exactly the field of its Kind is set.
type Object struct {
	Key  []byte
	Kind Kind
	// Expiry is when the object expires (Unix ms); 0 for never.
	Expiry int64
	// Ver is the log index of the last record that changed the object,
	// for WATCH. It is not part of the image: a checkpoint's objects
	// start at the checkpoint's applied index.
	Ver uint64
	// Snap is the shard's checkpoint epoch the object was made writable
	// in (see the shard's writableLocked); not part of the image.
	Snap uint64
	// Touched is set by every read and write of a resident object and
	// cleared by the shard's spill clock, which spills the objects it finds
	// untouched: a second chance, as CLOCK gives.
	Touched atomic.Bool

	// Hash and Set are read directly; they are written through HSet,
	// HDel, SAdd and SRem, which keep mapBytes.
	Hash    map[string][]byte
	Set     map[string]struct{}
	ZSet    *ZSet
	List    *List
	Series  *Series
	Control *Control

	// mapBytes is the field, value and member bytes of a hash or set.
	mapBytes int64

	// Accounted is the Size a memory budget last counted for the object.
	// Its holder moves the count by Size - Accounted at each change, so
	// what the object grew between changes (a rollup ladder a read built)
	// is counted at its next one, and taking Accounted away frees exactly
	// what was counted.
	Accounted int64
}

// Per-element memory beyond the element's bytes, approximate: Go's map
// entry and string and slice headers for a hash or set; the skip list node,
// its levels and the score map's entry for a sorted set; the ring slot for
// a list. objectOverhead is an object's own.
const (
	hashOverhead   = 64
	setOverhead    = 32
	zsetOverhead   = 112
	listOverhead   = 32
	seriesOverhead = 32
	bucketOverhead = 16
	changeOverhead = 64
	objectOverhead = 128
	// rollCellBytes is a rollup cell: its map entry (key and Agg) and
	// the map's share of control bytes and slack.
	rollCellBytes = 72
)

// Size is the object's approximate memory, kept as it changes: what a
// shard counts against its collection budget.
func (o *Object) Size() int64 {
	n := int64(objectOverhead + len(o.Key))
	switch o.Kind {
	case KindHash:
		n += o.mapBytes + int64(len(o.Hash))*hashOverhead
	case KindSet:
		n += o.mapBytes + int64(len(o.Set))*setOverhead
	case KindZSet:
		n += 2*o.ZSet.Bytes() + int64(o.ZSet.Len())*zsetOverhead
	case KindList:
		n += o.List.Bytes() + int64(o.List.Len())*listOverhead
	case KindSeries:
		n += o.Series.Bytes() + int64(o.Series.Len())*seriesOverhead + o.Series.RollupBytes()
	case KindControl:
		c := o.Control
		n += c.bytes + int64(c.Buckets())*bucketOverhead + int64(c.elements()-c.Buckets())*changeOverhead
	}
	return n
}

// HSet sets a hash's field to v (kept, not copied).
func (o *Object) HSet(f string, v []byte) {
	if old, ok := o.Hash[f]; ok {
		o.mapBytes -= int64(len(old))
	} else {
		o.mapBytes += int64(len(f))
	}
	o.Hash[f] = v
	o.mapBytes += int64(len(v))
}

// HDel removes a hash's field and reports whether it was there.
func (o *Object) HDel(f string) bool {
	old, ok := o.Hash[f]
	if ok {
		delete(o.Hash, f)
		o.mapBytes -= int64(len(f) + len(old))
	}
	return ok
}

// SAdd adds a set member.
func (o *Object) SAdd(m string) {
	if _, ok := o.Set[m]; !ok {
		o.Set[m] = struct{}{}
		o.mapBytes += int64(len(m))
	}
}

// SRem removes a set member and reports whether it was there.
func (o *Object) SRem(m string) bool {
	_, ok := o.Set[m]
	if ok {
		delete(o.Set, m)
		o.mapBytes -= int64(len(m))
	}
	return ok
}

// New returns an empty object of kind k under key (copied).
func New(k Kind, key []byte) *Object {
	o := &Object{Key: append([]byte(nil), key...), Kind: k}
	switch k {
	case KindHash:
		o.Hash = map[string][]byte{}
	case KindSet:
		o.Set = map[string]struct{}{}
	case KindZSet:
		o.ZSet = NewZSet()
	case KindList:
		o.List = &List{}
	case KindSeries:
		o.Series = &Series{}
	case KindControl:
		o.Control = &Control{}
	}
	return o
}

// Len is the number of elements.
func (o *Object) Len() int {
	switch o.Kind {
	case KindHash:
		return len(o.Hash)
	case KindSet:
		return len(o.Set)
	case KindZSet:
		return o.ZSet.Len()
	case KindList:
		return o.List.Len()
	case KindSeries:
		return o.Series.Len()
	case KindControl:
		return o.Control.Len()
	}
	return 0
}

// Expired reports whether the object has expired at now (Unix ms).
func (o *Object) Expired(now int64) bool { return o.Expiry != 0 && o.Expiry <= now }
