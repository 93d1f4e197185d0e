package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// A segment file, named after the index of its first record (%020d.wal),
// starts with a segmentHeaderSize header (magic, format version, flags,
// first index, CRC32C of the header) and is preallocated to
// Options.SegmentSize. Records follow as frames with a frameHeaderSize
// envelope:
//
//	[0:4] CRC32C (Castagnoli) of bytes [4:9] and the stored payload
//	[4:8] stored payload length, little endian
//	[8]   type: 1 = plain record, 2 = zstd-compressed, 3 = S2-compressed;
//	      bit 0x80 set: a record of an AppendGroup group, more of which follow
//
// A zero envelope marks the end of the data.
const (
	frameHeaderSize   = 9
	segmentHeaderSize = 32

	// Frame types. Zero is never written, so a zero envelope ends the data.
	typeRecord     byte = 1
	typeRecordZstd byte = 2
	typeRecordS2   byte = 3

	// typeGroupMore, or'ed into a frame's type, marks a record of an
	// AppendGroup group that more records of the group follow. A log whose
	// last frame carries it ends inside a group, which Open drops.
	typeGroupMore byte = 0x80

	// formatVersion is the segment format this build writes and reads.
	formatVersion = 1

	// flagReset marks a segment written by Reset: every segment before it
	// is obsolete.
	flagReset uint16 = 1 << 0
)

var (
	segmentMagic = [8]byte{'M', 'R', 'W', 'A', 'L', 'S', 'E', 'G'}
	crcTable     = crc32.MakeTable(crc32.Castagnoli)
)

// Frame decoding outcomes other than success.
var (
	errFrameZero     = errors.New("zero envelope")
	errFrameShort    = errors.New("frame runs past the end of the data")
	errFrameType     = errors.New("unknown frame type")
	errFrameLength   = errors.New("frame length over the maximum")
	errFrameChecksum = errors.New("checksum mismatch")
)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crcTable) }

// frameCRC is the checksum of a frame's length, type and stored payload.
func frameCRC(hdr []byte, payload []byte) uint32 {
	return crc32.Update(headerCRC(hdr[4:frameHeaderSize]), crcTable, payload)
}

// headerCRC is crc32.Update(0, crcTable, p) for the few bytes of a header,
// a byte at a time: crc32.Update's argument escapes, which would move
// every frame being appended, header and all, to the heap.
func headerCRC(p []byte) uint32 {
	c := ^uint32(0)
	for _, b := range p {
		c = crcTable[byte(c)^b] ^ c>>8
	}
	return ^c
}

// putFrameHeader fills hdr[0:9] for a stored payload of the given type.
func putFrameHeader(hdr []byte, typ byte, payload []byte) {
	binary.LittleEndian.PutUint32(hdr[4:8], uint32(len(payload)))
	hdr[8] = typ
	binary.LittleEndian.PutUint32(hdr[0:4], frameCRC(hdr, payload))
}

// decodeFrame parses the frame at the start of b. It returns the frame type,
// the stored payload (aliasing b) and the frame's total size. maxStored bounds
// the stored payload length.
func decodeFrame(b []byte, maxStored int) (typ byte, payload []byte, n int, err error) {
	if len(b) < frameHeaderSize {
		if allZero(b) {
			return 0, nil, 0, errFrameZero
		}
		return 0, nil, 0, errFrameShort
	}
	typ = b[8]
	length := binary.LittleEndian.Uint32(b[4:8])
	if typ == 0 {
		if length == 0 && binary.LittleEndian.Uint32(b[0:4]) == 0 {
			return 0, nil, 0, errFrameZero
		}
		return 0, nil, 0, errFrameType
	}
	if !knownType(typ &^ typeGroupMore) {
		return 0, nil, 0, errFrameType
	}
	if uint64(length) > uint64(maxStored) {
		return 0, nil, 0, errFrameLength
	}
	n = frameHeaderSize + int(length)
	if n > len(b) {
		return 0, nil, 0, errFrameShort
	}
	payload = b[frameHeaderSize:n]
	if binary.LittleEndian.Uint32(b[0:4]) != frameCRC(b, payload) {
		return 0, nil, 0, errFrameChecksum
	}
	return typ, payload, n, nil
}

type segmentHeader struct {
	version uint16
	flags   uint16
	first   uint64
}

