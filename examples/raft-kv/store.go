package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

// Commands, as proposed to raft:
//
//	[0]  opPut
//	     uvarint key length, key, then the value (the rest)
const opPut = 'p'

func encodePut(key string, value []byte) []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(key)+len(value))
	b = append(b, opPut)
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	return append(b, value...)
}

func decodePut(b []byte) (key string, value []byte, err error) {
	if len(b) == 0 || b[0] != opPut {
		return "", nil, errors.New("unknown command")
	}
	n, w := binary.Uvarint(b[1:])
	if w <= 0 || n > uint64(len(b)-1-w) {
		return "", nil, errors.New("bad key length")
	}
	rest := b[1+w:]
	return string(rest[:n]), rest[n:], nil
}

// storeShards is how many maps the store splits its keys over. A snapshot
// capture shares every shard; the first write to a shard after it copies
// that shard alone, so the copying a capture defers is spread over the
// next applies instead of stalling one.
const storeShards = 256

// store is the replicated state machine: a map from keys to values, split
// into shards. The node applies to it from its loop goroutine; HTTP
// handlers read it concurrently, hence the lock. It is a
// matrixraft.SnapshotCapturer: the node's loop only takes a capture (the
// current shards), and the snapshot is sorted and written beside the loop.
type store struct {
	mu sync.RWMutex
	// gen is the current generation; a shard of an older one may belong
	// to a capture and is copied before it is written.
	gen    uint64
	shards [storeShards]*storeShard
}

type storeShard struct {
	gen  uint64
	data map[string][]byte
}

func newStore() *store {
	s := &store{}
	for i := range s.shards {
		s.shards[i] = &storeShard{data: map[string][]byte{}}
	}
	return s
}

// shardOf is FNV-1a over the key.
func shardOf(key string) int {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint32(key[i])) * 16777619
	}
	return int(h % storeShards)
}

// Apply implements matrixraft.StateMachine. A malformed command is skipped
// on every replica alike, so the replicas stay equal.
func (s *store) Apply(batch []matrixraft.Command) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range batch {
		k, v, err := decodePut(c.Data)
		if err != nil {
			continue
		}
		i := shardOf(k)
		sh := s.shards[i]
		if sh.gen != s.gen {
			sh = &storeShard{gen: s.gen, data: maps.Clone(sh.data)}
			s.shards[i] = sh
		}
		sh.data[k] = slices.Clone(v) // c.Data is not ours to keep
	}
	return make([][]byte, len(batch))
}

func (s *store) get(key string) ([]byte, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.shards[shardOf(key)].data[key]
	return v, ok
}

// CaptureSnapshot implements matrixraft.SnapshotCapturer: the capture is
// the current shards, which the next generation no longer writes.
func (s *store) CaptureSnapshot() (io.WriterTo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := storeCapture(s.shards)
	s.gen++
	return &c, nil
}

// Snapshot implements matrixraft.StateMachine, in the format of a
// capture.
func (s *store) Snapshot(w io.Writer) error {
	s.mu.RLock()
	c := storeCapture(s.shards)
	s.mu.RUnlock()
	_, err := c.WriteTo(w)
	return err
}

// storeCapture is the shards of one generation, never written again.
type storeCapture [storeShards]*storeShard

// WriteTo writes the snapshot: uvarint count, then sorted (uvarint key
// length, key, uvarint value length, value) pairs, so equal states give
// equal snapshots.
func (c *storeCapture) WriteTo(w io.Writer) (int64, error) {
	n := 0
	for _, sh := range c {
		n += len(sh.data)
	}
	keys := make([]string, 0, n)
	size := uvarintLen(n)
	for _, sh := range c {
		for k, v := range sh.data {
			keys = append(keys, k)
			size += uvarintLen(len(k)) + len(k) + uvarintLen(len(v)) + len(v)
		}
	}
	slices.Sort(keys)
	if g, ok := w.(interface{ Grow(int) }); ok {
		g.Grow(size) // size the node's buffer once rather than by doubling
	}
	cw := &countWriter{w: w}
	bw := bufio.NewWriter(cw)
	var tmp []byte
	tmp = binary.AppendUvarint(tmp[:0], uint64(len(keys)))
	bw.Write(tmp)
	for _, k := range keys {
		v := c[shardOf(k)].data[k]
		tmp = binary.AppendUvarint(tmp[:0], uint64(len(k)))
		tmp = append(tmp, k...)
		tmp = binary.AppendUvarint(tmp, uint64(len(v)))
		bw.Write(tmp)
		bw.Write(v)
	}
	err := bw.Flush()
	return cw.n, err
}

func uvarintLen(n int) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(n))
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Restore implements matrixraft.StateMachine.
func (s *store) Restore(r io.Reader) error {
	br := bufio.NewReader(r)
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return fmt.Errorf("snapshot count: %w", err)
	}
	readBytes := func() ([]byte, error) {
		l, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, err
		}
		if l > 1<<30 {
			return nil, fmt.Errorf("snapshot field of %d bytes", l)
		}
		b := make([]byte, l)
		_, err = io.ReadFull(br, b)
		return b, err
	}
	// Fresh shards: the old ones may belong to a capture being written.
	var shards [storeShards]*storeShard
	for i := range shards {
		shards[i] = &storeShard{data: map[string][]byte{}}
	}
	for range n {
		k, err := readBytes()
		if err != nil {
			return fmt.Errorf("snapshot key: %w", err)
		}
		v, err := readBytes()
		if err != nil {
			return fmt.Errorf("snapshot value: %w", err)
		}
		shards[shardOf(string(k))].data[string(k)] = v
	}
	s.mu.Lock()
	for _, sh := range shards {
		sh.gen = s.gen
	}
	s.shards = shards
	s.mu.Unlock()
	return nil
}
