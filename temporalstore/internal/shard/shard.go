package shard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/keyindex"
)

// Ops of the records this package writes. Stable: they are stored.
const (
	OpSet    command.Op = 1
	OpDelete command.Op = 2
)

// Errors.
var (
	// ErrClosed is returned by calls on a closed shard.
	ErrClosed = errors.New("shard: closed")
	// ErrEmptyKey is returned for an empty key.
	ErrEmptyKey = errors.New("shard: empty key")
	// ErrTooLarge is returned for a write whose record exceeds the log's
	// record size limit (16 MiB by default). Nothing is written.
	ErrTooLarge = errors.New("shard: record too large")
)

// Options configures a shard.
type Options struct {
	// Durable acknowledges a write once the log has fsynced it; otherwise
	// once it reached the operating system, with a sync every SyncInterval.
	// Default: false (the zero value); the engine sets it per table.
	Durable bool
	// SyncInterval is the async mode's sync period. Default: 10 ms.
	SyncInterval time.Duration
	// SegmentSize is the log's segment size. Default: the wal default.
	SegmentSize int64
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Stamp is the shard's id and routing range, written into its
	// checkpoints; Open refuses a checkpoint stamped otherwise. Default:
	// shard 0, range 0..0.
	Stamp Stamp
}

// Shard is one shard's log, index and state.
type Shard struct {
	opts Options
	dir  string
	log  *wal.Log
	// damagedImages counts checkpoints Open skipped as damaged, and
	// replayed the log records it applied.
	damagedImages, replayed int

	mu     sync.RWMutex
	index  *keyindex.Index
	closed bool
	// applied is the index of the last record applied; turn (on mu)
	// wakes writers waiting to apply theirs in log order.
	applied uint64
	turn    *sync.Cond
	// gate is held shared by appends and exclusively by Update, so that a
	// read-modify-write sees every append before it.
	gate sync.RWMutex
	// failed is the log's permanent failure, once an append met it.
	failed error
}

// Entry metadata: the kind of record in the low bits, and the position of
// the command inside a batch record above them.
const (
	metaString   = 1
	metaPosShift = 8
)

// Open opens (creating if needed) the shard in dir and replays its log.
func Open(dir string, opts Options) (*Shard, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	wo := wal.Options{SegmentSize: opts.SegmentSize, Sync: wal.SyncInterval, SyncInterval: opts.SyncInterval}
	if opts.Durable {
		wo.Sync = wal.SyncAlways
	}
	l, err := wal.Open(dir, wo)
	if err != nil {
		return nil, fmt.Errorf("shard: open log: %w", err)
	}
	s := &Shard{opts: opts, dir: dir, log: l, index: keyindex.New(0)}
	s.turn = sync.NewCond(&s.mu)
	x, applied, err := s.loadImage()
	if err != nil {
		l.Close()
		return nil, err
	}
	from := l.FirstIndex()
	if x != nil {
		s.index, from = x, applied+1
	}
	if err := s.replay(from); err != nil {
		l.Close()
		return nil, err
	}
	s.applied = l.LastIndex()
	return s, nil
}

func hashKey(key []byte) uint64 { return xxhash.Sum64(key) }

// replay applies the log's records from index from on, in order.
func (s *Shard) replay(from uint64) error {
	it := s.log.Iterator(from)
	defer it.Close()
	for it.Next() {
		cmds, err := command.Decode(it.Value())
		if err != nil {
			return fmt.Errorf("shard: record %d: %w", it.Index(), err)
		}
		for pos, c := range cmds {
			s.applyLocked(it.Index(), pos, c.Op, c.Key)
		}
		s.replayed++
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("shard: replay: %w", err)
	}
	return nil
}

// applyLocked applies command pos of the record at index: the index needs
// only its op and key (a Set's entry points at the record).
func (s *Shard) applyLocked(index uint64, pos int, op command.Op, key []byte) {
	h, match := hashKey(key), s.matcher(key)
	switch op {
	case OpSet:
		s.index.Put(h, keyindex.Entry{Addr: index, Meta: metaString | uint32(pos)<<metaPosShift}, match)
	case OpDelete:
		s.index.Delete(h, match)
	}
}

