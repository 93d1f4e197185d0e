package blockfmt

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var zstdOpts = Options{Compression: CompressionZstd, MinCompressBytes: 64}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	compressible := bytes.Repeat([]byte("temporalstore "), 100)
	random := make([]byte, 2000)
	for i := range random {
		random[i] = byte(rand.New(rand.NewPCG(3, uint64(i))).Uint32())
	}
	tests := []struct {
		name           string
		block          Block
		opts           Options
		wantCompressed bool
	}{
		{"empty value", NewBlock(testStringKey(1, "k"), nil), Options{}, false},
		{"small", NewBlock(testHashKey(2, "h", "f"), []byte("v")), zstdOpts, false},
		{"below min compress", NewBlock(testStringKey(1, "k"), compressible[:63]), zstdOpts, false},
		{"compressed", NewBlock(testPageKey(9, 1, 0, 4096), compressible), zstdOpts, true},
		{"compression off", NewBlock(testPageKey(9, 1, 0, 4096), compressible), Options{}, false},
		{"incompressible", NewBlock(testStringKey(1, "rand"), random), zstdOpts, false},
		{"default min compress", NewBlock(testStringKey(1, "k"), compressible[:DefaultMinCompressBytes]), Options{Compression: CompressionZstd}, true},
		{"ttl and kind", Block{Key: Key{1<<64 - 1, "r\x00", "oplog", ""}, Kind: KindOplog, Hotness: 255, ExpiresAt: -1, Value: []byte{0}}, Options{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("prefix")
			enc, err := Encode(bytes.Clone(prefix), tt.block, tt.opts)
			require.NoError(t, err)
			require.Equal(t, prefix, enc[:len(prefix)], "Encode appends")
			enc = enc[len(prefix):]

			h, err := DecodeHeader(enc)
			require.NoError(t, err)
			require.Equal(t, tt.wantCompressed, h.Compressed)
			require.Equal(t, tt.block.Key, h.Key)
			require.Equal(t, len(tt.block.Value), h.ValueLen)

			got, err := Decode(enc)
			require.NoError(t, err)
			require.Equal(t, tt.block, got)
			if len(got.Value) > 0 {
				enc[len(enc)-1] ^= 0xff // the decoded value must not alias the input
				require.Equal(t, tt.block.Value, got.Value)
			}
		})
	}
}

func TestEncodeRejects(t *testing.T) {
	_, err := Encode(nil, Block{Value: make([]byte, MaxValueLen+1)}, Options{})
	require.ErrorIs(t, err, ErrTooLarge)
	_, err = Encode(nil, Block{Key: Key{Selector: strings.Repeat("s", MaxKeyFieldLen+1)}}, Options{})
	require.ErrorIs(t, err, ErrTooLarge)
	_, err = Encode(nil, Block{Kind: maxKind + 1}, Options{})
	require.ErrorIs(t, err, ErrInvalidOptions)
	_, err = Encode(nil, Block{}, Options{Compression: 7})
	require.ErrorIs(t, err, ErrInvalidOptions)
	_, err = Encode(nil, Block{}, Options{MinCompressBytes: -1})
	require.ErrorIs(t, err, ErrInvalidOptions)
	require.NoError(t, Options{}.Validate())
	require.Equal(t, "zstd", CompressionZstd.String())
}

// TestTornBlocksNeverDecode checks every truncation, every extension and
// every single-bit flip of encoded blocks: each must fail, none may decode
// to a different block.
func TestTornBlocksNeverDecode(t *testing.T) {
	blocks := []struct {
		b    Block
		opts Options
	}{
		{NewBlock(testStringKey(1, "k"), []byte("hello world")), Options{}},
		{NewBlock(testPageKey(3, 4, 0, 4096), bytes.Repeat([]byte("abcd"), 200)), zstdOpts},
	}
	for _, tc := range blocks {
		enc, err := Encode(nil, tc.b, tc.opts)
		require.NoError(t, err)
		for n := range len(enc) {
			_, err := Decode(enc[:n])
			require.ErrorIs(t, err, ErrCorrupt, "truncated to %d of %d", n, len(enc))
		}
		_, err = Decode(append(bytes.Clone(enc), 0))
		require.ErrorIs(t, err, ErrCorrupt, "trailing byte")
		for bit := range len(enc) * 8 {
			damaged := bytes.Clone(enc)
			damaged[bit/8] ^= 1 << (bit % 8)
			got, err := Decode(damaged)
			require.Error(t, err, "bit %d flipped decoded to %+v", bit, got)
			if bit/8 != 4 { // the version byte may read as "newer"
				require.ErrorIs(t, err, ErrCorrupt, "bit %d", bit)
			}
		}
	}
}

