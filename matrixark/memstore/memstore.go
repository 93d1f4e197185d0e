// Package memstore is an in-memory matrixark.Store: a B-tree of keys and a
// map of values under a lock, for tests and for embedding matrixark without
// a server. It counts what it is asked (Stats), so tests can check that a
// sweep reads without filling and that no read asks for more than the
// Store allows.
//
//	s := memstore.New()
//	ark, err := matrixark.New(s, matrixark.Options{})
//
// Nothing survives the process; Durable writes are as durable as any
// other.
package memstore

import (
	"bytes"
	"context"
	"slices"
	"sync"

	"github.com/google/btree"

	"github.com/temporalstore/temporalstore-go/matrixark"
)

// Store is an in-memory matrixark.Store, safe for concurrent use.
type Store struct {
	mu    sync.RWMutex
	keys  *btree.BTreeG[string] // in order; a sorted slice made a bulk load quadratic
	vals  map[string][]byte
	stats Stats
}

// Stats count a Store's calls.
type Stats struct {
	Applies, Gets, Scans int
	// Fills are reads that asked to fill caches (ReadOpts.NoFill unset).
	Fills int
	// MaxGetKeys is the most keys one Get asked for.
	MaxGetKeys int
}

var _ matrixark.Store = (*Store)(nil)

// New returns an empty Store.
func New() *Store {
	return &Store{keys: btree.NewOrderedG[string](32), vals: map[string][]byte{}}
}

// Apply implements matrixark.Store.
func (s *Store) Apply(ctx context.Context, m []matrixark.Mutation, _ matrixark.WriteOpts) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Applies++
	for _, x := range m {
		k := string(x.Key)
		_, had := s.vals[k]
		if x.Delete {
			if had {
				delete(s.vals, k)
				s.keys.Delete(k)
			}
			continue
		}
		if !had {
			s.keys.ReplaceOrInsert(k)
		}
		s.vals[k] = bytes.Clone(x.Value)
	}
	return nil
}

// Get implements matrixark.Store.
func (s *Store) Get(ctx context.Context, keys [][]byte, o matrixark.ReadOpts) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(keys) > matrixark.MaxGetKeys {
		return nil, matrixark.ErrTooManyKeys
	}
	s.mu.Lock()
	s.stats.Gets++
	s.stats.MaxGetKeys = max(s.stats.MaxGetKeys, len(keys))
	if !o.NoFill {
		s.stats.Fills++
	}
	out := make([][]byte, len(keys))
	for i, k := range keys {
		if v, ok := s.vals[string(k)]; ok {
			out[i] = bytes.Clone(v)
		}
	}
	s.mu.Unlock()
	return out, nil
}

// Scan implements matrixark.Store. fn runs without the Store's lock held
// on a snapshot of the range, so it may call the Store.
func (s *Store) Scan(ctx context.Context, r matrixark.Range, o matrixark.ReadOpts, fn func(k, v []byte) bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	s.stats.Scans++
	if !o.NoFill {
		s.stats.Fills++
	}
	type kv struct{ k, v []byte }
	var snap []kv
	each := func(k string) bool {
		snap = append(snap, kv{[]byte(k), bytes.Clone(s.vals[k])})
		return true
	}
	if r.End != nil {
		if string(r.Start) < string(r.End) {
			s.keys.AscendRange(string(r.Start), string(r.End), each)
		}
	} else {
		s.keys.AscendGreaterOrEqual(string(r.Start), each)
	}
	s.mu.Unlock()
	if o.Reverse {
		slices.Reverse(snap)
	}
	for _, x := range snap {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !fn(x.k, x.v) {
			return nil
		}
	}
	return nil
}

// Stats returns the counts so far.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.stats
}
