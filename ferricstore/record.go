package ferricstore

import (
	"encoding/binary"
	"errors"

	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

// opCode names a logged stream change. Codes are stable once assigned: a
// record outlives the binary that wrote it.
type opCode byte

const (
	opAdd opCode = 1 + iota
	opDelete
	opTrim
	opSetID
	opCreateGroup
	opSetGroupID
	opDestroyGroup
	opCreateConsumer
	opDeleteConsumer
	opReadNew
	opReadHistory
	opAck
	opClaim
	opAutoClaim
	opDeleteKey
	maxOp = opDeleteKey
)

// Flags of an op.
const (
	flagMkStream byte = 1 << iota
	flagNoAck
	flagJustID
	flagForce
	flagApprox
)

// recordVersion is the format of a record; Open refuses another.
const recordVersion = 1

// op is one resolved stream change: everything its apply needs, the time
// and XADD's ID included, so that replay rebuilds the same state.
type op struct {
	code            opCode
	flags           byte
	key             string
	group, consumer string
	// id is XADD's, XSETID's, a group's start, a history read's or an
	// autoclaim's start; ids are XDEL's, XACK's, XCLAIM's.
	id  stream.ID
	ids []stream.ID
	// fields are XADD's.
	fields [][]byte
	// trim is XADD's and XTRIM's.
	trimStrategy int
	maxLen       int64
	minID        stream.ID
	limit        int64
	// a and b are the op's numbers: entries-read (groups), entries-added
	// (XSETID), count (reads, autoclaim), min-idle (claims), retry count
	// (XCLAIM).
	a, b int64
	// c is a claim's delivery time.
	c int64
	// id2 is XSETID's max deleted ID or XCLAIM's LASTID.
	id2 stream.ID
	now int64
}

func (o *op) trim() stream.Trim {
	return stream.Trim{Strategy: o.trimStrategy, MaxLen: o.maxLen, MinID: o.minID, Approx: o.flags&flagApprox != 0, Limit: o.limit}
}

func (o *op) setTrim(t stream.Trim) {
	o.trimStrategy, o.maxLen, o.minID, o.limit = t.Strategy, t.MaxLen, t.MinID, t.Limit
	if t.Approx {
		o.flags |= flagApprox
	}
}

// encode appends o's record to dst:
//
//	version code flags key group consumer id ids fields
//	trimStrategy maxLen minID limit a b c id2 now
//
// with strings and byte slices as uvarint length then bytes, IDs as two
// uvarints, lists as a uvarint count then their elements, numbers as
// varints.
func (o *op) encode(dst []byte) []byte {
	dst = append(dst, recordVersion, byte(o.code), o.flags)
	dst = appendString(dst, o.key)
	dst = appendString(dst, o.group)
	dst = appendString(dst, o.consumer)
	dst = appendID(dst, o.id)
	dst = binary.AppendUvarint(dst, uint64(len(o.ids)))
	for _, id := range o.ids {
		dst = appendID(dst, id)
	}
	dst = binary.AppendUvarint(dst, uint64(len(o.fields)))
	for _, f := range o.fields {
		dst = binary.AppendUvarint(dst, uint64(len(f)))
		dst = append(dst, f...)
	}
	dst = binary.AppendUvarint(dst, uint64(o.trimStrategy))
	dst = binary.AppendVarint(dst, o.maxLen)
	dst = appendID(dst, o.minID)
	dst = binary.AppendVarint(dst, o.limit)
	dst = binary.AppendVarint(dst, o.a)
	dst = binary.AppendVarint(dst, o.b)
	dst = binary.AppendVarint(dst, o.c)
	dst = appendID(dst, o.id2)
	return binary.AppendVarint(dst, o.now)
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendID(dst []byte, id stream.ID) []byte {
	dst = binary.AppendUvarint(dst, id.Ms)
	return binary.AppendUvarint(dst, id.Seq)
}

// Errors of decoding a record.
var (
	// ErrRecordVersion: a record of a format this build does not know.
	ErrRecordVersion = errors.New("ferricstore: unknown record version")
	// ErrMalformed: a damaged record.
	ErrMalformed = errors.New("ferricstore: malformed record")
)

// decodeOp reads a record. Its byte slices alias rec.
func decodeOp(rec []byte) (op, error) {
	var o op
	if len(rec) < 3 {
		return o, ErrMalformed
	}
	if rec[0] != recordVersion {
		return o, ErrRecordVersion
	}
	o.code, o.flags = opCode(rec[1]), rec[2]
	if o.code == 0 || o.code > maxOp {
		return o, ErrMalformed
	}
	d := decoder{b: rec[3:]}
	o.key = string(d.bytes())
	o.group = string(d.bytes())
	o.consumer = string(d.bytes())
	o.id = d.id()
	if n := d.count(2); n > 0 {
		o.ids = make([]stream.ID, n)
		for i := range o.ids {
			o.ids[i] = d.id()
		}
	}
	if n := d.count(1); n > 0 {
		o.fields = make([][]byte, n)
		for i := range o.fields {
			o.fields[i] = d.bytes()
		}
	}
	o.trimStrategy = int(d.uvarint())
	o.maxLen = d.varint()
	o.minID = d.id()
	o.limit = d.varint()
	o.a = d.varint()
	o.b = d.varint()
	o.c = d.varint()
	o.id2 = d.id()
	o.now = d.varint()
	if d.err != nil || len(d.b) != 0 || o.trimStrategy > stream.TrimMinID {
		return op{}, ErrMalformed
	}
	return o, nil
}

// decoder reads a record's fields; the first failure sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = ErrMalformed
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = ErrMalformed
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) id() stream.ID { return stream.ID{Ms: d.uvarint(), Seq: d.uvarint()} }

// count reads a list's length, refusing one that cannot fit in what is
// left (each element takes at least min bytes).
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)/min) {
		d.err = ErrMalformed
		return 0
	}
	return int(n)
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = ErrMalformed
		return nil
	}
	b := d.b[:n:n]
	d.b = d.b[n:]
	return b
}
