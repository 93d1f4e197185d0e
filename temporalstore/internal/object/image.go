package object

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// ErrImage is returned by Decode for bytes that are not an object Append
// wrote.
var ErrImage = errors.New("object: malformed image")

// Append appends o's encoding to dst:
//
//	kind byte | expiry varint | key | count uvarint | elements
//
// where bytes are uvarint-length-prefixed, and an element is a field and a
// value (hash), a member (set), a member and a float64's bits, little
// endian (sorted set), a value (list, head first), a timestamp varint
// and a value (series, oldest first), or a tagged control element (see
// control.go; the count is of elements). Hash and set elements
// are written in sorted order, so an image is a function of the contents.
func Append(dst []byte, o *Object) []byte {
	dst = append(dst, byte(o.Kind))
	dst = binary.AppendVarint(dst, o.Expiry)
	dst = appendBytes(dst, o.Key)
	if o.Kind == KindControl {
		dst = binary.AppendUvarint(dst, uint64(o.Control.elements()))
		return o.Control.appendImage(dst)
	}
	dst = binary.AppendUvarint(dst, uint64(o.Len()))
	switch o.Kind {
	case KindHash:
		for _, f := range slices.Sorted(maps.Keys(o.Hash)) {
			dst = appendBytes(appendBytes(dst, []byte(f)), o.Hash[f])
		}
	case KindSet:
		for _, m := range slices.Sorted(maps.Keys(o.Set)) {
			dst = appendBytes(dst, []byte(m))
		}
	case KindZSet:
		o.ZSet.All(func(m string, s float64) bool {
			dst = appendBytes(dst, []byte(m))
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(s))
			return true
		})
	case KindList:
		for i := range o.List.Len() {
			dst = appendBytes(dst, o.List.Index(i))
		}
	case KindSeries:
		for i := range o.Series.Len() {
			ts, v := o.Series.At(i)
			dst = appendBytes(binary.AppendVarint(dst, ts), v)
		}
	}
	return dst
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// Decode decodes one object from the front of b and returns it and the
// bytes after it. Everything it returns is copied out of b.
func Decode(b []byte) (*Object, []byte, error) {
	d := decoder{b: b}
	if len(b) == 0 {
		return nil, nil, fmt.Errorf("%w: empty", ErrImage)
	}
	k := Kind(b[0])
	d.off = 1
	if k < KindHash || k > KindControl {
		return nil, nil, fmt.Errorf("%w: kind %d", ErrImage, b[0])
	}
	exp, err := d.varint()
	if err != nil {
		return nil, nil, err
	}
	if exp < 0 {
		return nil, nil, fmt.Errorf("%w: expiry %d", ErrImage, exp)
	}
	key, err := d.bytes()
	if err != nil {
		return nil, nil, err
	}
	if len(key) == 0 {
		return nil, nil, fmt.Errorf("%w: empty key", ErrImage)
	}
	n, err := d.uvarint()
	if err != nil {
		return nil, nil, err
	}
	// Every element takes at least one byte: a bound before allocating.
	if n == 0 || n > uint64(len(b)-d.off) {
		return nil, nil, fmt.Errorf("%w: %d elements in %d bytes", ErrImage, n, len(b)-d.off)
	}
	o := New(k, key)
	o.Expiry = exp
	if k == KindControl {
		for range n {
			if err := o.Control.decodeElement(&d); err != nil {
				return nil, nil, err
			}
		}
		if o.Len() == 0 {
			return nil, nil, fmt.Errorf("%w: empty control state", ErrImage)
		}
		return o, b[d.off:], nil
	}
	for range n {
		if k == KindSeries {
			ts, err := d.varint()
			if err != nil {
				return nil, nil, err
			}
			v, err := d.bytes()
			if err != nil {
				return nil, nil, err
			}
			if l := o.Series.Len(); l > 0 {
				if last, _ := o.Series.At(l - 1); ts <= last {
					return nil, nil, fmt.Errorf("%w: series timestamps out of order", ErrImage)
				}
			}
			o.Series.Upsert(ts, v)
			continue
		}
		a, err := d.bytes()
		if err != nil {
			return nil, nil, err
		}
		switch k {
		case KindHash:
			v, err := d.bytes()
			if err != nil {
				return nil, nil, err
			}
			o.HSet(string(a), clone(v))
		case KindSet:
			o.SAdd(string(a))
		case KindZSet:
			if len(b)-d.off < 8 {
				return nil, nil, fmt.Errorf("%w: truncated score", ErrImage)
			}
			s := math.Float64frombits(binary.LittleEndian.Uint64(b[d.off:]))
			d.off += 8
			if math.IsNaN(s) {
				return nil, nil, fmt.Errorf("%w: NaN score", ErrImage)
			}
			o.ZSet.Add(string(a), s)
		case KindList:
			o.List.PushBack(clone(a))
		}
	}
	if o.Len() != int(n) {
		return nil, nil, fmt.Errorf("%w: duplicate elements", ErrImage)
	}
	return o, b[d.off:], nil
}

func clone(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }

type decoder struct {
	b   []byte
	off int
}

func (d *decoder) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: bad varint at offset %d", ErrImage, d.off)
	}
	d.off += n
	return v, nil
}

func (d *decoder) varint() (int64, error) {
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: bad varint at offset %d", ErrImage, d.off)
	}
	d.off += n
	return v, nil
}

func (d *decoder) bytes() ([]byte, error) {
	n, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(d.b)-d.off) {
		return nil, fmt.Errorf("%w: %d bytes wanted at offset %d", ErrImage, n, d.off)
	}
	at := d.off
	d.off += int(n)
	return d.b[at:d.off], nil
}

// Clone returns a copy of o that shares nothing with it that either
// could change: a series copies its point arrays and shares its values'
// bytes (stored values are never written; see Series.clone), any other
// kind goes through its image. An object with no elements has no image
// and is refused.
func (o *Object) Clone() (*Object, error) {
	switch o.Kind {
	case KindSeries:
		return &Object{Key: clone(o.Key), Kind: o.Kind, Expiry: o.Expiry, Ver: o.Ver, Series: o.Series.clone()}, nil
	case KindControl:
		// A hot counter repeated in a combined batch is copied for it:
		// directly, at a fraction of an image's encoding and decoding.
		return &Object{Key: clone(o.Key), Kind: o.Kind, Expiry: o.Expiry, Ver: o.Ver, Control: o.Control.clone()}, nil
	}
	c, _, err := Decode(Append(nil, o))
	if err != nil {
		return nil, err
	}
	c.Ver = o.Ver
	return c, nil
}

// CloneBytes is about how many bytes Clone copies.
func (o *Object) CloneBytes() int64 {
	if o.Kind == KindSeries {
		return int64(o.Series.Len()) * seriesOverhead
	}
	return o.Size()
}
