package tcptransport

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
)

// Frame layout, every frame on every connection:
//
//	[0]    format version (frameVersion)
//	[1]    frame type
//	[2:6]  payload length, big endian
//	[6:10] CRC32C (Castagnoli) of the payload
//	[10:]  payload
//
// TCP checksums are weak (16 bits, and middleboxes rewrite segments), and a
// CRC32C costs little next to the fsync behind every raft message, so every
// payload carries one.
const (
	frameHeaderSize = 10
	frameVersion    = 1
)

// Frame types.
const (
	// frameHello opens every connection: uvarint sender ID, uvarint
	// receiver ID, one byte stream kind (streamMessages or streamSnapshot).
	frameHello byte = 1
	// frameMessage carries one protobuf raftpb.Message (never a MsgSnap).
	frameMessage byte = 2
	// frameSnapHeader starts a snapshot stream: uvarint length of the
	// snapshot data, then the MsgSnap without its data (protobuf).
	frameSnapHeader byte = 3
	// frameSnapChunk carries the next bytes of the snapshot data.
	frameSnapChunk byte = 4
	// frameSnapAck is the receiver's answer once the whole snapshot has been
	// handed to raft: one byte, snapAckOK or snapAckFailed.
	frameSnapAck byte = 5
)

// Stream kinds named in a hello frame.
const (
	streamMessages byte = 1
	streamSnapshot byte = 2
)

// Snapshot acknowledgements.
const (
	snapAckOK     byte = 0
	snapAckFailed byte = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func knownFrameType(t byte) bool { return t >= frameHello && t <= frameSnapAck }

// appendFrame appends one frame holding payload to dst.
func appendFrame(dst []byte, typ byte, payload []byte) []byte {
	var hdr [frameHeaderSize]byte
	putFrameHeader(&hdr, typ, payload)
	dst = append(dst, hdr[:]...)
	return append(dst, payload...)
}

func putFrameHeader(hdr *[frameHeaderSize]byte, typ byte, payload []byte) {
	hdr[0] = frameVersion
	hdr[1] = typ
	binary.BigEndian.PutUint32(hdr[2:6], uint32(len(payload)))
	binary.BigEndian.PutUint32(hdr[6:10], crc32.Checksum(payload, castagnoli))
}

// writeFrame writes one frame to w (usually a bufio.Writer, so the header
// and payload become one write).
func writeFrame(w io.Writer, typ byte, payload []byte) (int, error) {
	var hdr [frameHeaderSize]byte
	putFrameHeader(&hdr, typ, payload)
	n, err := w.Write(hdr[:])
	if err != nil {
		return n, err
	}
	m, err := w.Write(payload)
	return n + m, err
}

// frameReader reads frames from a connection, reusing one payload buffer.
type frameReader struct {
	r       io.Reader
	maxSize int
	hdr     [frameHeaderSize]byte
	buf     []byte
}

// next reads the next frame. The payload aliases the reader's buffer and
// is valid until the following call. A clean end of the stream before a
// header returns io.EOF; a stream cut inside a frame io.ErrUnexpectedEOF.
// The length is checked against maxSize before any payload is read or
// allocated, so a bad length cannot make the reader allocate.
func (fr *frameReader) next() (typ byte, payload []byte, err error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return 0, nil, err
	}
	if fr.hdr[0] != frameVersion {
		return 0, nil, fmt.Errorf("%w: format version %d", ErrCorruptFrame, fr.hdr[0])
	}
	typ = fr.hdr[1]
	if !knownFrameType(typ) {
		return 0, nil, fmt.Errorf("%w: frame type %d", ErrCorruptFrame, typ)
	}
	size := binary.BigEndian.Uint32(fr.hdr[2:6])
	if uint64(size) > uint64(fr.maxSize) {
		return 0, nil, fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, size, fr.maxSize)
	}
	if cap(fr.buf) < int(size) {
		fr.buf = make([]byte, size)
	}
	payload = fr.buf[:size]
	if _, err := io.ReadFull(fr.r, payload); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	if crc32.Checksum(payload, castagnoli) != binary.BigEndian.Uint32(fr.hdr[6:10]) {
		return 0, nil, fmt.Errorf("%w: checksum mismatch in a type %d frame", ErrCorruptFrame, typ)
	}
	return typ, payload, nil
}

// hello is the first frame of a connection.
type hello struct {
	from, to uint64
	kind     byte
}

func (h hello) encode() []byte {
	b := binary.AppendUvarint(nil, h.from)
	b = binary.AppendUvarint(b, h.to)
	return append(b, h.kind)
}

func decodeHello(b []byte) (hello, error) {
	from, n := binary.Uvarint(b)
	if n <= 0 {
		return hello{}, fmt.Errorf("%w: hello sender", ErrCorruptFrame)
	}
	b = b[n:]
	to, n := binary.Uvarint(b)
	if n <= 0 {
		return hello{}, fmt.Errorf("%w: hello receiver", ErrCorruptFrame)
	}
	b = b[n:]
	if len(b) != 1 || (b[0] != streamMessages && b[0] != streamSnapshot) {
		return hello{}, fmt.Errorf("%w: hello stream kind", ErrCorruptFrame)
	}
	return hello{from: from, to: to, kind: b[0]}, nil
}
