package raftbench

import (
	"encoding/binary"
	"errors"
	"io"
	"maps"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

// kvShards is how many maps kvState splits its keys over. A capture
// shares every shard; the first write to a shard after it copies that
// shard alone, so the copying a capture defers is spread over the next
// applies (about 1/kvShards of the state each) instead of stalling one.
const kvShards = 256

// kvState is the state machine of ours: the last value per key. A command
// is a 1-byte key length, the key, then the value. It is a
// matrixraft.SnapshotCapturer: a capture costs a copy of the shard
// pointers, and the serialisation runs beside the node's loop.
//
// The node calls every method from its loop goroutine, and nothing else
// reads the state, so it needs no lock: a capture's WriteTo, the only
// other reader, reads shards that are never written again.
type kvState struct {
	// gen is the current generation. A shard of an older generation may
	// belong to a capture and is copied before it is written.
	gen    uint64
	shards [kvShards]*kvShard
}

type kvShard struct {
	gen uint64
	m   map[string][]byte
}

func newKVState() *kvState {
	s := &kvState{}
	for i := range s.shards {
		s.shards[i] = &kvShard{m: map[string][]byte{}}
	}
	return s
}

// shardOf is FNV-1a: cheap, and stable across processes, though nothing
// depends on that.
func shardOf(key []byte) int {
	h := uint32(2166136261)
	for _, c := range key {
		h = (h ^ uint32(c)) * 16777619
	}
	return int(h % kvShards)
}

func (s *kvState) Apply(batch []matrixraft.Command) [][]byte {
	for _, c := range batch {
		if len(c.Data) == 0 || int(c.Data[0]) > len(c.Data)-1 {
			continue
		}
		k := c.Data[1 : 1+int(c.Data[0])]
		i := shardOf(k)
		sh := s.shards[i]
		if sh.gen != s.gen {
			sh = &kvShard{gen: s.gen, m: maps.Clone(sh.m)}
			s.shards[i] = sh
		}
		sh.m[string(k)] = append([]byte(nil), c.Data[1+len(k):]...)
	}
	return make([][]byte, len(batch))
}

// CaptureSnapshot implements matrixraft.SnapshotCapturer: the capture is
// the current shards, which the next generation no longer writes.
func (s *kvState) CaptureSnapshot() (io.WriterTo, error) {
	c := kvCapture(s.shards)
	s.gen++
	return &c, nil
}

func (s *kvState) Snapshot(w io.Writer) error {
	c := kvCapture(s.shards) // on the loop: the shards cannot change meanwhile
	_, err := c.WriteTo(w)
	return err
}

func (s *kvState) Restore(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	// Fresh shards: the old ones may belong to a capture being written.
	var shards [kvShards]*kvShard
	for i := range shards {
		shards[i] = &kvShard{gen: s.gen, m: map[string][]byte{}}
	}
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return errors.New("kvState: bad snapshot")
		}
		key := b[k : k+int(n)]
		b = b[k+int(n):]
		n, k = binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return errors.New("kvState: bad snapshot")
		}
		shards[shardOf(key)].m[string(key)] = append([]byte(nil), b[k:k+int(n)]...)
		b = b[k+int(n):]
	}
	s.shards = shards
	return nil
}

// kvCapture is the shards of one generation. The format is a run of
// (uvarint key length, key, uvarint value length, value), in no order.
type kvCapture [kvShards]*kvShard

func (c *kvCapture) WriteTo(w io.Writer) (int64, error) {
	if g, ok := w.(interface{ Grow(int) }); ok {
		// Size the node's buffer once: tens of megabytes grown by
		// doubling would be allocated and copied about twice over.
		size := 0
		for _, sh := range c {
			for k, v := range sh.m {
				size += uvarintLen(len(k)) + len(k) + uvarintLen(len(v)) + len(v)
			}
		}
		g.Grow(size)
	}
	var total int64
	var b []byte
	for _, sh := range c {
		b = b[:0]
		for k, v := range sh.m {
			b = binary.AppendUvarint(b, uint64(len(k)))
			b = append(b, k...)
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		}
		n, err := w.Write(b)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func uvarintLen(n int) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(n))
}