func encodeSegmentHeader(h segmentHeader) []byte {
	b := make([]byte, segmentHeaderSize)
	copy(b[0:8], segmentMagic[:])
	binary.LittleEndian.PutUint16(b[8:10], h.version)
	binary.LittleEndian.PutUint16(b[10:12], h.flags)
	binary.LittleEndian.PutUint64(b[16:24], h.first)
	binary.LittleEndian.PutUint32(b[24:28], crc32c(b[0:24]))
	return b
}

func decodeSegmentHeader(b []byte) (segmentHeader, error) {
	if len(b) < segmentHeaderSize {
		return segmentHeader{}, fmt.Errorf("header is %d bytes, want %d", len(b), segmentHeaderSize)
	}
	if !bytes.Equal(b[0:8], segmentMagic[:]) {
		return segmentHeader{}, errors.New("bad magic: not a wal segment")
	}
	if crc32c(b[0:24]) != binary.LittleEndian.Uint32(b[24:28]) {
		return segmentHeader{}, errors.New("header checksum mismatch")
	}
	h := segmentHeader{
		version: binary.LittleEndian.Uint16(b[8:10]),
		flags:   binary.LittleEndian.Uint16(b[10:12]),
		first:   binary.LittleEndian.Uint64(b[16:24]),
	}
	if h.version != formatVersion {
		return h, fmt.Errorf("%w: version %d, this build reads version %d", ErrUnsupportedFormat, h.version, formatVersion)
	}
	if h.first == 0 {
		return h, errors.New("first index is zero")
	}
	return h, nil
}

// scanResult is what scanSegment learns about one segment's bytes.
type scanResult struct {
	header  segmentHeader
	offsets []uint32 // offset of each valid record, in order
	// openGroup is the position in offsets of the first record of a group
	// the segment's valid frames end inside (its last frame is marked
	// typeGroupMore); -1 when they end outside any group.
	openGroup int
	end       int64 // offset just past the last valid record
	badErr    error // why the frame at end did not decode; nil at a clean end
}

// scanSegment verifies a segment's header and walks its frames until the first
// one that does not decode. A header problem is returned as an error; a frame
// problem is reported in badErr so the caller can judge torn tail vs damage.
func scanSegment(data []byte, maxStored int) (scanResult, error) {
	h, err := decodeSegmentHeader(data)
	if err != nil {
		return scanResult{}, err
	}
	r := scanResult{header: h, end: segmentHeaderSize, openGroup: -1}
	off := segmentHeaderSize
	for off < len(data) {
		typ, _, n, err := decodeFrame(data[off:], maxStored)
		if err != nil {
			if !errors.Is(err, errFrameZero) || !allZero(data[off:]) {
				r.badErr = err
			}
			break
		}
		switch {
		case typ&typeGroupMore == 0:
			r.openGroup = -1
		case r.openGroup < 0:
			r.openGroup = len(r.offsets)
		}
		r.offsets = append(r.offsets, uint32(off))
		off += n
		r.end = int64(off)
	}
	return r, nil
}

// tornTail reports whether damage at off in the last segment looks like a torn
// write: the damaged frame reaches the last non-zero byte of the segment (or
// past the end of the file) and no valid frame starts after it. Anything else
// might be damage to acknowledged records.
func tornTail(data []byte, off int, maxStored int) bool {
	end := len(data)
	for end > off && data[end-1] == 0 {
		end--
	}
	if end <= off {
		return true // only zeros from off on
	}
	claimed := len(data) + 1 // an unreadable length reaches "past the end"
	if off+frameHeaderSize <= len(data) {
		if length := binary.LittleEndian.Uint32(data[off+4 : off+8]); uint64(length) <= uint64(maxStored) {
			claimed = off + frameHeaderSize + int(length)
		}
	}
	if claimed < end {
		return false
	}
	for p := off + 1; p+frameHeaderSize <= end; p++ {
		if !knownType(data[p+8] &^ typeGroupMore) {
			continue
		}
		if _, _, _, err := decodeFrame(data[p:end], maxStored); err == nil {
			return false
		}
	}
	return true
}

func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// knownType reports whether typ is a record frame's type.
func knownType(typ byte) bool {
	return typ == typeRecord || typ == typeRecordZstd || typ == typeRecordS2
}
