package ssdtier

import (
	"bytes"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// run is the writer goroutine: it takes the first queued request, gathers
// more — whatever else is queued, or whatever arrives within BatchDelay —
// up to MaxBatch operations, and commits them in one transaction.
func (s *Store) run() {
	defer close(s.writerDone)
	var batch []*request
	for {
		r, ok := <-s.reqs
		if !ok {
			return
		}
		batch = append(batch[:0], r)
		n := len(r.ops)
		open := s.gather(&batch, &n)
		s.commit(batch)
		clear(batch)
		if !open {
			return
		}
	}
}

// gather adds queued requests to batch; it reports false once reqs is
// closed.
func (s *Store) gather(batch *[]*request, n *int) bool {
	var timeout <-chan time.Time
	if s.opts.BatchDelay > 0 {
		t := time.NewTimer(s.opts.BatchDelay)
		defer t.Stop()
		timeout = t.C
	}
	for *n < s.opts.MaxBatch {
		var r *request
		var ok bool
		if timeout == nil {
			select {
			case r, ok = <-s.reqs:
			default:
				return true
			}
		} else {
			select {
			case r, ok = <-s.reqs:
			case <-timeout:
				return true
			}
		}
		if !ok {
			return false
		}
		*batch = append(*batch, r)
		*n += len(r.ops)
	}
	return true
}

// commit applies a batch in one bbolt transaction and answers its
// requests. The index changes in step with the transaction; if the commit
// fails the store is failed for good (see ErrFailed).
func (s *Store) commit(batch []*request) {
	if p := s.failed.Load(); p != nil {
		reply(batch, nil, *p)
		return
	}
	at := s.opts.Clock.Now()
	now := at.UnixNano()
	counts := make([]int, len(batch))
	var puts, written, stored, deletes, expired, corrupt, evictions, nops int64
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(blocksBucket)
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, r := range batch {
			for _, o := range r.ops {
				nops++
				switch o.kind {
				case opPut:
					if err := b.Put(o.key, o.val); err != nil {
						return err
					}
					s.idx.put(o.key, int64(len(o.key)+len(o.val)))
					puts++
					written += int64(len(o.val))
					stored += int64(len(o.key) + len(o.val))
				case opDelete:
					if b.Get(o.key) == nil {
						continue
					}
					if err := b.Delete(o.key); err != nil {
						return err
					}
					s.idx.remove(o.key)
					counts[i]++
					deletes++
				case opDeleteIfStale:
					v := b.Get(o.key)
					if v == nil {
						continue
					}
					h, derr := blockfmt.DecodeHeader(v)
					if derr == nil && !h.Expired(now) {
						continue // rewritten since it was found stale
					}
					if err := b.Delete(o.key); err != nil {
						return err
					}
					s.idx.remove(o.key)
					counts[i]++
					if derr != nil {
						corrupt++
					} else {
						expired++
					}
				case opDeletePrefix:
					var keys [][]byte
					c := b.Cursor()
					for k, _ := c.Seek(o.key); k != nil && bytes.HasPrefix(k, o.key); k, _ = c.Next() {
						keys = append(keys, bytes.Clone(k))
					}
					for _, k := range keys {
						if err := b.Delete(k); err != nil {
							return err
						}
						s.idx.remove(k)
					}
					counts[i] += len(keys)
					deletes += int64(len(keys))
				}
			}
		}
		for s.idx.bytes > s.opts.CapacityBytes {
			v := s.idx.victim()
			if v == nil {
				break
			}
			k := []byte(v.key)
			if err := b.Delete(k); err != nil {
				return err
			}
			s.idx.remove(k)
			evictions++
		}
		return nil
	})
	if err != nil {
		err = fmt.Errorf("%w: commit: %w", ErrFailed, err)
		s.failed.CompareAndSwap(nil, &err)
		s.opts.Logger.Error("ssdtier: commit failed; the store accepts no more writes", "err", err)
		reply(batch, nil, err)
		return
	}
	s.st.commits.Add(1)
	s.st.committedOps.Add(nops)
	s.st.puts.Add(puts)
	s.st.bytesWritten.Add(written)
	if stored > 0 {
		// The write budget counts what reached the file, so a block
		// admitted but never committed costs nothing.
		s.budget.record(at, stored)
	}
	s.st.deletes.Add(deletes)
	s.st.expired.Add(expired)
	s.st.corrupt.Add(corrupt)
	s.st.evictions.Add(evictions)
	reply(batch, counts, nil)
}

func reply(batch []*request, counts []int, err error) {
	for i, r := range batch {
		if r.done == nil {
			continue
		}
		res := result{err: err}
		if counts != nil {
			res.n = counts[i]
		}
		r.done <- res
	}
}
