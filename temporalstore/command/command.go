package command

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Version is the record format this package writes.
const Version = 1

// Record kinds.
const (
	kindCommand = 1
	kindBatch   = 2
)

// Op names a command. Numbers are stable: they are stored in logs.
type Op uint16

// Errors of Decode. Match them with errors.Is.
var (
	// ErrVersion is returned for a record of a version this build does
	// not read (newer, or unknown).
	ErrVersion = errors.New("command: unknown record version")
	// ErrMalformed is returned for a damaged or truncated record.
	ErrMalformed = errors.New("command: malformed record")
)

// Command is one write as the log stores it.
type Command struct {
	Op    Op
	Flags uint64
	// Time is when the engine accepted the command (Unix ms): replay judges
	// expiry against it.
	Time int64
	// Expiry is the absolute expiry the command sets (Unix ms), 0 for none.
	Expiry int64
	Key    []byte
	Args   [][]byte
}

// Decoded is a decoded command. Its key and arguments alias the record's
// bytes, which the caller must keep unchanged while it uses them.
type Decoded struct {
	Command
	// Offset is where the command starts in a batch record (0 in a
	// one-command record): Loc{Offset: Offset} finds it again without
	// skipping the commands before it.
	Offset int
}

// Loc locates a command in a record: by its position (Offset 0), or, in a
// batch record, by the offset of its first byte, which costs nothing
// however many commands come before it.
type Loc struct {
	Pos, Offset int
	// Count, when the caller knows it, is the record's command count:
	// a command located by offset is then read without touching the
	// record's header (a memory line fewer), and Count is what the
	// decoders return for it.
	Count int
}

// IsOne reports that rec is a record of one command, not a batch: what a
// value of its own is stored as.
func IsOne(rec []byte) bool { return len(rec) > 1 && rec[0] == Version && rec[1] == kindCommand }

// BatchOffset is where the first command of a batch record of n commands
// starts; Size(c) added to a command's offset gives the next one's.
func BatchOffset(n int) int { return 2 + uvarintLen(uint64(n)) }

// Size is the length of c's encoding inside a record.
func Size(c *Command) int {
	n := uvarintLen(uint64(c.Op)) + uvarintLen(c.Flags) + varintLen(c.Time) + varintLen(c.Expiry) +
		uvarintLen(uint64(len(c.Key))) + len(c.Key) + uvarintLen(uint64(len(c.Args)))
	for _, a := range c.Args {
		n += uvarintLen(uint64(len(a))) + len(a)
	}
	return n
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// varintLen is the length of binary.AppendVarint's zig-zag encoding.
func varintLen(v int64) int { return uvarintLen(uint64(v<<1) ^ uint64(v>>63)) }

// Append appends c as a one-command record to dst.
func Append(dst []byte, c *Command) []byte {
	dst = append(dst, Version, kindCommand)
	return appendCommand(dst, c)
}

// AppendBatch appends cs as one batch record to dst.
func AppendBatch(dst []byte, cs []Command) []byte {
	dst = append(dst, Version, kindBatch)
	dst = binary.AppendUvarint(dst, uint64(len(cs)))
	for i := range cs {
		dst = appendCommand(dst, &cs[i])
	}
	return dst
}

func appendCommand(dst []byte, c *Command) []byte {
	dst = binary.AppendUvarint(dst, uint64(c.Op))
	dst = binary.AppendUvarint(dst, c.Flags)
	dst = binary.AppendVarint(dst, c.Time)
	dst = binary.AppendVarint(dst, c.Expiry)
	dst = appendBytes(dst, c.Key)
	dst = binary.AppendUvarint(dst, uint64(len(c.Args)))
	for _, a := range c.Args {
		dst = appendBytes(dst, a)
	}
	return dst
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// Decode decodes a record: one command, or every command of a batch.
func Decode(rec []byte) ([]Decoded, error) {
	if len(rec) < 2 {
		return nil, fmt.Errorf("%w: %d bytes", ErrMalformed, len(rec))
	}
	if rec[0] != Version {
		return nil, fmt.Errorf("%w: version %d (this build reads %d)", ErrVersion, rec[0], Version)
	}
	d := decoder{b: rec, off: 2}
	switch rec[1] {
	case kindCommand:
		c, err := d.command()
		if err != nil {
			return nil, err
		}
		if d.off != len(rec) {
			return nil, fmt.Errorf("%w: %d bytes after the command", ErrMalformed, len(rec)-d.off)
		}
		return []Decoded{c}, nil
	case kindBatch:
		n, err := d.uvarint()
		if err != nil {
			return nil, err
		}
		// Every command takes at least 7 bytes: a bound on n before
		// allocating for it.
		if n > uint64(len(rec)-d.off)/7 {
			return nil, fmt.Errorf("%w: batch of %d commands in %d bytes", ErrMalformed, n, len(rec))
		}
		out := make([]Decoded, 0, n)
		for range n {
			at := d.off
			c, err := d.command()
			c.Offset = at
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		if d.off != len(rec) {
			return nil, fmt.Errorf("%w: %d bytes after the batch", ErrMalformed, len(rec)-d.off)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%w: record kind %d", ErrMalformed, rec[1])
	}
}

type decoder struct {
	b   []byte
	off int
}

func (d *decoder) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: bad varint at offset %d", ErrMalformed, d.off)
	}
	d.off += n
	return v, nil
}

func (d *decoder) varint() (int64, error) {
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: bad varint at offset %d", ErrMalformed, d.off)
	}
	d.off += n
	return v, nil
}

// bytes returns the next length-prefixed bytes (aliasing the record) and
// their offset.
func (d *decoder) bytes() ([]byte, error) {
	n, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(d.b)-d.off) {
		return nil, fmt.Errorf("%w: %d bytes wanted at offset %d, %d left", ErrMalformed, n, d.off, len(d.b)-d.off)
	}
	at := d.off
	d.off += int(n)
	return d.b[at:d.off:d.off], nil
}

