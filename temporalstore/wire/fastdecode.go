package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
)

// A direct MessagePack decoder of /execute and /batch_execute bodies. The
// library decoder copies every key and value into an allocation of its
// own and runs through much code; on a server that idles between
// requests, each request runs with cold caches, and that cost (not the
// instructions) made most of a small batch's time. This one reads the
// body in place: keys and values alias it (the engine copies what it
// keeps, and a body is never reused). It takes the shapes clients send;
// a field it does not know goes to the library on its own, and anything
// else (a struct sent as an array, a value of an unexpected type) sends
// the whole body to the library, so both decoders agree on every input
// (FuzzFastDecode).

// errSlow sends a body to the library decoder.
var errSlow = errors.New("wire: not a fast shape")

// kindNames interns the known kind names, so a command's Kind costs no
// allocation.
var kindNames = func() map[string]string {
	m := map[string]string{}
	for k := range nativeShapes {
		m[string(k)] = string(k)
	}
	for k := range originalKinds {
		m[k] = k
	}
	return m
}()

// reader is a cursor over a body checkMsgpack has walked, so no length
// read here runs past the end (each read still checks, cheaply).
type reader struct {
	b   []byte
	pos int
}

func (r *reader) code() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, errSlow
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

// length reads the width-byte big-endian length after a code.
func (r *reader) length(width int) (int, error) {
	if len(r.b)-r.pos < width {
		return 0, errSlow
	}
	var n int
	switch width {
	case 1:
		n = int(r.b[r.pos])
	case 2:
		n = int(binary.BigEndian.Uint16(r.b[r.pos:]))
	default:
		n = int(binary.BigEndian.Uint32(r.b[r.pos:]))
	}
	r.pos += width
	return n, nil
}

// mapLen reads a map header: its pairs, or -1 for nil.
func (r *reader) mapLen() (int, error) { return r.header(0x80, 0xde, 0xdf) }

// arrayLen reads an array header: its elements, or -1 for nil.
func (r *reader) arrayLen() (int, error) { return r.header(0x90, 0xdc, 0xdd) }

// header reads a container header whose fixed form starts at fix and
// whose 16- and 32-bit forms are c16 and c32.
func (r *reader) header(fix, c16, c32 byte) (int, error) {
	c, err := r.code()
	switch {
	case err != nil:
		return 0, err
	case c == 0xc0:
		return -1, nil
	case c >= fix && c <= fix+0x0f:
		return int(c & 0x0f), nil
	case c == c16:
		return r.length(2)
	case c == c32:
		return r.length(4)
	}
	return 0, errSlow
}

// raw reads a str or bin in place (the library's DecodeString and
// DecodeBytes take either); nil for a nil, isStr for a str.
func (r *reader) raw() (b []byte, isStr bool, err error) {
	c, err := r.code()
	if err != nil {
		return nil, false, err
	}
	var n int
	switch {
	case c == 0xc0:
		return nil, false, nil
	case c >= 0xa0 && c <= 0xbf:
		n, isStr = int(c&0x1f), true
	case c == 0xd9 || c == 0xc4:
		n, err = r.length(1)
	case c == 0xda || c == 0xc5:
		n, err = r.length(2)
	case c == 0xdb || c == 0xc6:
		n, err = r.length(4)
	default:
		return nil, false, errSlow
	}
	isStr = isStr || c >= 0xd9 && c <= 0xdb
	if err != nil || n > len(r.b)-r.pos {
		return nil, false, errSlow
	}
	b = r.b[r.pos : r.pos+n : r.pos+n]
	r.pos += n
	return b, isStr, nil
}

// str reads a string field (nil is "").
func (r *reader) str() (string, error) {
	b, _, err := r.raw()
	return string(b), err
}

// int64 reads an integer as the library's DecodeInt64 does (nil is 0);
// a float goes to the library.
func (r *reader) int64() (int64, error) {
	c, err := r.code()
	if err != nil {
		return 0, err
	}
	if c <= 0x7f || c >= 0xe0 {
		return int64(int8(c)), nil
	}
	var w int
	switch c {
	case 0xc0:
		return 0, nil
	case 0xcc, 0xd0:
		w = 1
	case 0xcd, 0xd1:
		w = 2
	case 0xce, 0xd2:
		w = 4
	case 0xcf, 0xd3:
		w = 8
	default:
		return 0, errSlow
	}
	if len(r.b)-r.pos < w {
		return 0, errSlow
	}
	p := r.b[r.pos:]
	r.pos += w
	switch c {
	case 0xcc:
		return int64(p[0]), nil
	case 0xd0:
		return int64(int8(p[0])), nil
	case 0xcd:
		return int64(binary.BigEndian.Uint16(p)), nil
	case 0xd1:
		return int64(int16(binary.BigEndian.Uint16(p))), nil
	case 0xce:
		return int64(binary.BigEndian.Uint32(p)), nil
	case 0xd2:
		return int64(int32(binary.BigEndian.Uint32(p))), nil
	}
	return int64(binary.BigEndian.Uint64(p)), nil
}

// skip passes over one value.
func (r *reader) skip() error {
	end, err := walkValue(r.b, r.pos)
	if err != nil {
		return errSlow
	}
	r.pos = end
	return nil
}

// text reads a Text: a str or bin in place, nil for nil.
func (r *reader) text() (Text, error) {
	b, _, err := r.raw()
	return Text(b), err
}

