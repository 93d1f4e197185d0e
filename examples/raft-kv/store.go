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

// store is the replicated state machine: a map from keys to values. The
// node applies to it from its loop goroutine; HTTP handlers read it
// concurrently, hence the lock.
type store struct {
	mu   sync.RWMutex
	data map[string][]byte
}

func newStore() *store { return &store{data: map[string][]byte{}} }

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
		s.data[k] = slices.Clone(v) // c.Data is not ours to keep
	}
	return make([][]byte, len(batch))
}

func (s *store) get(key string) ([]byte, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.data[key]
	return v, ok
}

// Snapshot implements matrixraft.StateMachine: uvarint count, then sorted
// (uvarint key length, key, uvarint value length, value) pairs, so equal
// states give equal snapshots.
func (s *store) Snapshot(w io.Writer) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	bw := bufio.NewWriter(w)
	var tmp []byte
	tmp = binary.AppendUvarint(tmp[:0], uint64(len(s.data)))
	bw.Write(tmp)
	for _, k := range slices.Sorted(maps.Keys(s.data)) {
		v := s.data[k]
		tmp = binary.AppendUvarint(tmp[:0], uint64(len(k)))
		tmp = append(tmp, k...)
		tmp = binary.AppendUvarint(tmp, uint64(len(v)))
		bw.Write(tmp)
		bw.Write(v)
	}
	return bw.Flush()
}

// Restore implements matrixraft.StateMachine.
func (s *store) Restore(r io.Reader) error {
	br := bufio.NewReader(r)
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return fmt.Errorf("snapshot count: %w", err)
	}
	data := make(map[string][]byte, min(n, 1<<20))
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
	for range n {
		k, err := readBytes()
		if err != nil {
			return fmt.Errorf("snapshot key: %w", err)
		}
		v, err := readBytes()
		if err != nil {
			return fmt.Errorf("snapshot value: %w", err)
		}
		data[string(k)] = v
	}
	s.mu.Lock()
	s.data = data
	s.mu.Unlock()
	return nil
}
