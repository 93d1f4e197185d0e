package shard

import (
	"context"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/keyindex"
)

// SweepStats is what one expiry sweep round did.
type SweepStats struct {
	// Examined is the number of index entries the round looked at.
	Examined int
	// Expired is the number of expired keys it deleted.
	Expired int
	// Done is true when the round reached the end of the index (the next
	// one starts again from the beginning).
	Done bool
	// Keys are the expired keys it deleted.
	Keys [][]byte
}

// Sweep deletes expired keys, looking at about budget index entries from
// where the last round stopped. Reads never serve an expired key whether
// or not it has been swept; the sweep gives its memory and index slot
// back. Only entries marked as having an expiry are read, so keys without
// one cost no log read. The deletes are one logged record, so replay
// removes the same keys.
func (s *Shard) Sweep(ctx context.Context, budget int) (st SweepStats, err error) {
	defer s.maintSafely("sweep", &err)
	var keys [][]byte
	var next uint64
	closed := false
	s.rlocked(func() {
		if closed = s.closed; !closed {
			next, keys, err = s.sweepScanLocked(budget, &st)
		}
	})
	if closed {
		return st, ErrClosed
	}
	if err != nil {
		return st, err
	}
	if len(keys) > 0 {
		err = s.Mutate(ctx, func(v *View) ([]command.Command, error) {
			var cmds []command.Command
			for _, k := range keys {
				// Re-checked under the gate: a key written since is live.
				if v.expired(k) {
					cmds = append(cmds, command.Command{Op: OpDelete, Key: k})
					st.Keys = append(st.Keys, k)
				}
			}
			st.Expired = len(cmds)
			return cmds, nil
		})
		if err != nil {
			return st, err
		}
	}
	s.locked(func() { s.sweepCursor = next })
	st.Done = next == 0
	return st, nil
}

// sweepScanLocked looks at about budget index entries from the sweep's
// cursor and returns where it stopped and the expired keys it found.
func (s *Shard) sweepScanLocked(budget int, st *SweepStats) (next uint64, keys [][]byte, err error) {
	now := s.opts.Now().UnixMilli()
	next = s.index.Scan(s.sweepCursor, max(budget, 1), func(e keyindex.Entry) {
		if s.maintFault != nil {
			s.maintFault("sweep")
		}
		st.Examined++
		if e.Meta&metaTTL == 0 {
			return
		}
		key, expired, kerr := s.entryKeyLocked(e, now)
		switch {
		case kerr != nil:
			err = kerr
		case expired:
			keys = append(keys, key)
		}
	})
	return next, keys, err
}

// entryKeyLocked returns the key of index entry e and whether it has
// expired at now; a string's is read from its record.
func (s *Shard) entryKeyLocked(e keyindex.Entry, now int64) (key []byte, expired bool, err error) {
	if isObject(e) {
		o := s.objs[e.Addr]
		return o.Key, o.Expired(now), nil
	}
	c, err := s.commandAt(e)
	if err != nil {
		return nil, false, err
	}
	return c.Key, c.Expiry != 0 && c.Expiry <= now, nil
}

// expired reports whether key has an index entry that is expired.
func (v *View) expired(key []byte) bool {
	if _, ok := v.s.index.Get(hashKey(key), v.s.matcher(key)); !ok {
		return false
	}
	it, err := v.Get(key)
	return err == nil && !it.Exists
}
