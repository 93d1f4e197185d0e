package topology

import (
	"encoding"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	_ encoding.BinaryMarshaler = (*Ring)(nil)
	_ encoding.BinaryAppender  = (*Ring)(nil)
)

// seal appends the checksum to an encoding body.
func seal(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
}

// body builds an encoding body: the header, then each field as a uvarint
// (uint64 or int), raw bytes (string) or a single byte (byte).
func body(fields ...any) []byte {
	b := []byte("MCRG\x01")
	for _, f := range fields {
		switch f := f.(type) {
		case int:
			b = binary.AppendUvarint(b, uint64(f))
		case uint64:
			b = binary.AppendUvarint(b, f)
		case string:
			b = append(b, f...)
		case byte:
			b = append(b, f)
		default:
			panic(f)
		}
	}
	return b
}

// The encoding is a wire format: this literal must keep decoding to the
// same ring, and that ring must keep encoding to it.
func TestEncodingIsPinned(t *testing.T) {
	const pinned = "4d43524701a00104016101027a3100016202027a3200016301027a3300016401027a3100afad39d4"
	want, err := hex.DecodeString(pinned)
	require.NoError(t, err)
	got, err := pinnedRing(t).MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, want, got)
	r, err := Decode(want)
	require.NoError(t, err)
	require.Equal(t, pinnedRing(t).Nodes(), r.Nodes())
	require.Equal(t, body(160, 4, 1, "a", 1, 2, "z1", byte(0), 1, "b", 2, 2, "z2", byte(0),
		1, "c", 1, 2, "z3", byte(0), 1, "d", 1, 2, "z1", byte(0)), want[:len(want)-4])
}

func TestEncodingRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		nodes []Node
	}{
		{"empty", Options{}, nil},
		{"one node", Options{}, []Node{{ID: "a", Weight: 1}}},
		{"mixed", Options{PointsPerWeight: 3}, []Node{
			{ID: "node-b", Weight: 300, Domain: "rack/2", State: Down},
			{ID: "node-a", Weight: 1, Domain: "rack/1"},
			{ID: "\xff\x00binary", Weight: MaxWeight / 8},
		}},
		{"many", Options{}, uniform(64, 5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(tt.opts, tt.nodes...)
			require.NoError(t, err)
			b, err := r.MarshalBinary()
			require.NoError(t, err)
			got, err := Decode(b)
			require.NoError(t, err)
			require.Equal(t, r.Nodes(), got.Nodes())
			require.Equal(t, r.Options(), got.Options())
			require.Equal(t, r.hashes, got.hashes)
			again, err := got.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, b, again)

			prefixed, err := r.AppendBinary([]byte("prefix"))
			require.NoError(t, err)
			require.Equal(t, append([]byte("prefix"), b...), prefixed)
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	valid, err := pinnedRing(t).MarshalBinary()
	require.NoError(t, err)
	badSum := append([]byte(nil), valid...)
	badSum[len(badSum)-1] ^= 1
	flipped := append([]byte(nil), valid...)
	flipped[10] ^= 0x40
	badMagic := append([]byte("MCRX"), valid[4:len(valid)-4]...)
	badVersion := append([]byte("MCRG\x02"), valid[5:len(valid)-4]...)

	tests := []struct {
		name  string
		input []byte
		want  error
	}{
		{"nil", nil, nil},
		{"too short", valid[:9], nil},
		{"bad magic", seal(badMagic), nil},
		{"bad version", seal(badVersion), nil},
		{"bad checksum", badSum, nil},
		{"flipped bit", flipped, nil},
		{"truncated", seal(valid[:len(valid)-6]), nil},
		{"trailing bytes", seal(append(append([]byte(nil), valid[:len(valid)-4]...), 0)), nil},
		{"points per weight 0", seal(body(0, 0)), nil},
		{"points per weight too large", seal(body(MaxPointsPerWeight+1, 0)), nil},
		{"node count beyond data", seal(body(160, 2, 1, "a", 1, 0, byte(0))), nil},
		{"huge node count", seal(body(160, uint64(1)<<62)), nil},
		{"ID length beyond data", seal(body(160, 1, 9, "a", 1, 0, byte(0))), nil},
		{"empty ID", seal(body(160, 1, 0, 1, 0, byte(0), 0)), nil},
		{"IDs out of order", seal(body(160, 2, 1, "b", 1, 0, byte(0), 1, "a", 1, 0, byte(0))), nil},
		{"repeated ID", seal(body(160, 2, 1, "a", 1, 0, byte(0), 1, "a", 1, 0, byte(0))), nil},
		{"weight 0", seal(body(160, 1, 1, "a", 0, 0, byte(0))), nil},
		{"weight too large", seal(body(160, 1, 1, "a", MaxWeight+1, 0, byte(0))), nil},
		{"bad state", seal(body(160, 1, 1, "a", 1, 0, byte(2))), nil},
		{"missing state", seal(body(160, 1, 1, "a", 1, 1, "z")), nil},
		{"non-minimal varint", seal(body(160, 1, 1, "a", byte(0x81), byte(0x00), 0, byte(0))), nil},
		{"bad varint", seal(body(160, 1, 1, "a", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 0, byte(0))), nil},
		{"too many points", seal(body(MaxPointsPerWeight, 2, 1, "a", 40, 0, byte(0), 1, "b", 40, 0, byte(0))), ErrTooManyPoints},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Decode(tt.input)
			require.ErrorIs(t, err, ErrMalformed)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
			}
			require.Nil(t, r)
		})
	}
}
