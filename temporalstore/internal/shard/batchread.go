package shard

import "context"

// StringRead is one key's result of AppendStrings: its value is
// dst[Start:End] of the returned buffer when Found.
type StringRead struct {
	Start, End int
	Found      bool
	Err        error
}

// MaxStringBatch is the most keys AppendStrings takes at once.
const MaxStringBatch = 64

// AppendStrings is AppendString for many keys (at most MaxStringBatch):
// it appends each found value to dst and sets reads[i] for keys[i]. For a
// key holding a collection it sets coll[i] and reads nothing: the caller
// reads that key apart (AppendString's general path).
//
// It takes the shard's read lock once and looks the keys up in three
// passes: every key's index slot, then the record each most likely points
// at, then the lookups themselves. Each pass's loads do not depend on one
// another, so their cache misses overlap; one key at a time, a read waits
// for its slot, its record's place and its record in turn.
func (s *Shard) AppendStrings(ctx context.Context, dst []byte, keys [][]byte, reads []StringRead, coll []bool) []byte {
	if len(keys) > MaxStringBatch {
		panic("shard: AppendStrings of more than MaxStringBatch keys")
	}
	if s.inTx(ctx) {
		for i, k := range keys {
			start := len(dst)
			var err error
			dst, reads[i].Found, coll[i], err = s.AppendString(ctx, dst, k)
			reads[i].Start, reads[i].End, reads[i].Err = start, len(dst), err
		}
		return dst
	}
	var hs [MaxStringBatch]uint64
	var held [MaxStringBatch]heldRecord
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		for i := range keys {
			reads[i] = StringRead{Start: len(dst), End: len(dst), Err: ErrClosed}
		}
		return dst
	}
	var sink uint32
	for i, k := range keys {
		hs[i] = hashKey(k)
		sink += s.index.Touch(hs[i])
	}
	if s.recent != nil {
		// Each pass is a short loop of independent loads, so that many
		// of its iterations, and their misses, are in flight at once.
		var offs [MaxStringBatch]int
		for i := range keys {
			if e, ok := s.index.Peek(hs[i]); ok && !isObject(e) && !isSpilled(e) {
				held[i].addr, offs[i] = e.Addr, loc(e).Offset // 0: the record's start
			}
		}
		s.recent.mu.RLock()
		for i := range keys {
			if held[i].addr != 0 {
				if slot, ok := s.recent.getLocked(held[i].addr); ok {
					held[i].rec, held[i].cmds = slot.rec, slot.cmds
				}
			}
		}
		s.recent.mu.RUnlock()
		for i := range keys {
			// The command's own bytes: in a batch record they can be
			// lines away from its start.
			if offs[i] < len(held[i].rec) {
				sink += uint32(held[i].rec[offs[i]])
			}
		}
	}
	keep(sink)
	var now int64
	for i, k := range keys {
		m := keyMatch{s: s, key: k, fill: fillAlways, valueOnly: true, held: held[i]}
		e, ok := s.index.Get(hs[i], m.match)
		coll[i] = ok && (isObject(e) || isSpilled(e))
		r := StringRead{Start: len(dst), Err: m.err}
		if ok && !coll[i] {
			if m.val.Expiry != 0 && now == 0 {
				now = s.opts.Now().UnixMilli()
			}
			if r.Found = m.val.Expiry == 0 || m.val.Expiry > now; r.Found {
				dst = append(dst, m.val.Arg...)
			}
		}
		r.End = len(dst)
		reads[i] = r
	}
	s.mu.RUnlock()
	return dst
}

// keep is where AppendStrings' touches end up, so that the compiler keeps
// the loads.
//
//go:noinline
func keep(uint32) {}