// bytesValue reads a Bytes: a bin in place, a str as base64, nil for nil.
func (r *reader) bytesValue() (Bytes, error) {
	b, isStr, err := r.raw()
	if err != nil || b == nil || !isStr {
		return Bytes(b), err
	}
	v, err := decodeBase64(string(b))
	if err != nil {
		return nil, errSlow // the library says what is wrong with it
	}
	return v, nil
}

// list reads an array with one read per element; nil for nil and for an
// empty array, as the library has it.
func list[T any](r *reader, one func() (T, error)) ([]T, error) {
	n, err := r.arrayLen()
	if err != nil || n <= 0 {
		return nil, err
	}
	if n > len(r.b)-r.pos {
		return nil, errSlow
	}
	out := make([]T, n)
	for i := range out {
		if out[i], err = one(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// field decodes the value at the cursor into the field of v (a struct's
// address) named by its wire name through the library, as its decoder
// would; an unknown name is skipped.
func (r *reader) field(v reflect.Value, fields map[string][]int, name []byte) error {
	start := r.pos
	if err := r.skip(); err != nil {
		return err
	}
	idx, ok := fields[string(name)]
	if !ok {
		return nil
	}
	d := msgpack.NewDecoder(bytes.NewReader(r.b[start:r.pos]))
	d.SetCustomStructTag("json")
	if err := d.DecodeValue(v.Elem().FieldByIndex(idx)); err != nil {
		return errSlow
	}
	return nil
}

// fields reads a map whose names each go to one (nil leaves the struct).
func (r *reader) fields(one func(name []byte) error) error {
	n, err := r.mapLen()
	if err != nil {
		return err
	}
	for range max(n, 0) {
		name, _, err := r.raw()
		if err != nil {
			return err
		}
		if err := one(name); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) command(c *Command) error {
	return r.fields(func(name []byte) error {
		var err error
		switch string(name) {
		case "kind":
			var b []byte
			if b, _, err = r.raw(); err == nil {
				k, ok := kindNames[string(b)]
				if !ok {
					k = string(b)
				}
				c.Kind = k
			}
		case "key":
			c.Key, err = r.text()
		case "value":
			c.Value, err = r.bytesValue()
		case "field":
			c.Field, err = r.text()
		case "args":
			c.Args, err = list(r, r.bytesValue)
		case "keys":
			c.Keys, err = list(r, r.text)
		case "fields":
			c.Fields, err = list(r, r.text)
		case "ts_field":
			c.TSField, err = r.str()
		case "ts_format":
			c.TSFormat, err = r.str()
		case "suffix":
			c.Suffix, err = r.bytesValue()
		case "rows":
			c.Rows, err = list(r, r.row)
		default:
			err = r.field(reflect.ValueOf(c), commandFields, name)
		}
		return err
	})
}

func (r *reader) row() (Row, error) {
	var w Row
	err := r.fields(func(name []byte) error {
		var err error
		switch string(name) {
		case "key":
			w.Key, err = r.text()
		case "args":
			w.Args, err = list(r, r.bytesValue)
		case "event_time_ns":
			w.EventTimeNs, err = r.int64()
		case "event_time_ms":
			w.EventTimeMs, err = r.int64()
		default:
			err = r.field(reflect.ValueOf(&w), rowFields, name)
		}
		return err
	})
	return w, err
}

// commands reads the command array into out[:0]'s backing array.
func (r *reader) commands(out []Command) ([]Command, error) {
	n, err := r.arrayLen()
	if err != nil || n < 0 {
		return nil, err
	}
	if n > len(r.b)-r.pos {
		return nil, errSlow
	}
	if out = out[:0]; cap(out) < n {
		out = make([]Command, 0, n)
	}
	for i := range n {
		out = append(out, Command{})
		if err := r.command(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// address reads a request's field other than its command(s): the table's
// address, or through the library.
func (r *reader) address(name []byte, ns, table, tenant *string, v reflect.Value, fields map[string][]int) error {
	var err error
	switch string(name) {
	case "namespace":
		*ns, err = r.str()
	case "table_name":
		*table, err = r.str()
	case "tenant":
		*tenant, err = r.str()
	default:
		err = r.field(v, fields, name)
	}
	return err
}

// decodeFast decodes a BatchRequest or a Request from body, which
// checkMsgpack has passed; errSlow when the library should, v then being
// partly written. A nil body goes to the library, which zeroes v.
func decodeFast(body []byte, v any) error {
	if len(body) == 0 || body[0] == 0xc0 {
		return errSlow
	}
	r := &reader{b: body}
	switch v := v.(type) {
	case *BatchRequest:
		return r.fields(func(name []byte) error {
			if string(name) == "commands" {
				// Commands' backing array is reused when a caller left
				// one (Reset).
				var err error
				v.Commands, err = r.commands(v.Commands)
				return err
			}
			return r.address(name, &v.Namespace, &v.TableName, &v.Tenant, reflect.ValueOf(v), batchFields)
		})
	case *Request:
		return r.fields(func(name []byte) error {
			if string(name) != "command" {
				return r.address(name, &v.Namespace, &v.TableName, &v.Tenant, reflect.ValueOf(v), requestFields)
			}
			c, err := r.code()
			if err != nil {
				return err
			}
			if c == 0xc0 {
				v.Command = nil
				return nil
			}
			r.pos--
			if v.Command == nil { // a repeated name decodes into the first, as the library does
				v.Command = &Command{}
			}
			return r.command(v.Command)
		})
	}
	return errSlow
}