// matcher returns the function that tells whether an index entry is key's,
// by reading the record it points at.
func (s *Shard) matcher(key []byte) func(keyindex.Entry) bool {
	return func(e keyindex.Entry) bool {
		c, err := s.commandAt(e)
		return err == nil && bytes.Equal(c.Key, key)
	}
}

// commandAt reads the command an entry points at.
func (s *Shard) commandAt(e keyindex.Entry) (command.Decoded, error) {
	rec, err := s.log.Read(e.Addr)
	if err != nil {
		return command.Decoded{}, err
	}
	cmds, err := command.Decode(rec)
	if err != nil {
		return command.Decoded{}, err
	}
	pos := int(e.Meta >> metaPosShift)
	if pos >= len(cmds) {
		return command.Decoded{}, fmt.Errorf("shard: record %d has no command %d", e.Addr, pos)
	}
	return cmds[pos], nil
}

// Set stores value under key, expiring at expiry (zero: never). It returns
// once the write is durable (or written, in async mode) and applied.
func (s *Shard) Set(ctx context.Context, key, value []byte, expiry time.Time) error {
	if len(key) == 0 {
		return ErrEmptyKey
	}
	c := command.Command{Op: OpSet, Time: s.opts.Now().UnixMilli(), Key: key, Args: [][]byte{value}}
	if !expiry.IsZero() {
		c.Expiry = expiry.UnixMilli()
	}
	return s.write(ctx, []command.Command{c})
}

// Delete removes key. It reports no error when key is absent.
func (s *Shard) Delete(ctx context.Context, key []byte) error {
	if len(key) == 0 {
		return ErrEmptyKey
	}
	return s.write(ctx, []command.Command{{Op: OpDelete, Time: s.opts.Now().UnixMilli(), Key: key}})
}

// write appends cmds as one record and applies it. The append runs
// outside the shard's lock, so that the log batches concurrent writers into
// one write and one fsync; records are then applied in log order, each
// writer waiting for the records before its own.
func (s *Shard) write(ctx context.Context, cmds []command.Command) error {
	return s.appendApply(ctx, cmds, true)
}

// appendAndApply is write for a caller that holds the gate exclusively.
func (s *Shard) appendAndApply(ctx context.Context, cmds []command.Command) error {
	return s.appendApply(ctx, cmds, false)
}

func (s *Shard) appendApply(ctx context.Context, cmds []command.Command, shareGate bool) error {
	var rec []byte
	if len(cmds) == 1 {
		rec = command.Append(nil, &cmds[0])
	} else {
		rec = command.AppendBatch(nil, cmds)
	}
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if shareGate {
		s.gate.RLock()
	}
	idx, err := s.log.Append(ctx, rec)
	if shareGate {
		s.gate.RUnlock()
	}
	if err != nil {
		switch {
		case errors.Is(err, wal.ErrClosed):
			return ErrClosed
		case errors.Is(err, wal.ErrRecordTooLarge):
			return fmt.Errorf("%w: %w", ErrTooLarge, err)
		}
		err = fmt.Errorf("shard: append: %w", err)
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			// The log refuses further writes (a failed write or fsync):
			// records it wrote may never be applied, so an Update waiting
			// for them must stop waiting.
			s.mu.Lock()
			if s.failed == nil {
				s.failed = err
			}
			s.turn.Broadcast()
			s.mu.Unlock()
		}
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.applied+1 != idx {
		s.turn.Wait()
	}
	for pos := range cmds {
		s.applyLocked(idx, pos, cmds[pos].Op, cmds[pos].Key)
	}
	s.applied = idx
	s.turn.Broadcast()
	return nil
}

// Get returns key's value, or false when it is absent or expired.
func (s *Shard) Get(key []byte) ([]byte, bool, error) {
	v, _, ok, err := s.GetWithExpiry(key)
	return v, ok, err
}

// GetWithExpiry is Get that also returns the key's expiry (zero: none).
func (s *Shard) GetWithExpiry(key []byte) ([]byte, time.Time, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, time.Time{}, false, ErrClosed
	}
	return s.getLocked(key)
}

