package topology

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"
)

// The membership encoding, version 1. All integers are unsigned varints
// (encoding/binary.AppendUvarint).
//
//	magic            "MCRG"
//	version          1 byte, 1
//	points/weight    uvarint
//	node count       uvarint
//	per node, in strictly increasing ID order:
//	  ID length, ID  uvarint, bytes (non-empty)
//	  weight         uvarint (1..MaxWeight)
//	  domain length, domain  uvarint, bytes (may be empty)
//	  state          1 byte: 0 Live, 1 Down
//	checksum         4 bytes, little endian: CRC-32C (Castagnoli) of all the
//	                 bytes before it
//
// A membership has exactly one encoding, so equal memberships encode to
// equal bytes.
const (
	encodingMagic   = "MCRG"
	encodingVersion = 1
	// minNodeSize is the fewest bytes one node can take: ID length, a
	// one-byte ID, weight, domain length and state.
	minNodeSize = 5
)

// castagnoli is the CRC-32C table; crc32.MakeTable caches it internally.
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// MarshalBinary encodes the ring's membership and options (not its derived
// points) in the membership encoding (see encodingMagic), for gossip and
// persistence. It implements encoding.BinaryMarshaler and never fails.
func (r *Ring) MarshalBinary() ([]byte, error) {
	return r.AppendBinary(nil)
}

// AppendBinary appends the encoding of MarshalBinary to b. It implements
// encoding.BinaryAppender and never fails.
func (r *Ring) AppendBinary(b []byte) ([]byte, error) {
	start := len(b)
	b = append(b, encodingMagic...)
	b = append(b, encodingVersion)
	b = binary.AppendUvarint(b, uint64(r.ppw))
	b = binary.AppendUvarint(b, uint64(len(r.nodes)))
	for _, m := range r.nodes {
		b = binary.AppendUvarint(b, uint64(len(m.ID)))
		b = append(b, m.ID...)
		b = binary.AppendUvarint(b, uint64(m.Weight))
		b = binary.AppendUvarint(b, uint64(len(m.Domain)))
		b = append(b, m.Domain...)
		b = append(b, byte(m.State))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli())), nil
}

// Decode builds a ring from the output of MarshalBinary. It rejects, with
// an error wrapping ErrMalformed, anything MarshalBinary would not have
// produced: a bad magic, version or checksum, truncated or trailing bytes,
// IDs out of order or repeated, and out-of-range weights, states or
// options. It never panics and allocates in proportion to len(b), except
// for the ring's points, which MaxPoints bounds.
func Decode(b []byte) (*Ring, error) {
	const header = len(encodingMagic) + 1
	if len(b) < header+2+4 {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrMalformed, len(b))
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if string(body[:len(encodingMagic)]) != encodingMagic {
		return nil, fmt.Errorf("%w: bad magic", ErrMalformed)
	}
	if v := body[len(encodingMagic)]; v != encodingVersion {
		return nil, fmt.Errorf("%w: unsupported version %d", ErrMalformed, v)
	}
	if got := crc32.Checksum(body, castagnoli()); got != sum {
		return nil, fmt.Errorf("%w: checksum %#08x, want %#08x", ErrMalformed, got, sum)
	}
	d := decoder{b: body[header:]}
	ppw := d.uvarint("points per weight")
	if d.err == nil && (ppw < 1 || ppw > MaxPointsPerWeight) {
		d.fail("points per weight %d out of range", ppw)
	}
	count := d.uvarint("node count")
	if d.err == nil && count > uint64(len(d.b)/minNodeSize) {
		d.fail("node count %d exceeds the data", count)
	}
	if d.err != nil {
		return nil, d.err
	}
	nodes := make([]Node, 0, count)
	for i := uint64(0); i < count && d.err == nil; i++ {
		var n Node
		n.ID = NodeID(d.bytes("node ID"))
		w := d.uvarint("weight")
		n.Domain = d.bytes("domain")
		s := d.byte("state")
		if d.err != nil {
			break
		}
		switch {
		case n.ID == "":
			d.fail("node %d has an empty ID", i)
		case len(nodes) > 0 && strings.Compare(string(nodes[len(nodes)-1].ID), string(n.ID)) >= 0:
			d.fail("node %q is out of order or repeated", n.ID)
		case w < 1 || w > MaxWeight:
			d.fail("node %q has weight %d", n.ID, w)
		case State(s) != Live && State(s) != Down:
			d.fail("node %q has state %d", n.ID, s)
		}
		n.Weight, n.State = int(w), State(s)
		nodes = append(nodes, n)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	r, err := New(Options{PointsPerWeight: int(ppw)}, nodes...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return r, nil
}

// decoder reads fields from b, remembering the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
	}
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad %s", what)
		return 0
	}
	// Reject non-minimal varints so that the encoding stays canonical.
	if n > 1 && d.b[n-1] == 0 {
		d.fail("non-minimal %s", what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(what string) string {
	l := d.uvarint(what + " length")
	if d.err != nil {
		return ""
	}
	if l > uint64(len(d.b)) {
		d.fail("%s length %d exceeds the data", what, l)
		return ""
	}
	s := string(d.b[:l])
	d.b = d.b[l:]
	return s
}

func (d *decoder) byte(what string) byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail("missing %s", what)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}