func (d *decoder) command() (Decoded, error) {
	var c Decoded
	if err := d.head(&c.Command); err != nil {
		return c, err
	}
	n, err := d.argCount()
	if err != nil {
		return c, err
	}
	if n > 0 {
		c.Args = make([][]byte, n)
	}
	for i := range c.Args {
		if c.Args[i], err = d.bytes(); err != nil {
			return c, err
		}
	}
	return c, nil
}

// head decodes a command's fields up to and including its key into c.
func (d *decoder) head(c *Command) error {
	op, err := d.uvarint()
	if err != nil {
		return err
	}
	if op > 0xffff {
		return fmt.Errorf("%w: op %d", ErrMalformed, op)
	}
	c.Op = Op(op)
	if c.Flags, err = d.uvarint(); err != nil {
		return err
	}
	if c.Time, err = d.varint(); err != nil {
		return err
	}
	if c.Expiry, err = d.varint(); err != nil {
		return err
	}
	c.Key, err = d.bytes()
	return err
}

// argCount reads a command's argument count, refusing more than the bytes
// left could hold (every argument takes at least its length byte).
func (d *decoder) argCount() (uint64, error) {
	n, err := d.uvarint()
	if err == nil && n > uint64(len(d.b)-d.off) {
		err = fmt.Errorf("%w: %d arguments in %d bytes", ErrMalformed, n, len(d.b)-d.off)
	}
	return n, err
}

// DecodeOne decodes the command at l in a record (position 0 for a
// one-command record) and returns it with the record's command count.
// Unlike Decode it builds no other command: located by position it skips
// the ones before, located by offset it goes straight to it, so a read of
// one key of a large batch costs that key's command, not the batch's.
func DecodeOne(rec []byte, l Loc) (Decoded, int, error) {
	d, n, err := seek(rec, l)
	if err != nil {
		return Decoded{}, 0, err
	}
	at := d.off
	c, err := d.command()
	if rec[1] == kindBatch {
		c.Offset = at
	}
	if err == nil && rec[1] == kindCommand && d.off != len(rec) {
		err = fmt.Errorf("%w: %d bytes after the command", ErrMalformed, len(rec)-d.off)
	}
	return c, n, err
}

// minBatchHeader is the smallest batch header: version, kind and a
// one-byte count.
const minBatchHeader = 3

// Value is a command's key, expiry and first argument, as StringAt
// decodes them: slices of the record.
type Value struct {
	Key, Arg []byte
	Expiry   int64
}

// StringAt is DecodeOne for a string's read: it returns the key, expiry
// and first argument (nil for none) of the command at l in rec, with the
// record's command count, and allocates nothing. Located by offset, it
// goes straight there without reading the record's header (a memory line
// fewer to touch), and returns l.Count as the count (0 when unset).
func StringAt(rec []byte, l Loc) (Value, int, error) {
	var d decoder
	var n int
	var err error
	if l.Offset != 0 {
		d, err = atOffset(rec, l.Offset)
		n = l.Count
	} else {
		d, n, err = seek(rec, l)
	}
	if err != nil {
		return Value{}, 0, err
	}
	var c Command
	if err := d.head(&c); err != nil {
		return Value{}, 0, err
	}
	v := Value{Key: c.Key, Expiry: c.Expiry}
	args, err := d.argCount()
	if err == nil && args > 0 {
		v.Arg, err = d.bytes()
	}
	return v, n, err
}

// Span is where StringSpan found a command's value in its record.
type Span struct {
	Key    []byte // a slice of the head
	Expiry int64
	// Offset and Len are the value's place in the record.
	Offset, Len int
}

