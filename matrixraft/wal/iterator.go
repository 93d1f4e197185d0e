package wal

import (
	"errors"
	"fmt"
)

// iterBlock is how many bytes an Iterator reads from a segment at once.
const iterBlock = 1 << 20

// Iterator reads records in index order, a block of frames per read. It sees
// records appended after it was made. It is for one goroutine.
type Iterator struct {
	l     *Log
	next  uint64 // index of the next record to return
	index uint64
	value []byte
	err   error

	seg  *segment
	base int64    // segment offset of buf[0]
	buf  []byte   // frames read ahead
	ends []uint32 // end of each buffered frame within buf
	pos  int      // next buffered frame
	out  []byte   // decompression scratch
}

// Iterator returns an iterator positioned before the record at from.
func (l *Log) Iterator(from uint64) *Iterator {
	return &Iterator{l: l, next: from}
}

// Next advances to the next record. It returns false at the end of the log
// or on an error; Err tells which.
func (it *Iterator) Next() bool {
	if it.err != nil {
		return false
	}
	if it.pos >= len(it.ends) {
		ok, err := it.fill()
		if err != nil {
			it.err = err
		}
		if !ok {
			return false
		}
	}
	start := uint32(0)
	if it.pos > 0 {
		start = it.ends[it.pos-1]
	}
	frame := it.buf[start:it.ends[it.pos]]
	v, decompressed, err := it.l.decodeRecord(it.seg, it.base+int64(start), frame, it.out)
	if err != nil {
		it.err = err
		return false
	}
	if decompressed {
		it.out = v
	}
	it.value = v
	it.index = it.next
	it.next++
	it.pos++
	return true
}

// fill reads the frames from it.next on, up to iterBlock bytes (at least one
// frame). It returns false at the end of the log.
func (it *Iterator) fill() (bool, error) {
	l := it.l
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	s, i, err := l.locateLocked(it.next)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	off := int64(s.offsets[i])
	end := s.recordEnd(i)
	j := i + 1
	for ; j < len(s.offsets); j++ {
		e := s.recordEnd(j)
		if e-off > iterBlock {
			break
		}
		end = e
	}
	n := int(end - off)
	if cap(it.buf) < n {
		it.buf = make([]byte, n)
	}
	it.buf = it.buf[:n]
	if _, err := s.f.ReadAt(it.buf, off); err != nil {
		return false, fmt.Errorf("wal: read %s: %w", s.name, err)
	}
	it.ends = it.ends[:0]
	for k := i; k < j; k++ {
		it.ends = append(it.ends, uint32(s.recordEnd(k)-off))
	}
	it.seg, it.base, it.pos = s, off, 0
	return true, nil
}

// Index returns the index of the current record.
func (it *Iterator) Index() uint64 { return it.index }

// Value returns the current record. Its bytes are valid until the next call
// to Next.
func (it *Iterator) Value() []byte { return it.value }

// Err returns the error that stopped the iteration, if any.
func (it *Iterator) Err() error { return it.err }

// Close releases the iterator's buffers. It never fails.
func (it *Iterator) Close() error {
	it.buf, it.ends, it.out, it.value = nil, nil, nil, nil
	it.err = ErrClosed
	return nil
}
