package shard

import (
	"context"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
)

// StringRead is one key's result of AppendStrings: its value is
// dst[Start:End] of the returned buffer when Found.
type StringRead struct {
	Start, End int
	Found      bool
	Err        error
}

// stringBatch is how many keys AppendStrings looks up in one round of
// passes: its per-key state lives on the stack.
const stringBatch = 64

// AppendStrings is AppendString for many keys, read under one hold of the
// shard's read lock (so they are one snapshot, as a View's reads are): it
// appends each found value to dst and sets reads[i] for keys[i]. For a key
// holding a collection it sets coll[i] and reads nothing: the caller reads
// that key apart (AppendString's general path).
//
// It looks the keys up in rounds of up to stringBatch, each in passes:
// every key's index slot, then the entry each most likely is, the recent
// record that points at and the command's bytes in it, then the lookups
// themselves. Each pass is a short loop of loads that do not depend on one
// another, so their cache misses overlap; one key at a time, a read waits
// for its slot, its record's place and its record in turn.
func (s *Shard) AppendStrings(ctx context.Context, dst []byte, keys [][]byte, reads []StringRead, coll []bool) []byte {
	if s.held {
		for i, k := range keys {
			start := len(dst)
			var err error
			dst, reads[i].Found, coll[i], err = s.AppendString(ctx, dst, k)
			reads[i].Start, reads[i].End, reads[i].Err = start, len(dst), err
		}
		return dst
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		for i := range keys {
			reads[i] = StringRead{Start: len(dst), End: len(dst), Err: ErrClosed}
		}
		return dst
	}
	for lo := 0; lo < len(keys); lo += stringBatch {
		hi := min(len(keys), lo+stringBatch)
		dst = s.appendStringsLocked(dst, keys[lo:hi], reads[lo:hi], coll[lo:hi])
	}
	return dst
}

// appendStringsLocked is one round of AppendStrings, at most stringBatch
// keys, under the shard's read lock.
func (s *Shard) appendStringsLocked(dst []byte, keys [][]byte, reads []StringRead, coll []bool) []byte {
	var hs [stringBatch]uint64
	var held [stringBatch]heldRecord
	for i, k := range keys {
		hs[i] = hashKey(k)
	}
	s.touchEntriesLocked(hs[:len(keys)], held[:len(keys)], true)
	var now int64
	for i, k := range keys {
		v, ok, isColl, err := s.findStringLocked(k, hs[i], held[i])
		coll[i] = isColl
		r := StringRead{Start: len(dst), Err: err}
		if ok && !isColl {
			if v.Expiry != 0 && now == 0 {
				now = s.opts.Now().UnixMilli()
			}
			if r.Found = v.Expiry == 0 || v.Expiry > now; r.Found {
				dst = append(dst, v.Arg...)
			}
		}
		r.End = len(dst)
		reads[i] = r
	}
	return dst
}

// findStringLocked looks key (hash h) up for a string read, under the
// shard's read lock: the command's key, expiry and value (in place),
// whether an entry matched, and whether it is a collection, whose expiry,
// recency and spilled state are the general path's. held is the recent
// record the entry points at when the caller has it already.
func (s *Shard) findStringLocked(key []byte, h uint64, held heldRecord) (v command.Value, ok, coll bool, err error) {
	m := keyMatch{s: s, key: key, fill: fillAlways, valueOnly: true, held: held}
	e, ok := s.index.Get(h, m.match)
	return m.val, ok, ok && (isObject(e) || isSpilled(e)), m.err
}

// touchEntriesLocked loads, for the keys hashed hs, what their lookups
// will read, in passes whose loads do not depend on one another, so their
// cache misses overlap: every key's index slot, then the entry each most
// likely is (without checking its key), the record that points at and the
// command's bytes in it. held[i] gets hs[i]'s record when it is a recent
// one, or, with cached, one the record cache has (a lookup the read then
// skips: writes, which match keys without held records, pass false). The
// caller holds the shard's lock, read or write.
func (s *Shard) touchEntriesLocked(hs []uint64, held []heldRecord, cached bool) {
	var sink uint32
	for _, h := range hs {
		sink += s.index.Touch(h)
	}
	cached = cached && s.opts.Cache != nil
	if s.recent == nil && !cached {
		keep(sink)
		return
	}
	var offs [stringBatch]int
	for i, h := range hs {
		if e, ok := s.index.Peek(h); ok && !isObject(e) && !isSpilled(e) {
			held[i].addr, offs[i] = e.Addr, loc(e).Offset // 0: the record's start
		}
	}
	if s.recent != nil {
		s.recent.mu.RLock()
		for i := range hs {
			if held[i].addr != 0 {
				if slot, ok := s.recent.getLocked(held[i].addr); ok {
					held[i].rec, held[i].cmds = slot.rec, slot.cmds
				}
			}
		}
		s.recent.mu.RUnlock()
	}
	if cached {
		s.heldFromCache(held[:len(hs)])
	}
	for i := range hs {
		// The command's own bytes: in a batch record they can be lines
		// away from its start.
		if offs[i] < len(held[i].rec) {
			sink += uint32(held[i].rec[offs[i]])
		}
	}
	keep(sink)
}

// keep is where AppendStrings' touches end up, so that the compiler keeps
// the loads.
//
//go:noinline
func keep(uint32) {}

// heldFromCache gives each held record that is not a recent one the
// record cache's copy, when the cache has it, so that the pass after
// touches its bytes with the others' and their misses overlap.
func (s *Shard) heldFromCache(held []heldRecord) {
	c, id := s.opts.Cache, s.opts.CacheID
	var addrs [stringBatch]uint64
	var at [stringBatch]int
	n := 0
	for i := range held {
		if held[i].addr != 0 && held[i].rec == nil {
			addrs[n], at[n] = held[i].addr, i
			n++
		}
	}
	c.Prefetch(id, addrs[:n])
	for j, addr := range addrs[:n] {
		// The cache's own buffer, as readRecord takes it.
		if v, ok := c.GetShared(id, addr); ok {
			held[at[j]].rec = v
		}
	}
}
