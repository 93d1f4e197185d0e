package sharedlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// A segment is a run of frames:
//
//	length u32 | CRC32C of the body u32 | body
//	body: kind u8 | uvarint epoch | uvarint index | payload
//
// little endian. The kinds:
//
//	records  payload: uvarint count, then per record uvarint length and
//	         bytes; index is the first record's
//	fence    a writer takes the log in epoch; payload: its name; index is
//	         the next record's
//	lease    the writer is alive; no payload
//	seal     the segment ends; the next is named by index, its first
//	release  the writer let go of the log (it closed); followers take over
//	         without waiting out the lease
const (
	kindRecords byte = 1 + iota
	kindFence
	kindLease
	kindSeal
	kindRelease
)

const (
	frameHeader = 8
	// maxFrame bounds a frame's body: a length past it is a torn or foreign
	// header, not a frame.
	maxFrame = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type frame struct {
	kind         byte
	epoch, index uint64
	payload      []byte // aliases the segment's bytes
}

// appendFrame appends the frame of kind to b. payload is written by fill,
// which appends to its argument.
func appendFrame(b []byte, kind byte, epoch, index uint64, fill func([]byte) []byte) []byte {
	start := len(b)
	b = append(b, make([]byte, frameHeader)...)
	b = append(b, kind)
	b = binary.AppendUvarint(b, epoch)
	b = binary.AppendUvarint(b, index)
	if fill != nil {
		b = fill(b)
	}
	body := b[start+frameHeader:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(body)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(body, castagnoli))
	return b
}

func appendRecords(b []byte, epoch, index uint64, recs [][]byte) []byte {
	return appendFrame(b, kindRecords, epoch, index, func(b []byte) []byte {
		b = binary.AppendUvarint(b, uint64(len(recs)))
		for _, r := range recs {
			b = binary.AppendUvarint(b, uint64(len(r)))
			b = append(b, r...)
		}
		return b
	})
}

// recordsSize is the bytes appendRecords adds at most.
func recordsSize(recs [][]byte) int {
	n := frameHeader + 1 + 3*binary.MaxVarintLen64
	for _, r := range recs {
		n += binary.MaxVarintLen64 + len(r)
	}
	return n
}

// nextFrame decodes the frame at the start of b and returns it and its
// size. ok is false when b holds only part of a frame (more may come);
// err is set for a frame that cannot be one (a torn tail, or garbage).
func nextFrame(b []byte) (f frame, size int, ok bool, err error) {
	if len(b) < frameHeader {
		return frame{}, 0, false, nil
	}
	n := binary.LittleEndian.Uint32(b)
	if n == 0 || n > maxFrame {
		return frame{}, 0, false, fmt.Errorf("%w: frame length %d", ErrCorrupt, n)
	}
	if len(b)-frameHeader < int(n) {
		return frame{}, 0, false, nil
	}
	body := b[frameHeader : frameHeader+int(n)]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
		return frame{}, 0, false, fmt.Errorf("%w: frame checksum", ErrCorrupt)
	}
	f.kind = body[0]
	rest := body[1:]
	var k int
	if f.epoch, k = binary.Uvarint(rest); k <= 0 {
		return frame{}, 0, false, fmt.Errorf("%w: frame epoch", ErrCorrupt)
	}
	rest = rest[k:]
	if f.index, k = binary.Uvarint(rest); k <= 0 {
		return frame{}, 0, false, fmt.Errorf("%w: frame index", ErrCorrupt)
	}
	f.payload = rest[k:]
	if f.kind < kindRecords || f.kind > kindRelease {
		return frame{}, 0, false, fmt.Errorf("%w: frame kind %d", ErrCorrupt, f.kind)
	}
	return f, frameHeader + int(n), true, nil
}

// records decodes a records frame's payload; the records alias it.
func (f frame) records() ([][]byte, error) {
	b := f.payload
	count, k := binary.Uvarint(b)
	if k <= 0 || count == 0 || count > uint64(len(b)) {
		return nil, fmt.Errorf("%w: record count", ErrCorrupt)
	}
	b = b[k:]
	recs := make([][]byte, count)
	for i := range recs {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, fmt.Errorf("%w: record %d length", ErrCorrupt, i)
		}
		recs[i], b = b[k:k+int(n)], b[k+int(n):]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the records", ErrCorrupt, len(b))
	}
	return recs, nil
}

// segmentName is the name of the segment whose first record is first.
func segmentName(prefix string, first uint64) string {
	return fmt.Sprintf("%s/seg-%020d", prefix, first)
}

// The front blob is an append blob of fixed-size records, the last whole
// one valid: the oldest segment's first index and the last index of the
// snapshot object that covers everything before it (0: none),
//
//	first u64 | snapshot last u64 | CRC32C of the two u32
//
// little endian. Appended conditionally and only ever forward, so two
// writers reclaiming at once cannot move it back.
const frontRecord = 20

func encodeFront(first, snapLast uint64) []byte {
	b := binary.LittleEndian.AppendUint64(nil, first)
	b = binary.LittleEndian.AppendUint64(b, snapLast)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func decodeFront(b []byte) (first, snapLast uint64, err error) {
	if len(b) != frontRecord || crc32.Checksum(b[:16], castagnoli) != binary.LittleEndian.Uint32(b[16:]) {
		return 0, 0, fmt.Errorf("%w: front record", ErrCorrupt)
	}
	first, snapLast = binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
	if first == 0 {
		return 0, 0, fmt.Errorf("%w: front index 0", ErrCorrupt)
	}
	return first, snapLast, nil
}

// snapshotName is the name of the snapshot object ending at last.
func snapshotName(prefix string, last uint64) string {
	return fmt.Sprintf("%s/snapshot-%020d", prefix, last)
}

// The snapshot object is the shard's state at a point of the log, a
// valuelog state with this magic: a checkpoint image and the writer's
// value log from its front, every record the image needs and those after
// it.
const snapMagic = "SLS1"
