package wire

import (
	"encoding/binary"
	"fmt"
)

// checkMsgpack walks the MessagePack value at the start of b and fails
// where it claims more than b holds: a string, binary or extension longer
// than the bytes left, or an array or map with more elements than bytes
// left (each element takes at least one). Trailing bytes are not looked
// at, as a decoder reading one value does not. It allocates nothing and
// costs a fraction of the library's Skip, which checked the same.
func checkMsgpack(b []byte) error {
	_, err := walkValue(b, 0)
	return err
}

// walkValue walks the value at b[pos:] as checkMsgpack describes and
// returns where it ends.
func walkValue(b []byte, pos int) (int, error) {
	pending := 1 // values still to read
	for pending > 0 {
		if pos >= len(b) {
			return 0, fmt.Errorf("msgpack: body truncated at byte %d", pos)
		}
		pending--
		c := b[pos]
		pos++
		var size, items int // bytes to skip; elements to read
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
			// fixint, nil, bool: the code is the value
		case c <= 0x8f: // fixmap
			items = 2 * int(c&0x0f)
		case c <= 0x9f: // fixarray
			items = int(c & 0x0f)
		case c <= 0xbf: // fixstr
			size = int(c & 0x1f)
		default:
			n, width, ok := lengthOf(c, b[pos:])
			if !ok {
				return 0, fmt.Errorf("msgpack: invalid or truncated code 0x%02x at byte %d", c, pos-1)
			}
			pos += width
			switch c {
			case 0xdc, 0xdd: // array16/32
				items = n
			case 0xde, 0xdf: // map16/32
				items = 2 * n
			default:
				size = n
			}
		}
		if size > len(b)-pos {
			return 0, fmt.Errorf("msgpack: value at byte %d claims %d bytes, %d left", pos, size, len(b)-pos)
		}
		pos += size
		// Every value still to read takes a byte at least.
		if pending += items; pending > len(b)-pos {
			return 0, fmt.Errorf("msgpack: container before byte %d claims %d more values than the %d bytes left hold", pos, pending, len(b)-pos)
		}
	}
	return pos, nil
}

// lengthOf reads what a code in 0xc4..0xdf says of its value from the
// bytes after the code: n (bytes to skip, or elements) and how many bytes
// that length took. Fixed-size codes return their payload size with width
// 0. ok is false for 0xc1 and for a length cut off.
func lengthOf(c byte, rest []byte) (n, width int, ok bool) {
	switch c {
	case 0xc4, 0xc7, 0xd9: // bin8, ext8, str8
		width = 1
	case 0xc5, 0xc8, 0xda, 0xdc, 0xde: // bin16, ext16, str16, array16, map16
		width = 2
	case 0xc6, 0xc9, 0xdb, 0xdd, 0xdf: // bin32, ext32, str32, array32, map32
		width = 4
	case 0xcc, 0xd0: // uint8, int8
		return 1, 0, true
	case 0xcd, 0xd1: // uint16, int16
		return 2, 0, true
	case 0xca, 0xce, 0xd2: // float32, uint32, int32
		return 4, 0, true
	case 0xcb, 0xcf, 0xd3: // float64, uint64, int64
		return 8, 0, true
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16: type, data
		return 1 + 1<<(c-0xd4), 0, true
	default: // 0xc1: never used
		return 0, 0, false
	}
	if len(rest) < width {
		return 0, 0, false
	}
	switch width {
	case 1:
		n = int(rest[0])
	case 2:
		n = int(binary.BigEndian.Uint16(rest))
	default:
		n = int(binary.BigEndian.Uint32(rest))
	}
	if c >= 0xc7 && c <= 0xc9 { // an extension's type byte follows its length
		n++
	}
	return n, width, true
}
