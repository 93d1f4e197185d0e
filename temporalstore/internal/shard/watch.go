package shard

import "context"

// WATCH asks whether any write touched a key between the WATCH and the
// EXEC, even one undone since (a key created and deleted again has no
// version before or after). Versions cannot say that, and keeping the
// last write of every key ever deleted would grow without bound, so the
// shard notes the writes of the keys someone watches, and only those.

// watchedKey is a key watched by refs watchers; touched is the index of
// the last record that wrote it.
type watchedKey struct {
	refs    int
	touched uint64
}

// Watch registers a watcher of key and returns the point Touched compares
// with. Every Watch needs its Unwatch.
func (s *Shard) Watch(key []byte) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.watched[string(key)]
	if w == nil {
		if s.watched == nil {
			s.watched = map[string]*watchedKey{}
		}
		w = &watchedKey{}
		s.watched[string(key)] = w
	}
	w.refs++
	return s.applied
}

// Unwatch ends a Watch of key.
func (s *Shard) Unwatch(key []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.watched[string(key)]; w != nil {
		if w.refs--; w.refs <= 0 {
			delete(s.watched, string(key))
		}
	}
}

// Touched reports whether a write touched key, watched since the point
// its Watch returned. Inside an Exclusive call it on the held handle.
func (s *Shard) Touched(ctx context.Context, key []byte, since uint64) bool {
	if !s.held {
		s.mu.RLock()
		defer s.mu.RUnlock()
	}
	w := s.watched[string(key)]
	return w != nil && w.touched > since
}

// touchWatchedLocked notes that the record at index wrote key, if watched.
func (s *Shard) touchWatchedLocked(index uint64, key []byte) {
	if w := s.watched[string(key)]; w != nil {
		w.touched = index
	}
}

// presentLocked reports whether key has an index entry (expired or not).
func (s *Shard) presentLocked(key []byte) bool {
	_, ok := s.index.Get(hashKey(key), s.matcher(key))
	return ok
}
