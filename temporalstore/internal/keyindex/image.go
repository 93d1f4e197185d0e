package keyindex

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrImage is returned by DecodeImage for bytes that are not an index image
// this package wrote.
var ErrImage = errors.New("keyindex: malformed image")

// AppendImage appends the index's entries to dst: their count (uvarint),
// then 16 bytes a slot (tag, meta, addr, little endian). The caller frames
// and checksums it (a shard's checkpoint does).
func (x *Index) AppendImage(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(x.live))
	for _, s := range x.slots {
		if s.meta == 0 {
			continue
		}
		dst = binary.LittleEndian.AppendUint32(dst, s.tag)
		dst = binary.LittleEndian.AppendUint32(dst, s.meta)
		dst = binary.LittleEndian.AppendUint64(dst, s.addr)
	}
	return dst
}

// DecodeImage rebuilds an index from AppendImage's bytes.
func DecodeImage(b []byte) (*Index, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, fmt.Errorf("%w: bad count", ErrImage)
	}
	b = b[k:]
	if n != uint64(len(b))/SlotBytes || uint64(len(b))%SlotBytes != 0 {
		return nil, fmt.Errorf("%w: %d entries in %d bytes", ErrImage, n, len(b))
	}
	x := New(int(n))
	for i := range int(n) {
		s := slot{
			tag:  binary.LittleEndian.Uint32(b[i*SlotBytes:]),
			meta: binary.LittleEndian.Uint32(b[i*SlotBytes+4:]),
			addr: binary.LittleEndian.Uint64(b[i*SlotBytes+8:]),
		}
		if s.meta == 0 || s.tag == 0 {
			return nil, fmt.Errorf("%w: empty entry %d", ErrImage, i)
		}
		x.insert(s)
		x.live++
	}
	return x, nil
}
