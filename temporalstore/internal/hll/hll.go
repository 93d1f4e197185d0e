package hll

import (
	"encoding/binary"
	"errors"
)

// The format's sizes, as Redis's.
const (
	// P is the number of hash bits that pick a register.
	P = 14
	// q is the number of hash bits left to count from.
	q = 64 - P
	// Registers is the number of registers.
	Registers = 1 << P
	// regBits is a dense register's width, regMax its largest value.
	regBits = 6
	regMax  = 1<<regBits - 1
	// HeaderSize is the header's size in bytes.
	HeaderSize = 16
	// DenseSize is a dense value's exact size in bytes.
	DenseSize = HeaderSize + (Registers*regBits+7)/8
	// SparseMaxBytes is the size past which a sparse value turns dense
	// (Redis's hll-sparse-max-bytes default).
	SparseMaxBytes = 3000
)

// Encodings, the header's fifth byte.
const (
	Dense  = 0
	Sparse = 1
)

var magic = [4]byte{'H', 'Y', 'L', 'L'}

// Errors, each with its Redis reply.
var (
	// ErrNotHLL: the string is not a HyperLogLog (WRONGTYPE Key is not a
	// valid HyperLogLog string value.).
	ErrNotHLL = errors.New("hll: not a valid HyperLogLog string value")
	// ErrCorrupt: the header is right but the registers do not add up
	// (INVALIDOBJ Corrupted HLL object detected).
	ErrCorrupt = errors.New("hll: corrupted HLL object")
)

// Check reports whether b passes Redis's checks of a HyperLogLog string:
// at least a header, the magic, a known encoding, and a dense value's
// exact size. A sparse value's opcodes are checked only when read.
func Check(b []byte) error {
	switch {
	case len(b) < HeaderSize, [4]byte(b[:4]) != magic, b[4] > Sparse,
		b[4] == Dense && len(b) != DenseSize:
		return ErrNotHLL
	}
	return nil
}

// Sketch is a HyperLogLog as its string bytes.
type Sketch struct {
	b []byte
}

// New returns an empty sketch as Redis creates one: sparse, one XZERO
// over every register, a valid cached cardinality of 0.
func New() *Sketch {
	b := make([]byte, HeaderSize, HeaderSize+2)
	copy(b, magic[:])
	b[4] = Sparse
	// Registers is exactly one XZERO's longest run.
	b = append(b, xzeroOp(Registers)...)
	return &Sketch{b: b}
}

// Parse returns a sketch of a copy of b, which must pass Check.
func Parse(b []byte) (*Sketch, error) {
	if err := Check(b); err != nil {
		return nil, err
	}
	return &Sketch{b: append(make([]byte, 0, len(b)+8), b...)}, nil
}

// Bytes returns the sketch's string; it is the sketch's own until the
// next change.
func (s *Sketch) Bytes() []byte { return s.b }

// Encoding returns Dense or Sparse.
func (s *Sketch) Encoding() byte { return s.b[4] }

// Cached returns the cached cardinality, and false when it is stale.
func (s *Sketch) Cached() (uint64, bool) {
	if s.b[15]&0x80 != 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(s.b[8:16]), true
}

// SetCached stores card as the cached cardinality, valid.
func (s *Sketch) SetCached(card uint64) { binary.LittleEndian.PutUint64(s.b[8:16], card) }

// Invalidate marks the cached cardinality stale, keeping its bytes.
func (s *Sketch) Invalidate() { s.b[15] |= 0x80 }

// Add adds an element; changed reports whether a register grew. The
// cache is not touched: PFADD marks it stale once, after all elements.
func (s *Sketch) Add(elem []byte) (changed bool, err error) {
	i, c := patLen(elem)
	return s.Set(i, c)
}

// Set raises register i (0 <= i < Registers) to c (1 to 63) if it is
// lower, as Redis's hllDenseSet and hllSparseSet do, promoting a sparse
// sketch when it must. ErrCorrupt for a sparse sketch whose opcodes do not
// reach register i.
func (s *Sketch) Set(i int, c uint8) (changed bool, err error) {
	if s.b[4] == Dense {
		return denseSet(s.b[HeaderSize:], i, c), nil
	}
	return s.sparseSet(i, c)
}
