package tcptransport

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
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
	// frameGroupMessage is frameMessage for one raft group of many sharing
	// the transport (Transport.Group): uvarint group ID (non-zero), then
	// the frameMessage payload.
	frameGroupMessage byte = 6
	// frameGroupSnapHeader is frameSnapHeader for one raft group: uvarint
	// group ID (non-zero), then the frameSnapHeader payload.
	frameGroupSnapHeader byte = 7
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

func knownFrameType(t byte) bool { return t >= frameHello && t <= frameGroupSnapHeader }

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

// Group 0 stands for the transport's own, un-grouped handler (Start): its
// messages use the original frame types, so a transport used without
// groups writes exactly what it always wrote. Any other group's frames
// carry the group ID in front of the original payload.

// messageFrameType and snapHeaderFrameType return the frame type for a
// message or snapshot header of group.
func messageFrameType(group uint64) byte {
	if group == 0 {
		return frameMessage
	}
	return frameGroupMessage
}

func snapHeaderFrameType(group uint64) byte {
	if group == 0 {
		return frameSnapHeader
	}
	return frameGroupSnapHeader
}

// appendGroup starts the payload of a frame of group: the group ID for a
// grouped frame, nothing for group 0.
func appendGroup(dst []byte, group uint64) []byte {
	if group == 0 {
		return dst
	}
	return binary.AppendUvarint(dst, group)
}

// splitGroup returns the group a message or snapshot header frame of type
// typ belongs to and the payload of its un-grouped form. A grouped frame
// naming group 0 is refused: that group has frame types of its own, and
// accepting both spellings would let one message mean two things.
func splitGroup(typ byte, payload []byte) (uint64, []byte, error) {
	switch typ {
	case frameMessage, frameSnapHeader:
		return 0, payload, nil
	case frameGroupMessage, frameGroupSnapHeader:
		group, n := binary.Uvarint(payload)
		if n <= 0 || group == 0 {
			return 0, nil, fmt.Errorf("%w: group ID in a type %d frame", ErrCorruptFrame, typ)
		}
		return group, payload[n:], nil
	default:
		return 0, nil, fmt.Errorf("%w: frame type %d carries no group", ErrCorruptFrame, typ)
	}
}

// decodeMessageFrame decodes a frameMessage or frameGroupMessage.
func decodeMessageFrame(typ byte, payload []byte) (uint64, *pb.Message, error) {
	if typ != frameMessage && typ != frameGroupMessage {
		return 0, nil, fmt.Errorf("%w: frame type %d on a message stream", ErrCorruptFrame, typ)
	}
	group, payload, err := splitGroup(typ, payload)
	if err != nil {
		return 0, nil, err
	}
	m := &pb.Message{}
	if err := proto.Unmarshal(payload, m); err != nil {
		return 0, nil, fmt.Errorf("%w: message: %v", ErrCorruptFrame, err)
	}
	return group, m, nil
}

// snapHeader is a decoded snapshot header frame: the MsgSnap without its
// data, and how many bytes of data follow in chunks.
type snapHeader struct {
	group uint64
	size  uint64
	m     *pb.Message
}

// encodeSnapHeader returns the payload of a snapshot header frame (of
// type snapHeaderFrameType(group)).
func encodeSnapHeader(group, size uint64, head *pb.Message) ([]byte, error) {
	b := appendGroup(nil, group)
	b = binary.AppendUvarint(b, size)
	return proto.MarshalOptions{}.MarshalAppend(b, head)
}

// decodeSnapHeader decodes a frameSnapHeader or frameGroupSnapHeader. It
// checks the encoding only; whether the message is a MsgSnap for this node
// is the receiver's business.
func decodeSnapHeader(typ byte, payload []byte) (snapHeader, error) {
	if typ != frameSnapHeader && typ != frameGroupSnapHeader {
		return snapHeader{}, fmt.Errorf("%w: snapshot stream opened with frame type %d", ErrCorruptFrame, typ)
	}
	group, payload, err := splitGroup(typ, payload)
	if err != nil {
		return snapHeader{}, err
	}
	size, n := binary.Uvarint(payload)
	if n <= 0 {
		return snapHeader{}, fmt.Errorf("%w: snapshot size", ErrCorruptFrame)
	}
	m := &pb.Message{}
	if err := proto.Unmarshal(payload[n:], m); err != nil {
		return snapHeader{}, fmt.Errorf("%w: snapshot header: %v", ErrCorruptFrame, err)
	}
	return snapHeader{group: group, size: size, m: m}, nil
}