// StringSpan is StringAt for a one-command record of size bytes, of which
// only head, a prefix, is at hand (a record kept in a file): it decodes
// the command as far as its value's length and returns where the value
// lies. A record StringAt would not take, or whose key or value's length
// is past head, or whose value is not all the record holds after it, is
// refused: the caller reads the record whole.
func StringSpan(head []byte, size int) (Span, error) {
	if len(head) > size || len(head) < 2 || head[0] != Version || head[1] != kindCommand {
		return Span{}, fmt.Errorf("%w: not the head of a one-command record", ErrMalformed)
	}
	d := decoder{b: head, off: 2}
	var c Command
	if err := d.head(&c); err != nil {
		return Span{}, err
	}
	sp := Span{Key: c.Key, Expiry: c.Expiry}
	args, err := d.uvarint()
	if err != nil {
		return Span{}, err
	}
	if args == 0 {
		sp.Offset = d.off
		if d.off != size {
			return Span{}, fmt.Errorf("%w: %d bytes after the command", ErrMalformed, size-d.off)
		}
		return sp, nil
	}
	n, err := d.uvarint()
	if err != nil {
		return Span{}, err
	}
	if args != 1 || n != uint64(size-d.off) {
		return Span{}, fmt.Errorf("%w: %d arguments, the first of %d bytes, in %d bytes", ErrMalformed, args, n, size-d.off)
	}
	sp.Offset, sp.Len = d.off, int(n)
	return sp, nil
}

// KeyAt is DecodeOne for the key alone: it returns the key of the
// command at l in rec (a slice of rec) and the record's command count, and
// allocates nothing. It checks the command only as far as its key.
func KeyAt(rec []byte, l Loc) ([]byte, int, error) {
	d, n, err := seek(rec, l)
	if err != nil {
		return nil, 0, err
	}
	var c Command
	if err := d.head(&c); err != nil {
		return nil, 0, err
	}
	return c.Key, n, nil
}

// atOffset is a decoder at the command at off in a batch record, found
// without reading the record's header; what starts there is checked by
// decoding it.
func atOffset(rec []byte, off int) (decoder, error) {
	if off < minBatchHeader || off >= len(rec) {
		return decoder{}, fmt.Errorf("%w: no command at offset %d of a %d-byte record", ErrMalformed, off, len(rec))
	}
	return decoder{b: rec, off: off}, nil
}

// seek returns a decoder at the start of the command at l in rec, and the
// record's command count. An offset is checked to lie in the batch's
// commands; what starts there is checked by decoding it. With l.Count set,
// an offset is taken without reading the header, and so is the count.
func seek(rec []byte, l Loc) (decoder, int, error) {
	if l.Offset != 0 && l.Count > 0 {
		d, err := atOffset(rec, l.Offset)
		return d, l.Count, err
	}
	if len(rec) < 2 {
		return decoder{}, 0, fmt.Errorf("%w: %d bytes", ErrMalformed, len(rec))
	}
	if rec[0] != Version {
		return decoder{}, 0, fmt.Errorf("%w: version %d (this build reads %d)", ErrVersion, rec[0], Version)
	}
	d := decoder{b: rec, off: 2}
	switch rec[1] {
	case kindCommand:
		if l.Pos != 0 || l.Offset != 0 {
			return decoder{}, 0, fmt.Errorf("%w: no command at %+v in a one-command record", ErrMalformed, l)
		}
		return d, 1, nil
	case kindBatch:
		n, err := d.uvarint()
		if err != nil {
			return decoder{}, 0, err
		}
		if n > uint64(len(rec)-d.off)/7 {
			return decoder{}, 0, fmt.Errorf("%w: batch of %d commands in %d bytes", ErrMalformed, n, len(rec))
		}
		if l.Offset != 0 {
			if l.Offset < d.off || l.Offset >= len(rec) {
				return decoder{}, 0, fmt.Errorf("%w: no command at offset %d of a %d-byte batch", ErrMalformed, l.Offset, len(rec))
			}
			d.off = l.Offset
			return d, int(n), nil
		}
		if l.Pos < 0 || uint64(l.Pos) >= n {
			return decoder{}, 0, fmt.Errorf("%w: no command %d in a batch of %d", ErrMalformed, l.Pos, n)
		}
		for range l.Pos {
			if err := d.skipCommand(); err != nil {
				return decoder{}, 0, err
			}
		}
		return d, int(n), nil
	default:
		return decoder{}, 0, fmt.Errorf("%w: record kind %d", ErrMalformed, rec[1])
	}
}

// skipCommand moves past one command without building it.
func (d *decoder) skipCommand() error {
	var c Command
	if err := d.head(&c); err != nil {
		return err
	}
	n, err := d.argCount()
	if err != nil {
		return err
	}
	for range n {
		if _, err := d.bytes(); err != nil {
			return err
		}
	}
	return nil
}