// getLocked returns key's live value and its expiry (zero: none).
func (s *Shard) getLocked(key []byte) ([]byte, time.Time, bool, error) {
	var found command.Decoded
	var readErr error
	_, ok := s.index.Get(hashKey(key), func(e keyindex.Entry) bool {
		c, err := s.commandAt(e)
		if err != nil {
			readErr = err
			return false
		}
		if !bytes.Equal(c.Key, key) {
			return false
		}
		found = c
		return true
	})
	if readErr != nil && !ok {
		return nil, time.Time{}, false, readErr
	}
	if !ok || found.Expiry != 0 && found.Expiry <= s.opts.Now().UnixMilli() {
		return nil, time.Time{}, false, nil
	}
	var exp time.Time
	if found.Expiry != 0 {
		exp = time.UnixMilli(found.Expiry)
	}
	return found.Args[0], exp, true, nil
}

// Action is what an UpdateFunc decides.
type Action int

// Actions.
const (
	// Keep stores nothing.
	Keep Action = iota
	// Write stores the returned value and expiry.
	Write
	// Remove deletes the key.
	Remove
)

// UpdateFunc computes a key's new state from its current one (found is
// false when it is absent or expired): the value to store and its expiry
// (zero: none), and what to do. An error aborts the update, changes
// nothing, and is returned by Update.
type UpdateFunc func(old []byte, expiry time.Time, found bool) (value []byte, newExpiry time.Time, act Action, err error)

// Update is a read-modify-write of key: fn sees the value as every write
// appended before it left it, and no write lands between that read and
// Update's own. It holds the shard's append gate exclusively: new appends
// wait, those in flight are applied first. The stored record holds the
// resulting value, so the index points at bytes in the log as for Set.
func (s *Shard) Update(ctx context.Context, key []byte, fn UpdateFunc) error {
	if len(key) == 0 {
		return ErrEmptyKey
	}
	s.gate.Lock()
	defer s.gate.Unlock()
	s.mu.Lock()
	for !s.closed && s.failed == nil && s.applied != s.log.LastIndex() {
		s.turn.Wait()
	}
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.failed != nil {
		err := s.failed
		s.mu.Unlock()
		return err
	}
	old, exp, found, err := s.getLocked(key)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	v, newExp, act, err := fn(old, exp, found)
	if err != nil {
		return err
	}
	switch act {
	case Write:
		c := command.Command{Op: OpSet, Time: s.opts.Now().UnixMilli(), Key: key, Args: [][]byte{v}}
		if !newExp.IsZero() {
			c.Expiry = newExp.UnixMilli()
		}
		return s.appendAndApply(ctx, []command.Command{c})
	case Remove:
		if !found {
			return nil
		}
		return s.appendAndApply(ctx, []command.Command{{Op: OpDelete, Time: s.opts.Now().UnixMilli(), Key: key}})
	}
	return nil
}

// Len is the number of keys the index holds (expired ones included until
// they are removed).
func (s *Shard) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.index.Len()
}

// IndexBytes is the resident index's memory.
func (s *Shard) IndexBytes() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.index.Bytes()
}

// Close syncs and closes the log.
func (s *Shard) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.turn.Broadcast() // an Update waiting for appends to apply gives up
	err := s.log.Sync(context.Background())
	return errors.Join(err, s.log.Close())
}

// LogStats returns the shard's log statistics (bytes written, fsyncs).
func (s *Shard) LogStats() wal.Stats { return s.log.Stats() }

// Scan returns live keys from the resident index in scan order, at least
// count of them unless the shard ends first, and the cursor to continue
// from (0 when done). It has SCAN's guarantee: a key present for the whole
// scan is returned at least once; a key may be returned twice.
func (s *Shard) Scan(cursor uint64, count int) ([][]byte, uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, 0, ErrClosed
	}
	now := s.opts.Now().UnixMilli()
	var keys [][]byte
	var err error
	next := s.index.Scan(cursor, count, func(e keyindex.Entry) {
		c, cerr := s.commandAt(e)
		if cerr != nil {
			err = cerr
			return
		}
		if c.Expiry != 0 && c.Expiry <= now {
			return
		}
		keys = append(keys, c.Key)
	})
	return keys, next, err
}
