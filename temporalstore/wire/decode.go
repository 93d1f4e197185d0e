package wire

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// MessagePack decoding of requests. The library's reflective walk of
// Command (some eighty fields) cost about 6 µs a command, most of a batch
// of reads' server time; these decoders take the fields every request
// uses directly and hand the rest to the library, field by field, so both
// paths read the same names (the json tags, as Decode sets).

// fieldIndex maps a struct's wire names (json tags) to field indexes.
func fieldIndex(t reflect.Type) map[string][]int {
	m := map[string][]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		m[name] = f.Index
	}
	return m
}

var (
	commandFields = fieldIndex(reflect.TypeFor[Command]())
	rowFields     = fieldIndex(reflect.TypeFor[Row]())
	batchFields   = fieldIndex(reflect.TypeFor[BatchRequest]())
	requestFields = fieldIndex(reflect.TypeFor[Request]())
)

// The request types without their decoders, for the library's own
// decoding of what is not a map (a struct sent as an array).
type (
	plainCommand Command
	plainRow     Row
	plainBatch   BatchRequest
)

// decodeMap reads a map of wire names into v (a struct's address), giving
// each name to fast first; a name fast does not take goes to the field of
// that name through the library, and an unknown one is skipped. A nil map
// leaves v as it is; anything else but a map goes to the library whole, as
// plain (v's address as its plain type).
func decodeMap(d *msgpack.Decoder, v reflect.Value, fields map[string][]int, plain any, fast func(string) (bool, error)) error {
	if code, err := d.PeekCode(); err == nil && !msgpcode.IsFixedMap(code) && code != msgpcode.Map16 && code != msgpcode.Map32 && code != msgpcode.Nil {
		return d.Decode(plain)
	}
	n, err := d.DecodeMapLen()
	if err != nil {
		return err
	}
	for range max(n, 0) {
		name, err := d.DecodeString()
		if err != nil {
			return err
		}
		took, err := fast(name)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if took {
			continue
		}
		idx, ok := fields[name]
		if !ok {
			if err := d.Skip(); err != nil {
				return err
			}
			continue
		}
		if err := d.DecodeValue(v.Elem().FieldByIndex(idx)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// decodeList reads an array (nil: a nil slice) with one decode per element,
// allocating ahead no more than maxPrealloc elements whatever it claims.
func decodeList[T any](d *msgpack.Decoder, one func(*T) error) ([]T, error) {
	return decodeListInto(d, nil, one)
}

// decodeListInto is decodeList appending to out[:0], whose backing array
// a caller may hand over for reuse.
func decodeListInto[T any](d *msgpack.Decoder, out []T, one func(*T) error) ([]T, error) {
	n, err := d.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, err
	}
	if out = out[:0]; cap(out) < n {
		out = make([]T, 0, min(n, maxPrealloc))
	}
	var zero T
	for i := range n {
		// In place: a Command is large, and a copy of each would cost
		// as much as decoding it.
		out = append(out, zero)
		if err := one(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func decodeTexts(d *msgpack.Decoder) ([]Text, error) {
	return decodeList(d, func(t *Text) error { return t.DecodeMsgpack(d) })
}

func decodeBytesList(d *msgpack.Decoder) ([]Bytes, error) {
	return decodeList(d, func(b *Bytes) error { return b.DecodeMsgpack(d) })
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (c *Command) DecodeMsgpack(d *msgpack.Decoder) error {
	return decodeMap(d, reflect.ValueOf(c), commandFields, (*plainCommand)(c), func(name string) (bool, error) {
		var err error
		switch name {
		case "kind":
			c.Kind, err = d.DecodeString()
		case "key":
			err = c.Key.DecodeMsgpack(d)
		case "value":
			err = c.Value.DecodeMsgpack(d)
		case "field":
			err = c.Field.DecodeMsgpack(d)
		case "args":
			c.Args, err = decodeBytesList(d)
		case "keys":
			c.Keys, err = decodeTexts(d)
		case "fields":
			c.Fields, err = decodeTexts(d)
		case "ts_field":
			c.TSField, err = d.DecodeString()
		case "ts_format":
			c.TSFormat, err = d.DecodeString()
		case "suffix":
			err = c.Suffix.DecodeMsgpack(d)
		case "rows":
			c.Rows, err = decodeList(d, func(r *Row) error { return r.DecodeMsgpack(d) })
		default:
			return false, nil
		}
		return true, err
	})
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (r *Row) DecodeMsgpack(d *msgpack.Decoder) error {
	return decodeMap(d, reflect.ValueOf(r), rowFields, (*plainRow)(r), func(name string) (bool, error) {
		var err error
		switch name {
		case "key":
			err = r.Key.DecodeMsgpack(d)
		case "args":
			r.Args, err = decodeBytesList(d)
		case "event_time_ns":
			r.EventTimeNs, err = d.DecodeInt64()
		case "event_time_ms":
			r.EventTimeMs, err = d.DecodeInt64()
		default:
			return false, nil
		}
		return true, err
	})
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (b *BatchRequest) DecodeMsgpack(d *msgpack.Decoder) error {
	return decodeMap(d, reflect.ValueOf(b), batchFields, (*plainBatch)(b), func(name string) (bool, error) {
		if name != "commands" {
			return false, nil
		}
		var err error
		// A nil command stays zero: decodeMap leaves a nil map's struct.
		// Commands' backing array is reused when a caller left one (Reset).
		b.Commands, err = decodeListInto(d, b.Commands, func(c *Command) error { return c.DecodeMsgpack(d) })
		return true, err
	})
}