// reseal recomputes the CRC so a test can forge a header that passes it.
func reseal(b []byte) []byte {
	crc := crc32.Update(0, castagnoli, b[:44])
	crc = crc32.Update(crc, castagnoli, b[HeaderLen:])
	binary.LittleEndian.PutUint32(b[44:48], crc)
	return b
}

func TestDecodeVersionsAndForgedHeaders(t *testing.T) {
	enc, err := Encode(nil, NewBlock(testStringKey(1, "k"), bytes.Repeat([]byte("x"), 1000)), zstdOpts)
	require.NoError(t, err)
	tests := []struct {
		name  string
		edit  func(b []byte)
		want  error
		reCRC bool
	}{
		{"newer version", func(b []byte) { b[4] = Version + 1 }, ErrUnsupportedVersion, true},
		{"version zero", func(b []byte) { b[4] = 0 }, ErrCorrupt, true},
		{"bad magic", func(b []byte) { b[0] = 'X' }, ErrCorrupt, true},
		{"unknown flag", func(b []byte) { b[5] |= 0x80 }, ErrCorrupt, true},
		{"unknown kind", func(b []byte) { b[6] = 200 }, ErrCorrupt, true},
		{"huge declared value", func(b []byte) { binary.LittleEndian.PutUint32(b[40:44], 1<<31) }, ErrCorrupt, true},
		{"declared value too short", func(b []byte) { binary.LittleEndian.PutUint32(b[40:44], 999) }, ErrCorrupt, true},
		{"declared value too long", func(b []byte) { binary.LittleEndian.PutUint32(b[40:44], 1001) }, ErrCorrupt, true},
		{"uncompressed but lengths differ", func(b []byte) { b[5] = 0 }, ErrCorrupt, true},
		{"key length past the end", func(b []byte) { binary.LittleEndian.PutUint32(b[24:28], 1<<32-1) }, ErrCorrupt, true},
		{"bad zstd payload", func(b []byte) { b[len(b)-3] ^= 0x55 }, ErrCorrupt, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bytes.Clone(enc)
			tt.edit(b)
			if tt.reCRC {
				reseal(b)
			}
			_, err := Decode(b)
			require.ErrorIs(t, err, tt.want)
		})
	}
}

func TestRoundTripProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 2000 {
		k := randomKey(r)
		var v []byte
		if n := r.IntN(3000); n > 0 {
			v = make([]byte, n)
		}
		if r.IntN(2) == 0 {
			for j := range v {
				v[j] = byte(r.Uint32())
			}
		} else {
			for j := range v {
				v[j] = byte(j / 100)
			}
		}
		b := Block{Key: k, Kind: Kind(r.IntN(int(maxKind) + 1)), Hotness: uint8(r.Uint32()), ExpiresAt: r.Int64() - r.Int64(), Value: v}
		opts := Options{Compression: Compression(r.IntN(2)), MinCompressBytes: r.IntN(1000)}
		enc, err := Encode(nil, b, opts)
		require.NoError(t, err)
		got, err := Decode(enc)
		require.NoError(t, err, "case %d", i)
		require.Equal(t, b, got, "case %d", i)
	}
}

func TestExpired(t *testing.T) {
	require.False(t, Block{}.Expired(1<<62))
	require.True(t, Block{ExpiresAt: 10}.Expired(10))
	require.False(t, Block{ExpiresAt: 11}.Expired(10))
	require.True(t, Header{ExpiresAt: 5}.Expired(10))
}
